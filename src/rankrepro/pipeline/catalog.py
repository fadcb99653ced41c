"""The experiment catalog: compose each ``config/experiment/<paper>/<artefact>.yaml`` with
Hydra, validate it completely, and expand its sweep cells.

Everything that can be wrong with a config is found here, before any compute: unknown
keys and wrong types (the structured schema), out-of-range experiment sizes, unknown
algorithms, metrics, protocols, data-set builders or feature maps, and hyperparameters
outside an estimator's constraints.  Errors are :class:`ConfigError` naming the key.
"""

from __future__ import annotations

import copy
import hashlib
import inspect
import json
import itertools
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, ListConfig, OmegaConf, open_dict
from omegaconf.errors import OmegaConfBaseException

from ..algorithms import FEATURE_MAPS, REGISTRY, ParamError
from .schema import RootCfg

SCHEMA_NAME = "rankrepro_schema"


class ConfigError(ValueError):
    """A config that cannot run; ``key`` is the offending key (dotted path)."""

    def __init__(self, experiment: str, key: str, message: str):
        self.experiment = experiment
        self.key = key
        super().__init__(f"config error in experiment '{experiment}' at key '{key}': {message}")


def find_config_dir(start: str | os.PathLike | None = None) -> Path:
    """``$RANKREPRO_CONFIG_DIR``, else the nearest ``config/config.yaml`` above ``start``."""
    env = os.environ.get("RANKREPRO_CONFIG_DIR")
    if env:
        return Path(env).resolve()
    here = Path(start or Path.cwd()).resolve()
    for p in [here, *here.parents]:
        if (p / "config" / "config.yaml").is_file():
            return p / "config"
    raise FileNotFoundError("no config/config.yaml found above " + str(here) + "; set RANKREPRO_CONFIG_DIR")


def list_experiments(config_dir: str | os.PathLike | None = None) -> list[str]:
    """Every experiment as ``<paper>/<artefact>``, sorted."""
    root = Path(config_dir) if config_dir else find_config_dir()
    exp_dir = root / "experiment"
    return sorted(str(p.relative_to(exp_dir).with_suffix("")).replace(os.sep, "/")
                  for p in exp_dir.rglob("*.yaml") if not p.name.startswith("_"))


def list_scales(config_dir: str | os.PathLike | None = None) -> list[str]:
    root = Path(config_dir) if config_dir else find_config_dir()
    return sorted(p.stem for p in (root / "scale").glob("*.yaml"))


# -------------------------------------------------------------------------------------
# cells
# -------------------------------------------------------------------------------------
def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return repr(v)
    return str(v)


@dataclass(frozen=True)
class Cell:
    """One sweep cell: one algorithm with one hyperparameter setting on one artefact."""

    id: str
    algorithm: str  # key in ``algorithms``
    estimator: str  # registry name
    label: str
    params: dict[str, Any] = field(hash=False)  # fixed + swept hyperparameters
    swept: dict[str, Any] = field(hash=False)  # the swept ones only
    #: a sensitivity cell: the main cell it re-runs (same seeds: common random numbers) and
    #: the choice and value it runs under; empty for a main cell
    base: str = ""
    choice: str = ""
    value: str = ""

    def matches(self, selector: dict[str, Any]) -> bool:
        for key, want in selector.items():
            if key == "best":
                continue
            wants = list(want) if isinstance(want, (list, tuple, ListConfig)) else [want]
            if key == "algorithm":
                if self.algorithm not in wants:
                    return False
            elif key == "cell":
                if self.id not in wants:
                    return False
            elif key == "estimator":
                if self.estimator not in wants:
                    return False
            elif key in self.params:
                # a hyperparameter filters only the cells that have it: {tau: 0.3} keeps
                # PRank (no tau) and drops OAP-BPM with tau = 0.6
                if not any(_equal(self.params[key], w) for w in wants):
                    return False
        return True


def _equal(a: Any, b: Any) -> bool:
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        return math.isclose(float(a), float(b), rel_tol=1e-12, abs_tol=1e-15)
    return a == b


SELECTOR_KEYS = ("algorithm", "cell", "estimator", "best")


def select(cells: list[Cell], selector: dict[str, Any]) -> list[Cell]:
    """The cells a selector names.  ``best: true`` is resolved later, on results
    (:func:`rankrepro.report.aggregate.resolve`): it keeps, per algorithm, the cell with the
    lowest final value of the metric in question."""
    return [c for c in cells if c.matches(selector)]


def _check_selector(name: str, key: str, selector: dict[str, Any], cells: list[Cell], exactly_one: bool = False) -> None:
    params = {p for c in cells for p in c.params}
    for k in selector:
        _require(name, f"{key}.{k}", k in SELECTOR_KEYS or k in params,
                 f"'{k}' is neither a selector key {SELECTOR_KEYS} nor a hyperparameter of any cell")
    n = len(select(cells, selector))
    if exactly_one:
        _require(name, key, n == 1, f"selector {selector} must match exactly one cell, matches {n}")
    else:
        _require(name, key, n > 0, f"selector {selector} selects no cell")


