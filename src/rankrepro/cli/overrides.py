"""Overrides and names before anything runs: "did you mean" for config keys, experiments and
values; Hydra-style sweeps (``-m``) as grids; the checks made with the standard library only."""

from __future__ import annotations

import difflib
import functools
import re

from .errors import CliError


# ------------------------------------------------------------------------------------
# "did you mean": config keys, experiment names, known values
# ------------------------------------------------------------------------------------
def _paths(node, prefix: str = "") -> list[str]:
    from omegaconf import DictConfig

    out = []
    if isinstance(node, DictConfig):
        for k in node.keys():
            p = f"{prefix}{k}"
            out.append(p)
            try:
                child = node._get_node(k)
            except Exception:  # noqa: BLE001 - a node we cannot read is simply not suggested
                continue
            out += _paths(child, p + ".")
    return out


def did_you_mean(err, name: str, scale: str) -> str:
    """A hint for a ConfigError: the closest known key, experiment, or value."""
    key = getattr(err, "key", "")
    msg = str(err).split(f"at key '{key}': ", 1)[-1]  # the message after the experiment and key
    # a value from a known list: "unknown ... 'prnk' ... (known: ['mcp', 'prank', ...])"
    m = re.search(r"'([^']+)'[^(]*\(known: \[?([^)\]]*)", msg)
    if m:
        known = [k.strip().strip("'\"") for k in m.group(2).split(",")]
        close = difflib.get_close_matches(m.group(1), known, n=1, cutoff=0.6)
        if close:
            return close[0]
    if key == "experiment" or "no file config/experiment" in msg:
        from ..config_files import list_experiments

        close = difflib.get_close_matches(name, list_experiments(), n=1, cutoff=0.6)
        return close[0] if close else ""
    m = re.search(r"Could not find '(\w+)/([^']+)'", msg)
    if m:
        from ..config_files import find_config_dir

        names = [p.stem for p in (find_config_dir() / m.group(1)).glob("*.yaml")]
        close = difflib.get_close_matches(m.group(2), names, n=1, cutoff=0.6)
        return f"{m.group(1)}={close[0]}" if close else ""
    # a key that does not exist (OmegaConf: "Key 'x' not in 'Cfg'" / "Key 'x' is not in struct")
    if not key or key == "defaults" or not re.search(r"Key '[^']+' (is )?not in", msg):
        return ""
    try:
        known = known_keys(name, scale)
    except Exception:  # noqa: BLE001 - no suggestion rather than a second error
        return ""
    if key in known:
        return ""
    close = difflib.get_close_matches(key, known, n=1, cutoff=0.75)
    if close:
        return close[0]
    # a key given without its section (n_trails=3 for experiment.n_trials=3)
    leaf = key.rsplit(".", 1)[-1]
    by_leaf: dict[str, str] = {}
    for k in known:
        by_leaf.setdefault(k.rsplit(".", 1)[-1], k)
    close = difflib.get_close_matches(leaf, list(by_leaf), n=1, cutoff=0.75)
    if close:
        # keep what the user wrote up to the wrong part
        return by_leaf[close[0]]
    return ""


@functools.lru_cache(maxsize=8)
def known_keys(name: str, scale: str) -> list[str]:
    """Every dotted key of the experiment's config as composed without overrides; an
    algorithm's params and grid list all of its estimator's hyperparameters."""
    from ..pipeline.catalog import load_experiment

    exp = load_experiment(name, scale)
    keys = _paths(exp.cfg)
    from ..algorithms import ONLINE
    from ..algorithms.coactive import COACTIVE
    from ..algorithms.gp import GP
    from ..algorithms.rankers import LISTS, RANKERS

    families = {**ONLINE, **RANKERS, **LISTS, **COACTIVE, **GP}
    for akey, a in exp.cfg.algorithms.items():
        cls = families.get(a.estimator)
        if cls is None:
            continue
        for p in set(cls._param_names()) - {"n_ranks", "seed"}:
            keys += [f"algorithms.{akey}.params.{p}", f"algorithms.{akey}.grid.{p}"]
    return sorted(set(keys))


# ------------------------------------------------------------------------------------
# rankrepro run
# ------------------------------------------------------------------------------------
_KEY = r"[A-Za-z_][\w.@/\[\]-]*"
#: key=value, +key=value, ++key=value, and Hydra's deletion ~key (or ~key=value: only if it has that value)
_OVERRIDE = re.compile(rf"^(~{_KEY}(=.*)?|\+{{0,2}}{_KEY}=.*)$", re.S)
#: an algorithm's hyperparameter: what a sweep may vary within one experiment (as the algorithm's grid)
_PARAM = re.compile(r"^\+{0,2}algorithms\.([A-Za-z0-9_]+)\.params\.([A-Za-z_]\w*)$")


def is_sweep(value: str) -> bool:
    """Whether an override's value is a Hydra sweep: a comma outside brackets, braces and quotes
    (a,b), or choice(...), range(...), glob(...)."""
    if re.match(r"\s*(choice|range|glob)\(", value):
        return True
    depth, quote, escaped = 0, None, False
    for ch in value:
        if escaped:
            escaped = False
        elif ch == "\\":
            escaped = True
        elif quote:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch in "[{(":
            depth += 1
        elif ch in "]})":
            depth -= 1
        elif ch == "," and depth == 0:
            return True
    return False