# -------------------------------------------------------------------------------------
# the loaded experiment
# -------------------------------------------------------------------------------------
@dataclass
class Experiment:
    name: str  # <paper>/<artefact>
    scale: str
    cfg: DictConfig  # the resolved, validated config
    cells: list[Cell]
    n_trials: int
    n_train: int
    n_test: int
    curve_points: int
    max_steps: int | None = None
    max_users: int | None = None
    #: (choice, value) -> the experiment with that value of an open protocol choice
    variants: dict[tuple[str, str], "Experiment"] = field(default_factory=dict)
    #: the extra cells the sensitivity choices add (only those whose computation differs from the main cell's)
    sensitivity_cells: list[Cell] = field(default_factory=list)

    @property
    def paper(self) -> str:
        return self.cfg.experiment.paper

    @property
    def artefact(self) -> str:
        return self.cfg.experiment.artefact

    @property
    def all_cells(self) -> list[Cell]:
        """The main cells, then the sensitivity cells."""
        return [*self.cells, *self.sensitivity_cells]

    def cell(self, cell_id: str) -> Cell:
        for c in self.all_cells:
            if c.id == cell_id:
                return c
        raise KeyError(f"experiment {self.name} has no cell '{cell_id}' (cells: {[c.id for c in self.all_cells]})")

    def variant_of(self, cell: Cell) -> tuple["Experiment", Cell]:
        """The experiment and main cell a cell computes: itself for a main cell; for a
        sensitivity cell, the variant experiment and its cell with the main cell's id."""
        if not cell.base:
            return self, cell
        var = self.variants[(cell.choice, cell.value)]
        return var, var.cell(cell.base)

    def to_yaml(self) -> str:
        return OmegaConf.to_yaml(self.cfg)


def cell_fingerprint(exp: Experiment, cell: Cell) -> str:
    """Hash of everything that determines a cell's numbers: editing any of it reruns the
    cell (Snakemake's params trigger), editing anything else does not."""
    e = exp.cfg.experiment
    payload = {
        "cell": cell.id, "estimator": cell.estimator, "params": cell.params, "protocol": e.protocol,
        "features": e.features, "seed": int(e.seed), "n_trials": exp.n_trials, "n_train": exp.n_train,
        "n_test": exp.n_test, "curve_points": exp.curve_points, "metrics": list(e.metrics),
        "dataset": OmegaConf.to_container(exp.cfg.dataset),
    }
    for cap in ("max_steps", "max_users"):  # only when a scale sets them (keeps older fingerprints valid)
        if getattr(exp, cap) is not None:
            payload[cap] = getattr(exp, cap)
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()[:16]


def config_fingerprint(exp: Experiment) -> str:
    return hashlib.sha256(exp.to_yaml().encode()).hexdigest()[:16]


def _compose(config_dir: Path, name: str, scale: str, overrides: list[str]) -> DictConfig:
    # Hydra is imported here only: a job reads the resolved config and never composes
    from hydra import compose, initialize_config_dir
    from hydra.core.config_store import ConfigStore
    from hydra.core.global_hydra import GlobalHydra

    ConfigStore.instance().store(name=SCHEMA_NAME, node=RootCfg)
    GlobalHydra.instance().clear()
    try:
        with initialize_config_dir(config_dir=str(config_dir), version_base="1.3"):
            return compose(config_name="config",
                           overrides=[f"experiment={name}", f"scale={scale}", *overrides])
    finally:
        GlobalHydra.instance().clear()


def output_prefix(scale: str) -> str:
    """Where a scale's outputs go: paper scale in the repository's results/ and figures/
    (committed), any other scale under runs/<scale>/."""
    return "" if scale == "paper" else f"runs/{scale}/"


def resolved_path(name: str, scale: str) -> str:
    """The resolved config of an experiment, written when the workflow starts."""
    return f"{output_prefix(scale)}results/{name}.config.yaml"


def load_resolved(path: str | os.PathLike, name: str, scale: str,
                  sensitivity: bool | tuple[str, str] = True) -> Experiment:
    """An experiment from its resolved config file (written by the workflow when it starts,
    :func:`write_resolved`): what every job reads instead of composing the configs again.
    ``sensitivity``: False skips building the variants (a job running a main cell), a
    (choice, value) pair builds that variant only (a job running one of its cells)."""
    try:
        cfg = OmegaConf.merge(_SCHEMA, OmegaConf.load(path))
        OmegaConf.to_container(cfg, throw_on_missing=True)
    except Exception as e:
        raise _config_error(name, e) from None
    OmegaConf.set_struct(cfg, True)
    exp = _validate(name, scale, cfg)
    if sensitivity:
        _add_sensitivity(exp, only=sensitivity if isinstance(sensitivity, tuple) else None)
    return exp


def write_resolved(exp: Experiment, path: str | os.PathLike) -> bool:
    """Write the resolved config unless the file already says the same (its time then stays,
    so nothing reruns).  Returns whether it wrote."""
    p = Path(path)
    text = exp.to_yaml()
    if p.is_file() and p.read_text() == text:
        return False
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.with_name(f".{p.name}.tmp")
    tmp.write_text(text)
    os.replace(tmp, p)
    return True


def load_experiment(name: str, scale: str = "paper", overrides: list[str] | tuple = (),
                    config_dir: str | os.PathLike | None = None) -> Experiment:
    """Compose, validate and expand one experiment.  Raises :class:`ConfigError`."""
    root = Path(config_dir).resolve() if config_dir else find_config_dir()
    if name not in list_experiments(root):
        raise ConfigError(name, "experiment", f"no file config/experiment/{name}.yaml "
                                              f"(known: {', '.join(list_experiments(root))})")
    if scale not in list_scales(root):
        raise ConfigError(name, "scale", f"unknown scale '{scale}' (known: {', '.join(list_scales(root))})")
    cfg = None
    try:
        cfg = _compose(root, name, scale, list(overrides))
        OmegaConf.resolve(cfg)
        # Re-merge into a fresh schema: catches keys that a '+key=value' override slipped
        # past struct mode.  Touching every value surfaces MISSING keys too.
        checked = OmegaConf.merge(OmegaConf.structured(RootCfg), OmegaConf.to_container(cfg))
        OmegaConf.to_container(checked, throw_on_missing=True)
    except Exception as e:  # Hydra wraps the OmegaConf error that names the key
        raise _config_error(name, e, root, cfg) from None
    exp = _validate(name, scale, cfg)
    _add_sensitivity(exp)
    return exp


_SCHEMA = OmegaConf.structured(RootCfg)

#: labels of sensitivity choices and values become parts of file names
_LABEL_OK = re.compile(r"^[A-Za-z0-9_.\-]+$")


def sensitivity_cell_id(base: str, choice: str, value: str) -> str:
    return f"{base}~{choice}={value}"


def _add_sensitivity(exp: Experiment, only: tuple[str, str] | None = None) -> None:
    """Validate the ``sensitivity`` block and the diagnoses, build one variant experiment
    per non-main value, and list the sensitivity cells: a main cell re-run under a value
    only where that value changes the cell's computation (its fingerprint)."""
    name, e = exp.name, exp.cfg.experiment
    choices = [str(sc.choice) for sc in e.sensitivity]
    for i, sc in enumerate(e.sensitivity):
        key = f"experiment.sensitivity[{i}]"
        _require(name, f"{key}.choice", bool(_LABEL_OK.match(sc.choice)),
                 f"'{sc.choice}' must use only letters, digits, '_', '.' and '-'")
        _require(name, f"{key}.choice", sc.choice not in choices[:i], f"duplicate choice '{sc.choice}'")
        _require(name, f"{key}.values", len(sc["values"]) >= 2, "list at least two values (the main one and an alternative)")
        _require(name, f"{key}.main", sc.main in sc["values"],
                 f"'{sc.main}' is not one of the values ({', '.join(map(str, sc['values']))})")
        for label, sets in sc["values"].items():
            vkey = f"{key}.values.{label}"
            _require(name, vkey, bool(_LABEL_OK.match(str(label))),
                     f"'{label}' must use only letters, digits, '_', '.' and '-'")
            if only is not None and (str(sc.choice), str(label)) != only:
                continue  # a job that runs one sensitivity cell needs its variant only
            cfg = copy.deepcopy(exp.cfg)
            OmegaConf.set_readonly(cfg, False)
            for k, v in sets.items():
                try:
                    with open_dict(cfg):  # new hyperparameters are allowed; the schema re-merge checks the rest
                        OmegaConf.update(cfg, str(k), v, merge=False)
                except Exception as err:
                    raise ConfigError(name, f"{vkey}.{k}", str(err).splitlines()[0]) from None
            if sets:
                try:
                    checked = OmegaConf.merge(_SCHEMA, OmegaConf.to_container(cfg))
                    OmegaConf.to_container(checked, throw_on_missing=True)
                except Exception as err:  # an unknown key or a value of the wrong type
                    k = getattr(err, "full_key", None) or ", ".join(map(str, sets))
                    raise ConfigError(name, f"{vkey}.{k}", str(err).splitlines()[0]) from None
            if label == sc.main:
                _require(name, vkey, OmegaConf.to_yaml(cfg) == exp.to_yaml(),
                         "the main value must leave the main config unchanged (it sets "
                         + ", ".join(f"{k}={v}" for k, v in sets.items()) + ")")
                continue
            try:
                var = _validate(name, exp.scale, cfg)
            except ConfigError as err:
                raise ConfigError(name, f"{vkey} -> {err.key}", str(err).split(": ", 1)[-1]) from None
            main_ids = {c.id: c for c in exp.cells}
            extra = [c.id for c in var.cells if c.id not in main_ids]
            _require(name, vkey, not extra,
                     f"a sensitivity value may change how cells run or narrow a grid, not add cells ({', '.join(extra)})")
            exp.variants[(str(sc.choice), str(label))] = var
            for vc in var.cells:
                c = main_ids[vc.id]
                if cell_fingerprint(var, vc) != cell_fingerprint(exp, c):
                    exp.sensitivity_cells.append(Cell(sensitivity_cell_id(c.id, sc.choice, str(label)), c.algorithm,
                                                      c.estimator, vc.label, vc.params, vc.swept,
                                                      base=c.id, choice=str(sc.choice), value=str(label)))
    from .schema import DIAGNOSIS_KINDS

    for what, items in (("published", e.published), ("claims", e.claims)):
        for i, it in enumerate(items):
            d = it.diagnosis
            if d is None:
                continue
            key = f"experiment.{what}[{i}].diagnosis"
            _require(name, f"{key}.kind", d.kind in DIAGNOSIS_KINDS,
                     f"'{d.kind}' must be one of {', '.join(repr(k) for k in DIAGNOSIS_KINDS)}")
            _require(name, f"{key}.text", bool(str(d.text).strip()), "say what explains the disagreement")
            if d.kind == "open protocol choice":
                _require(name, f"{key}.choice", d.choice in choices,
                         f"an open protocol choice names one of the experiment's sensitivity choices "
                         f"({', '.join(choices) or 'none declared'}), got {d.choice!r}")
            elif d.choice is not None:
                _require(name, f"{key}.choice", d.choice in choices,
                         f"'{d.choice}' is not a sensitivity choice of this experiment ({', '.join(choices) or 'none'})")