def _sweep_refusal(o: str, multirun: bool) -> str:
    key, value = o.split("=", 1)
    m = _PARAM.match(key)
    if m is None:
        return (f"override '{o}' is a sweep (Hydra's multirun syntax), and '{key.lstrip('+')}' takes one value "
                f"per experiment: run once per value; only an algorithm's params sweep within one experiment, "
                f"as its grid (-m algorithms.<key>.params.<p>=a,b is ++algorithms.<key>.grid.<p>=[a,b]); "
                f"a value with a comma is quoted, {key}='a,b'")
    grid = f"++algorithms.{m.group(1)}.grid.{m.group(2)}=" + (
        f"[{value}]" if not re.match(r"\s*(choice|range|glob)\(", value) else "[...]")
    return (f"override '{o}' is a sweep (Hydra's multirun syntax): add -m to run its values as cells of this "
            f"experiment, or give the grid itself, '{grid}'")


def multirun_as_grid(overrides: list[str]) -> list[str]:
    """``-m``: each sweep of an algorithm's hyperparameter (``algorithms.<key>.params.<p>=a,b``,
    ``choice(a,b)``, ``range(1,4)``) becomes that algorithm's grid, ``algorithms.<key>.grid.<p>=[a,b]``:
    the sweep runs as cells of the one experiment (each cell's own fingerprint, table row and
    figure line), not as separate runs.  A sweep of any other key is refused with one line."""
    # an entry added on the command line is not Hydra's: its grid joins the entry ('+algorithms.<key>...')
    added = {m.group(1) for o in overrides if (m := re.match(r"^\+algorithms\.(\w+)(=|\._target_=)", o))}
    out = []
    for o in overrides:
        if o.startswith("~") or "=" not in o or not is_sweep(o.split("=", 1)[1]):
            out.append(o)
            continue
        m = _PARAM.match(o.split("=", 1)[0])
        if m is None:
            raise CliError(_sweep_refusal(o, multirun=True))
        from hydra.core.override_parser.overrides_parser import OverridesParser

        try:
            values = list(OverridesParser.create().parse_override(o).sweep_string_iterator())
        except Exception as e:  # noqa: BLE001 - Hydra's own words (e.g. glob needs a list of choices)
            raise CliError(f"override '{o}' cannot sweep: {str(e).splitlines()[0]}") from None
        plus = "+" if m.group(1) in added else "++"
        out.append(f"{plus}algorithms.{m.group(1)}.grid.{m.group(2)}=[{','.join(values)}]")
    return out


def precheck(name: str, overrides: list[str], scale: str) -> None:
    """The mistakes found without composing the config, with the standard library only (no
    Hydra, learners or numba imported): a malformed override, a sweep without -m, an unknown
    experiment or scale.  Raises :class:`CliError` worded as the catalog's ConfigError."""
    for o in overrides:
        if not _OVERRIDE.match(o):
            raise CliError(f"override '{o}' is not key=value, +key=value or ~key (e.g. experiment.n_trials=3)")
        if not o.startswith("~") and is_sweep(o.split("=", 1)[1]):
            raise CliError(_sweep_refusal(o, multirun=False))
    from ..config_files import find_config_dir, list_experiments, list_scales

    root = find_config_dir()
    known = list_experiments(root)
    if name not in known:
        close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
        raise CliError(f"config error in experiment '{name}' at key 'experiment': no file config/experiment/"
                       f"{name}.yaml (known: {', '.join(known)})" + (f"; did you mean '{close[0]}'?" if close else ""))
    scales = list_scales(root)
    if scale not in scales:
        close = difflib.get_close_matches(scale, scales, n=1, cutoff=0.6)
        raise CliError(f"config error in experiment '{name}' at key 'scale': unknown scale '{scale}' "
                       f"(known: {', '.join(scales)})" + (f"; did you mean '{close[0]}'?" if close else ""))


_HYDRA = re.compile(r"^\+{0,2}hydra\.([\w.]+)=(.*)$", re.S)


def hydra_settings(overrides: list[str], out: str | None) -> tuple[list[str], str | None]:
    """Hydra's own settings on the command line: ``hydra.run.dir=X`` (and ``hydra.sweep.dir``)
    is the output folder, as ``--out X``; any other ``hydra.*`` setting is refused in one line
    (rankrepro composes the configs with Hydra but is not a Hydra application: nothing reads
    them).  Returns the other overrides and the output folder."""
    rest = []
    for o in overrides:
        m = _HYDRA.match(o)
        if m is None:
            if o.lstrip("~+").startswith("hydra."):
                raise CliError(f"override '{o}': Hydra's own settings are not used here; the output folder is "
                               "--out DIR (or hydra.run.dir=DIR)")
            rest.append(o)
            continue
        if m.group(1) not in ("run.dir", "sweep.dir"):
            raise CliError(f"override '{o}': Hydra's own settings are not used here (rankrepro is not a Hydra "
                           "application); only hydra.run.dir=DIR is taken, as --out DIR")
        value = m.group(2).strip().strip("'\"")
        if not value:
            raise CliError(f"override '{o}': give a folder, hydra.run.dir=DIR (as --out DIR)")
        if out is not None and str(out) != value:
            raise CliError(f"override '{o}' and --out {out} name two output folders: give one")
        out = value
    return rest, out