def _config_error(name: str, exc: BaseException, root: Path | None = None, cfg: DictConfig | None = None) -> ConfigError:
    """The most precise description in an exception chain: the key and the first line
    of the OmegaConf message, with the config file Hydra was composing.  YAML syntax errors
    (a duplicate key, a malformed line) name the key at the line YAML points to; an
    interpolation that cannot resolve names the key holding it."""
    where = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    e: BaseException | None = exc
    while e is not None:
        if isinstance(e, OmegaConfBaseException) and getattr(e, "full_key", None):
            msg = str(e).splitlines()[0]
            key = str(e.full_key)
            m = re.match(r"In '([^']+)'", where)
            if m:
                msg = f"{msg} ({m.group(1)})"
                if "." not in key and "[" not in key and root is not None:  # relative to a list element
                    key = _yaml_key_of_value(root / f"{m.group(1)}.yaml", key, getattr(e, "msg", "") or str(e)) or key
            return ConfigError(name, key, msg)
        if _is_yaml_error(e):
            return _yaml_error(name, e)
        if type(e).__name__ in ("InterpolationResolutionError", "InterpolationKeyError",
                                "UnsupportedInterpolationType", "GrammarParseError") and cfg is not None:
            key = _failing_interpolation(cfg)
            if key:
                return ConfigError(name, key, str(e).splitlines()[0])
        e = e.__cause__ or e.__context__
    return ConfigError(name, "defaults", where)


def _is_yaml_error(e: BaseException) -> bool:
    import yaml

    return isinstance(e, yaml.MarkedYAMLError)


def _yaml_error(name: str, e: BaseException) -> ConfigError:
    """A YAML syntax error: the key at the line it points to (the duplicate key itself, or
    the start of the construct that is malformed), with file:line."""
    problem = str(getattr(e, "problem", "") or "")
    mark = e.problem_mark if "duplicate key" in problem or e.context_mark is None else e.context_mark
    path = Path(mark.name)
    key = _yaml_key_at(path, mark.line) if path.is_file() else None
    text = f"{path.name}:{mark.line + 1}: {' '.join(str(e.context or '').split())} {problem}".strip()
    return ConfigError(name, key or f"{path.name}:{mark.line + 1}", f"invalid YAML ({text})")


_YAML_KEY = re.compile(r"^(\s*)(-\s+)?([^\s#:{}\[\],-][^:#{}\[\],]*?)\s*:(\s|$)")


def _yaml_key_at(path: Path, line: int) -> str | None:
    """The dotted key of block-style YAML at a 0-based line (list items as [i]); None when
    the line holds no key."""
    lines = path.read_text(errors="replace").splitlines()
    if not 0 <= line < len(lines):
        return None
    raw = lines[line]
    m = _YAML_KEY.match(raw)
    cur = len(raw) - len(raw.lstrip())
    if m:
        parts = [m.group(3).strip()]
        if m.group(2):
            parts.append(f"[{_item_index(lines, line, cur)}]")
    elif raw.lstrip().startswith("- "):  # a flow item: "- {key: value, ...}"
        parts = [f"[{_item_index(lines, line, cur)}]"]
    else:
        return None
    for j in range(line - 1, -1, -1):
        r = lines[j]
        if not r.strip() or r.lstrip().startswith("#"):
            continue
        ind = len(r) - len(r.lstrip())
        if ind >= cur:
            continue
        mm = _YAML_KEY.match(r)
        if r.lstrip().startswith("- "):
            parts.append(f"[{_item_index(lines, j, ind)}]")
        elif mm:
            parts.append(mm.group(3).strip())
        else:
            continue
        cur = ind
        if ind == 0:
            break
    out = ""
    for p in reversed(parts):
        out += p if (p.startswith("[") or not out) else "." + p
    return out


def _item_index(lines: list[str], j: int, ind: int) -> int:
    """How many list items at this indentation come before line j (same list)."""
    n = 0
    for k in range(j - 1, -1, -1):
        raw = lines[k]
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        i = len(raw) - len(raw.lstrip())
        if i < ind:
            break
        if i == ind and raw.lstrip().startswith("- "):
            n += 1
        elif i == ind:
            break
    return n


def _yaml_key_of_value(path: Path, key: str, msg: str) -> str | None:
    """The full key of ``key: <value>`` on a line of ``path`` (the value quoted in an
    OmegaConf message), e.g. 'mean' inside the first published entry."""
    if not path.is_file():
        return None
    m = re.search(r"Value '([^']*)'", msg)
    pat = re.compile(rf"(^|[\s{{,]){re.escape(key)}\s*:\s*{re.escape(m.group(1)) if m else ''}")
    for i, line in enumerate(path.read_text(errors="replace").splitlines()):
        if pat.search(line):
            outer = _yaml_key_at(path, i)
            if outer is None:
                return None
            return outer if outer.endswith(f".{key}") or outer == key else f"{outer}.{key}"
    return None


def _failing_interpolation(cfg: DictConfig) -> str | None:
    """The first key whose ${...} interpolation does not resolve."""
    raw = OmegaConf.to_container(cfg, resolve=False)

    def walk(node, prefix):
        if isinstance(node, dict):
            for k, v in node.items():
                yield from walk(v, f"{prefix}.{k}" if prefix else str(k))
        elif isinstance(node, list):
            for i, v in enumerate(node):
                yield from walk(v, f"{prefix}[{i}]")
        elif isinstance(node, str) and "${" in node:
            yield prefix

    for key in walk(raw, ""):
        try:
            OmegaConf.select(cfg, key, throw_on_missing=True)
        except Exception:
            return key
    return None


def _require(name: str, key: str, ok: bool, message: str) -> None:
    if not ok:
        raise ConfigError(name, key, message)


def _validate(name: str, scale: str, cfg: DictConfig) -> Experiment:
    from ..metrics import METRICS
    from ..protocols import PROTOCOLS
    from ..data.builders import BUILDERS, INJECTED

    e = cfg.experiment
    paper, artefact = name.split("/", 1)
    _require(name, "experiment.paper", e.paper == paper, f"'{e.paper}' must equal the folder name '{paper}'")
    _require(name, "experiment.artefact", e.artefact == artefact,
             f"'{e.artefact}' must equal the file name '{artefact}'")
    _require(name, "experiment.kind", e.kind in ("table", "figure"), f"'{e.kind}' must be 'table' or 'figure'")
    _require(name, "experiment.n_trials", e.n_trials >= 1, f"must be >= 1, got {e.n_trials}")
    if e.protocol == "ranked_list":
        pass  # exact: no data, no sizes
    elif e.protocol == "letor":  # a trial is a fold; the folds fix the sizes
        _require(name, "experiment.n_trials", e.n_trials <= 5, f"LETOR has 5 folds, got {e.n_trials}")
    else:
        _require(name, "experiment.n_train", e.n_train >= 1, f"must be >= 1, got {e.n_train}")
    _require(name, "experiment.n_test", e.n_test >= 0, f"must be >= 0, got {e.n_test}")
    _require(name, "experiment.seed", e.seed >= 0, f"must be >= 0, got {e.seed}")
    _require(name, "experiment.curve_points", e.curve_points >= 1, f"must be >= 1, got {e.curve_points}")
    _require(name, "experiment.protocol", e.protocol in PROTOCOLS,
             f"unknown protocol '{e.protocol}' (known: {sorted(PROTOCOLS)})")
    _require(name, "experiment.features", e.features in FEATURE_MAPS,
             f"unknown feature map '{e.features}' (known: {sorted(FEATURE_MAPS)})")
    _require(name, "experiment.metrics", len(e.metrics) > 0, "list at least one metric")
    for i, m in enumerate(e.metrics):
        _require(name, f"experiment.metrics[{i}]", m in METRICS, f"unknown metric '{m}' (known: {sorted(METRICS)})")
    if any(METRICS[m].needs_test for m in e.metrics):
        _require(name, "experiment.n_test", e.n_test >= 1, "a test metric needs n_test >= 1")
    if e.kind == "figure":
        _require(name, "experiment.figure", e.figure is not None, "a figure experiment needs a 'figure' block")
    # a table may carry a figure block too (Harrington's Table 2 and Fig. 3 share their runs)

    s = cfg.scale
    for key in ("max_trials", "max_train", "max_test", "curve_points", "max_steps", "max_users"):
        v = s.get(key)
        _require(name, f"scale.{key}", v is None or v >= 1, f"must be >= 1 or null, got {v}")

    d = cfg.dataset
    if d.source is not None:
        from ..data.registry import REGISTRY as DATA_REGISTRY

        _require(name, "dataset.source", d.source in DATA_REGISTRY,
                 f"unknown data set '{d.source}' (known: {sorted(DATA_REGISTRY)})")
    _require(name, "dataset.builder", d.builder in BUILDERS,
             f"unknown data-set builder '{d.builder}' (known: {sorted(BUILDERS)})")
    _require(name, "dataset.n_ranks", d.n_ranks >= 2, f"must be >= 2, got {d.n_ranks}")
    sig = inspect.signature(BUILDERS[d.builder])
    for k in d.params:
        _require(name, f"dataset.params.{k}", k not in INJECTED and k in sig.parameters
                 and sig.parameters[k].kind == inspect.Parameter.KEYWORD_ONLY,
                 f"'{d.builder}' takes no parameter '{k}'")
    needs_data = "data_path" in sig.parameters
    _require(name, "dataset.source", needs_data == (d.source is not None),
             f"builder '{d.builder}' {'needs' if needs_data else 'takes no'} downloaded data: "
             f"{'set' if needs_data else 'remove'} dataset.source")

    _require(name, "algorithms", len(cfg.algorithms) > 0, "list at least one algorithm")
    from ..algorithms.coactive import COACTIVE
    from ..algorithms.gp import GP
    from ..algorithms.rankers import LISTS, RANKERS
    from ..protocols import ESTIMATORS

    family = {"rankers": RANKERS, "lists": LISTS, "online": REGISTRY, "coactive": COACTIVE,
              "gp": GP}[ESTIMATORS[e.protocol]]
    cells: list[Cell] = []
    for key, a in cfg.algorithms.items():
        _require(name, f"algorithms.{key}.estimator", a.estimator in family,
                 f"unknown estimator '{a.estimator}' for protocol '{e.protocol}' (known: {sorted(family)})")
        est_cls = family[a.estimator]
        known = set(est_cls._param_names()) - {"n_ranks", "seed"}
        fixed = OmegaConf.to_container(a.params)
        grid = OmegaConf.to_container(a.grid)
        for where, block in (("params", fixed), ("grid", grid)):
            for pk in block:
                _require(name, f"algorithms.{key}.{where}.{pk}", pk in known,
                         f"{est_cls.__name__} has no hyperparameter '{pk}' (known: {sorted(known)})")
        fixed = {k: v for k, v in fixed.items() if k not in grid}  # a swept value overrides a fixed one
        for pk, vals in grid.items():
            _require(name, f"algorithms.{key}.grid.{pk}", isinstance(vals, list) and len(vals) > 0,
                     "a grid entry must be a non-empty list")
        gkeys = sorted(grid)
        for combo in itertools.product(*[grid[k] for k in gkeys]):
            swept = dict(zip(gkeys, combo))
            params = {**fixed, **swept}
            try:
                extra = {"n_ranks": int(d.n_ranks)} if "n_ranks" in est_cls._param_names() else {}
                est_cls(**extra, **params).validate()
            except ParamError as err:
                where = "grid" if err.param in swept else "params"
                idx = f"[{grid[err.param].index(err.value)}]" if where == "grid" else ""
                raise ConfigError(name, f"algorithms.{key}.{where}.{err.param}{idx}",
                                  f"{err.param}={err.value!r} {err.rule}") from None
            cid = key + "".join(f"-{k}{_fmt(v)}" for k, v in swept.items())
            label = a.label + ("" if not swept else " (" + ", ".join(f"{k}={_fmt(v)}" for k, v in swept.items()) + ")")
            _require(name, f"algorithms.{key}", cid not in {c.id for c in cells}, f"duplicate cell id '{cid}'")
            cells.append(Cell(cid, key, a.estimator, label, params, swept))

    metrics = set(e.metrics)
    for i, p in enumerate(e.published):
        _require(name, f"experiment.published[{i}].metric", p.metric in metrics,
                 f"metric '{p.metric}' is not computed by this experiment")
        _check_selector(name, f"experiment.published[{i}].select", OmegaConf.to_container(p.select), cells, exactly_one=True)
    for i, c in enumerate(e.claims):
        _require(name, f"experiment.claims[{i}].kind", c.kind in ("less", "monotone", "argmin", "spread", "falls", "levels"),
                 f"'{c.kind}' must be 'less', 'monotone', 'argmin', 'spread', 'falls' or 'levels'")
        _require(name, f"experiment.claims[{i}].metric", c.metric in metrics,
                 f"metric '{c.metric}' is not computed by this experiment")
        _check_selector(name, f"experiment.claims[{i}].lhs", OmegaConf.to_container(c.lhs), cells)
        if c.kind == "less":
            _check_selector(name, f"experiment.claims[{i}].rhs", OmegaConf.to_container(c.rhs), cells)
        elif c.kind == "argmin":
            _require(name, f"experiment.claims[{i}].over", c.over is not None, "an argmin claim needs 'over'")
            _require(name, f"experiment.claims[{i}].expect", c.expect is not None, "an argmin claim needs 'expect'")
        elif c.kind == "falls":
            _require(name, f"experiment.claims[{i}].expect", c.expect is not None and c.expect > 0,
                     "a falls claim needs 'expect', the largest last/first ratio that counts as falling")
        elif c.kind == "levels":
            _require(name, f"experiment.claims[{i}].expect", c.expect is not None and 0 < c.expect <= 1,
                     "a levels claim needs 'expect' in (0, 1], the smallest last/first ratio that counts as levelling off")
        elif c.kind == "monotone":
            _require(name, f"experiment.claims[{i}].over", c.over is not None, "a monotone claim needs 'over'")
            _require(name, f"experiment.claims[{i}].stat", c.stat in ("mean", "ci"), "must be 'mean' or 'ci'")
            _require(name, f"experiment.claims[{i}].direction", c.direction in ("increasing", "decreasing"),
                     "must be 'increasing' or 'decreasing'")
    for i, sg in enumerate(e.significance):
        _check_selector(name, f"experiment.significance[{i}].against", OmegaConf.to_container(sg.against), cells,
                        exactly_one=True)
        _require(name, f"experiment.significance[{i}].level", 0 < sg.level < 1, "must lie in (0, 1)")
    if e.figure is not None:
        _require(name, "experiment.figure.metric", e.figure.metric in metrics,
                 f"metric '{e.figure.metric}' is not computed by this experiment")
        for i, panel in enumerate(e.figure.panels):
            _require(name, f"experiment.figure.panels[{i}].metric", panel.metric is None or panel.metric in metrics,
                     f"metric '{panel.metric}' is not computed by this experiment")
            for j, sel in enumerate(panel.select):
                _check_selector(name, f"experiment.figure.panels[{i}].select[{j}]", OmegaConf.to_container(sel), cells)

    _validate_cross_fields(name, cfg, cells)
    cap = lambda v, m: v if m is None else min(v, m)  # noqa: E731
    return Experiment(
        name=name, scale=scale, cfg=cfg, cells=cells,
        n_trials=cap(e.n_trials, s.max_trials), n_train=cap(e.n_train, s.max_train),
        n_test=cap(e.n_test, s.max_test), curve_points=s.curve_points or e.curve_points, max_steps=s.max_steps,
        max_users=s.max_users,
    )


# -------------------------------------------------------------------------------------
# cross-field checks: values that parse but cannot run or cannot be evaluated
# -------------------------------------------------------------------------------------
SEED_MAX = 2**63 - 1  # seeds are recorded as int64 with the results


def _finite(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _validate_cross_fields(name: str, cfg: DictConfig, cells: list[Cell]) -> None:
    """What the schema and the per-key ranges cannot see: builder parameters (each builder's
    declared constraint table), sizes against the data set, published values and claims
    against the cells the sweep makes, figure options against matplotlib."""
    _validate_dataset(name, cfg)
    _validate_published(name, cfg, cells)
    _validate_claims(name, cfg, cells)
    _validate_figure(name, cfg)


def _validate_dataset(name: str, cfg: DictConfig) -> None:
    from ..data.builders import PARAM_CONSTRAINTS, n_ranks_of, size_limit

    e, d = cfg.experiment, cfg.dataset
    _require(name, "experiment.seed", e.seed <= SEED_MAX, f"must be in 0..2^63-1, got {e.seed}")
    params = OmegaConf.to_container(d.params)
    for k, (ok, allowed) in PARAM_CONSTRAINTS.get(d.builder, {}).items():
        if k in params:
            _require(name, f"dataset.params.{k}", ok(params[k]), f"must be {allowed}, got {params[k]!r}")
    k = n_ranks_of(d.builder, params)
    if k is not None:
        why = "len(thresholds) + 1" if d.builder == "synthetic_hgo" else f"what '{d.builder}' produces"
        _require(name, "dataset.n_ranks", d.n_ranks == k, f"must equal {why} = {k}, got {d.n_ranks}")
    if d.source is not None and e.protocol not in ("letor", "ranked_list"):
        from ..data.registry import REGISTRY as DATA_REGISTRY

        lim = size_limit(d.builder, params, dict(DATA_REGISTRY[d.source].stats))
        if lim is not None:
            for key in ("n_test", "n_train"):
                _require(name, f"experiment.{key}", e.n_train + e.n_test <= lim[0],
                         f"n_train + n_test = {e.n_train} + {e.n_test} exceeds {lim[0]:,}: {lim[1]}")


def _is_curve(metric: str) -> bool:
    from ..metrics import METRICS

    return METRICS[metric].curve


def _validate_published(name: str, cfg: DictConfig, cells: list[Cell]) -> None:
    e = cfg.experiment
    for i, p in enumerate(e.published):
        key = f"experiment.published[{i}]"
        _require(name, f"{key}.mean", _finite(p.mean), f"must be a finite number, got {p.mean}")
        _require(name, f"{key}.ci", p.ci is None or (_finite(p.ci) and p.ci >= 0),
                 f"the 95% half-width must be a finite number >= 0 (or null), got {p.ci}")
        if p.round is not None:
            _require(name, f"{key}.round", _is_curve(p.metric),
                     f"'{p.metric}' is one number per trial, not a curve: remove 'round'")
            _check_round(name, f"{key}.round", cfg, p.round)
        _check_selector_values(name, f"{key}.select", OmegaConf.to_container(p.select), cells)


def _check_round(name: str, key: str, cfg: DictConfig, r: int) -> None:
    e = cfg.experiment
    _require(name, key, r >= 1, f"rounds start at 1, got {r}")
    if e.protocol == "online":
        _require(name, key, r <= e.n_train, f"round {r} is beyond the {e.n_train} rounds of the run (experiment.n_train)")


def _check_selector_values(name: str, key: str, selector: dict[str, Any], cells: list[Cell]) -> None:
    """Every value a selector lists names something a cell has (a list that names one
    algorithm too many would otherwise be ignored)."""
    for k, want in selector.items():
        if k == "best":
            _require(name, f"{key}.best", isinstance(want, bool), f"must be true or false, got {want!r}")
            continue
        wants = list(want) if isinstance(want, (list, tuple)) else [want]
        attr = {"algorithm": lambda c: [c.algorithm], "cell": lambda c: [c.id], "estimator": lambda c: [c.estimator]}
        have = [v for c in cells for v in (attr[k](c) if k in attr else ([c.params[k]] if k in c.params else []))]
        for w in wants:
            _require(name, f"{key}.{k}", any(_equal(h, w) for h in have),
                     f"no cell has {k}={w!r} (cells have: {', '.join(sorted({_fmt(h) for h in have}))})")


CLAIM_KINDS = ("less", "monotone", "argmin", "spread", "falls", "levels")


def _validate_claims(name: str, cfg: DictConfig, cells: list[Cell]) -> None:
    e = cfg.experiment
    ids: dict[str, int] = {}
    for i, c in enumerate(e.claims):
        key = f"experiment.claims[{i}]"
        _require(name, f"{key}.id", c.id not in ids, f"duplicate claim id '{c.id}' (also claims[{ids.get(c.id)}])")
        ids[c.id] = i
        if c.kind not in CLAIM_KINDS:
            continue  # reported by _validate
        curve = _is_curve(c.metric)
        if c.rounds is not None:
            _require(name, f"{key}.rounds", curve, f"'{c.metric}' is one number per trial, not a curve: remove 'rounds'")
            _require(name, f"{key}.rounds", len(c.rounds) == 2, f"must be [first, last] (null: open), got {list(c.rounds)}")
            for j, r in enumerate(c.rounds):
                if r is not None:
                    _check_round(name, f"{key}.rounds[{j}]", cfg, r)
            lo, hi = c.rounds
            _require(name, f"{key}.rounds", lo is None or hi is None or lo < hi,
                     f"first round {lo} must come before last round {hi}")
        if c.kind in ("falls", "levels"):
            _require(name, f"{key}.metric", curve, f"a {c.kind} claim compares two rounds of a curve; "
                                                   f"'{c.metric}' is one number per trial")
        _require(name, f"{key}.factor", _finite(c.factor) and c.factor > 0, f"must be a finite number > 0, got {c.factor}")
        _require(name, f"{key}.factor", c.factor == 1.0 or c.kind == "less", "only a 'less' claim takes a factor")
        if c.expect is not None:
            _require(name, f"{key}.expect", _finite(c.expect), f"must be a finite number, got {c.expect}")
        lhs_sel = OmegaConf.to_container(c.lhs)
        _check_selector_values(name, f"{key}.lhs", lhs_sel, cells)
        lhs = select(cells, lhs_sel)
        params = {p for x in cells for p in x.params}
        for j, m in enumerate(c.match):
            _require(name, f"{key}.match[{j}]", m in params, f"'{m}' is not a hyperparameter of any cell")
        if c.kind == "less":
            rhs_sel = OmegaConf.to_container(c.rhs)
            _check_selector_values(name, f"{key}.rhs", rhs_sel, cells)
            rhs = select(cells, rhs_sel)
            pairs = [(a, b) for a in lhs for b in rhs if a.id != b.id
                     and all(a.params.get(m) is None or b.params.get(m) is None or _equal(a.params[m], b.params[m])
                             for m in c.match)]
            _require(name, f"{key}.rhs", bool(pairs), "no lhs cell can be compared with an rhs cell (same cell, or "
                                                      "no pair agrees on 'match')")
        if c.kind in ("argmin", "spread"):
            _require(name, f"{key}.lhs", len(lhs) >= 2, f"a {c.kind} claim needs at least two cells, lhs selects {len(lhs)}")
        if c.kind in ("argmin", "monotone") and c.over is not None:
            vals = [x.params[c.over] for x in lhs if c.over in x.params]
            _require(name, f"{key}.over", len({_fmt(v) for v in vals}) >= 2,
                     f"'{c.over}' must take at least two values among the lhs cells (has: "
                     f"{', '.join(sorted({_fmt(v) for v in vals})) or 'none'})")
            if c.kind == "argmin" and c.expect is not None:
                _require(name, f"{key}.expect", any(_equal(v, c.expect) for v in vals),
                         f"{c.over}={c.expect:g} is not among the lhs cells' values "
                         f"({', '.join(sorted({_fmt(v) for v in vals}))})")


def _validate_figure(name: str, cfg: DictConfig) -> None:
    fig = cfg.experiment.figure
    styles = [(f"algorithms.{k}", a) for k, a in cfg.algorithms.items()]
    if fig is None and all(a.color is None and a.marker is None and a.linestyle == "-" for _, a in styles):
        return
    import matplotlib.colors as mcolors
    import matplotlib.lines as mlines
    import matplotlib.scale as mscale

    if fig is not None:
        scales = mscale.get_scale_names()
        _require(name, "experiment.figure.xscale", fig.xscale in scales,
                 f"'{fig.xscale}' is not a matplotlib scale ({', '.join(scales)})")
        if fig.ylim is not None:
            lim = list(fig.ylim)
            _require(name, "experiment.figure.ylim", len(lim) == 2 and all(_finite(v) for v in lim) and lim[0] < lim[1],
                     f"must be [low, high] with finite low < high, got {lim}")
    for key, a in styles:
        if a.color is not None:
            _require(name, f"{key}.color", mcolors.is_color_like(a.color), f"'{a.color}' is not a matplotlib colour")
        for attr in ("marker", "linestyle"):
            v = a[attr]
            if v is None:
                continue
            try:
                mlines.Line2D([], [], **{attr: v})
            except (ValueError, TypeError) as err:
                raise ConfigError(name, f"{key}.{attr}", f"{v!r} is not a matplotlib {attr}: "
                                                         f"{str(err).splitlines()[0][:120]}") from None


def load_catalog(scale: str = "paper", config_dir: str | os.PathLike | None = None) -> dict[str, Experiment]:
    """Every experiment, validated.  The first bad config raises."""
    root = Path(config_dir).resolve() if config_dir else find_config_dir()
    return {n: load_experiment(n, scale, config_dir=root) for n in list_experiments(root)}


@dataclass
class DataStatus:
    """Whether an experiment's data can be had, decided before any job runs."""

    runnable: bool
    #: registry name of the data set used (the configured one or its substitute); None for generated data
    used: str | None = None
    substitute_for: str | None = None
    reason: str = ""
    how_to_obtain: str = ""


def data_status(exp: Experiment, probe: bool = True) -> DataStatus:
    src = exp.cfg.dataset.source
    if src is None:
        return DataStatus(True)
    from ..data.fetch import resolve

    a = resolve(src, probe=probe)
    if a.usable:
        return DataStatus(True, used=src)
    if a.substitute:
        return DataStatus(True, used=a.substitute, substitute_for=src,
                          reason=f"{src} is absent ({a.reason}); using the substitute {a.substitute}")
    tried = f" (substitutes tried: {', '.join(a.alternatives_tried)})" if a.alternatives_tried else ""
    return DataStatus(False, reason=f"data set {src} is absent: {a.reason}{tried}", how_to_obtain=a.how_to_obtain)
