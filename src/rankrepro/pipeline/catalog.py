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

from ..algorithms import FEATURE_MAPS, ParamError
from ..claims import KINDS as CLAIM_KINDS, OPTIONAL_DEFAULTS as CLAIM_OPTIONAL, Claim, kind_names as claim_kind_names
from .names import name_problem
from .schema import RootCfg

SCHEMA_NAME = "rankrepro_schema"


class ConfigError(ValueError):
    """A config that cannot run; ``key`` is the offending key (dotted path)."""

    def __init__(self, experiment: str, key: str, message: str):
        self.experiment = experiment
        self.key = key
        super().__init__(f"config error in experiment '{experiment}' at key '{key}': {message}")


# find_config_dir, list_experiments, list_scales live in rankrepro.config_files (standard
# library only, for the command line's early checks) and are re-exported here
from ..config_files import find_config_dir, list_experiments, list_scales  # noqa: E402, F401


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
    def figure_file(self) -> str | None:
        """The figure's file name (no suffix) under figures/<paper>/: the paper's numbering
        when the config gives it, else the artefact's name; None without a figure."""
        f = self.cfg.experiment.figure
        return None if f is None else (f.file or self.artefact)

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
    """Hash of everything that determines a cell's numbers -- its config values and the code
    that computes it (:mod:`.codeprint`): editing any of it reruns the cell, editing
    anything else does not."""
    return hashlib.sha256(json.dumps(_fingerprint_payload(exp, cell), sort_keys=True, default=str).encode()
                          ).hexdigest()[:16]


def reused_trials(exp: Experiment, cell: Cell) -> tuple[str, int] | None:
    """(main cell id, n) when sensitivity cell ``cell`` differs from its main cell in the
    number of trials only, and runs more of them: its first n trials are then the main
    cell's, bit for bit (same seeds, same settings; the protocol's trials must not depend on
    how many there are, ``Protocol.trials_extend``), and only the others are computed.
    None otherwise."""
    if not cell.base:
        return None
    from ..protocols import PROTOCOLS

    if not PROTOCOLS[exp.cfg.experiment.protocol].trials_extend:
        return None
    var, vc = exp.variant_of(cell)
    if var.cfg.experiment.protocol != exp.cfg.experiment.protocol or var.n_trials <= exp.n_trials:
        return None
    a, b = _fingerprint_payload(var, vc), _fingerprint_payload(exp, exp.cell(cell.base))
    a["n_trials"] = b["n_trials"]
    return (cell.base, exp.n_trials) if a == b else None


def _fingerprint_payload(exp: Experiment, cell: Cell) -> dict:
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
    from ..protocols import PROTOCOLS

    # fields the protocol does not read hash as the constants it declares (the values their
    # former placeholders had): leaving them unset changes no fingerprint
    for key, value in PROTOCOLS[e.protocol].fingerprint_constants.items():
        group, _, fld = key.partition(".")
        if group == "experiment":
            payload[fld] = value
        else:
            payload[group][fld] = value
    # the code the numbers come from: the modules of the cell's import closure (by their code,
    # not their comments or docstrings) and the numeric libraries' major.minor versions
    from .codeprint import cell_identity, fingerprint as code_fingerprint

    payload["code"] = code_fingerprint(cell_identity(exp, cell))
    # through JSON, as hashed: a comparison of two payloads sees what the hash sees
    return json.loads(json.dumps(payload, sort_keys=True, default=str))


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
    # the workflow wrote this file from an experiment it had checked in full: what a job
    # needs is rebuilt (cells, sizes, variants), the checks of the report's parts (published
    # values, claims, figure options: ~0.3 s with matplotlib's import) are not repeated
    exp = _validate(name, scale, cfg, checked=True)
    if sensitivity:
        _add_sensitivity(exp, only=sensitivity if isinstance(sensitivity, tuple) else None, checked=True)
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
    _check_experiment_name(name, root)
    _require(name, "scale", name_problem("scale", scale) is None, str(name_problem("scale", scale)))
    _check_yaml_bounds(name, root)
    try:
        cfg = _compose(root, name, scale, list(overrides))
        OmegaConf.resolve(cfg)
        # Re-merge into a fresh schema: catches keys that a '+key=value' override slipped
        # past struct mode.  Touching every value surfaces MISSING keys too.
        checked = OmegaConf.merge(OmegaConf.structured(RootCfg), OmegaConf.to_container(cfg))
        OmegaConf.to_container(checked, throw_on_missing=True)
    except Exception as e:  # Hydra wraps the OmegaConf error that names the key
        raise _config_error(name, e) from None
    exp = _validate(name, scale, cfg)
    _add_sensitivity(exp)
    return exp


_SCHEMA = OmegaConf.structured(RootCfg)


def _check_experiment_name(name: str, root: Path) -> None:
    """The experiment's file name, ``config/experiment/<paper>/<artefact>.yaml``: two valid
    names (:data:`rankrepro.pipeline.names.NAME_PATTERNS`), and no other experiment file that
    differs from it in case only (on a case-insensitive file system both would write the same
    outputs)."""
    parts = name.split("/")
    _require(name, "experiment", len(parts) == 2,
             f"config/experiment/{name}.yaml: an experiment file lies one folder deep, "
             "config/experiment/<paper>/<artefact>.yaml")
    for kind, part in zip(("paper", "artefact"), parts):
        why = name_problem(kind, part)
        _require(name, f"experiment.{kind}", why is None, f"config/experiment/{name}.yaml: {why}")
    twins = [n for n in list_experiments(root) if n != name and n.casefold() == name.casefold()]
    _require(name, "experiment.artefact", not twins,
             f"config/experiment/{name}.yaml and config/experiment/{twins[0] if twins else ''}.yaml differ in case "
             "only: on a case-insensitive file system their outputs are the same files")


#: bounds on every config file, checked before Hydra composes it: a YAML alias bomb (a few
#: lines whose anchors expand to billions of nodes when OmegaConf copies them) or a file of
#: runaway size or depth would otherwise hang the load
YAML_MAX_BYTES = 1 << 20
YAML_MAX_NODES = 200_000
YAML_MAX_DEPTH = 40
#: files found within the bounds: (path, size, mtime) -> None, checked once per process
_YAML_OK: dict[tuple[str, int, int], None] = {}


class _YamlTooBig(Exception):
    def __init__(self, path: list[str], message: str):
        self.path, self.message = path, message


def _yaml_measure(node: Any, memo: dict[int, tuple[int, int]], active: set[int]) -> tuple[int, int]:
    """(nodes, depth) of a composed YAML node once every alias is expanded, without expanding
    them (each node measured once)."""
    import yaml

    if id(node) in memo:
        return memo[id(node)]
    if id(node) in active:
        raise _YamlTooBig([], "an alias refers to a node that contains it (a recursive structure)")
    if isinstance(node, yaml.ScalarNode):
        return 1, 1
    active.add(id(node))
    size, depth = 1, 0
    mapping = isinstance(node, yaml.MappingNode)
    for child, key in ([(v, k) for k, v in node.value] if mapping else [(v, None) for v in node.value]):
        try:
            n, d = _yaml_measure(child, memo, active)
            if d + 1 > YAML_MAX_DEPTH:
                raise _YamlTooBig([], f"nested more than {YAML_MAX_DEPTH} levels deep")
        except _YamlTooBig as e:  # the key it is under: mapping keys down to the first list
            e.path = [str(getattr(key, "value", key)), *e.path] if mapping else []
            raise
        size, depth = size + n, max(depth, d)
    active.discard(id(node))
    memo[id(node)] = (size, depth + 1)
    return memo[id(node)]


def _yaml_where(node: Any, memo: dict[int, tuple[int, int]]) -> list[str]:
    """The keys down to the mapping entry that holds most of an oversized document."""
    import yaml

    path: list[str] = []
    while isinstance(node, yaml.MappingNode) and node.value:
        k, v = max(node.value, key=lambda kv: memo.get(id(kv[1]), (0, 0))[0])
        path.append(str(getattr(k, "value", k)))
        node = v
    return path


def _check_yaml_bounds(name: str, root: Path) -> None:
    """Every YAML file under the config folder within :data:`YAML_MAX_BYTES`,
    :data:`YAML_MAX_NODES` (aliases expanded) and :data:`YAML_MAX_DEPTH`, measured on the
    composed node graph (linear in the file's size) before anything expands it."""
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    for f in sorted(root.rglob("*.yaml")):
        try:
            st = f.stat()
        except OSError:
            continue
        memo_key = (str(f), st.st_size, st.st_mtime_ns)
        if memo_key in _YAML_OK:
            continue
        rel = f.relative_to(root).as_posix()
        owner = rel[len("experiment/"):-len(".yaml")] if rel.startswith("experiment/") \
            and not f.name.startswith("_") else name
        prefix = {"dataset": "dataset.", "scale": "scale."}.get(rel.split("/")[0], "")
        problem, where = None, []
        if st.st_size > YAML_MAX_BYTES:
            problem = f"{st.st_size:,} bytes, more than a config file may have ({YAML_MAX_BYTES:,})"
        else:
            try:
                doc = yaml.compose(f.read_bytes(), Loader=loader)
            except yaml.YAMLError:
                doc = None  # a syntax error: reported, with its line, when Hydra composes the file
            except RecursionError:
                doc, problem = None, f"nested more than {YAML_MAX_DEPTH} levels deep"
            if doc is not None:
                memo: dict[int, tuple[int, int]] = {}
                try:
                    size, _ = _yaml_measure(doc, memo, set())
                    if size > YAML_MAX_NODES:
                        problem = (f"its aliases expand to {size:,} values, more than a config may hold "
                                   f"({YAML_MAX_NODES:,}): an alias bomb?")
                        where = _yaml_where(doc, memo)
                except _YamlTooBig as e:
                    problem, where = e.message, e.path
                except RecursionError:
                    problem = f"nested more than {YAML_MAX_DEPTH} levels deep"
        if problem is not None:
            raise ConfigError(owner, prefix + ".".join(where) if where else rel, f"config/{rel}: {problem}")
        _YAML_OK[memo_key] = None


def _check_name(name: str, key: str, kind: str, value: Any) -> None:
    why = name_problem(kind, value)
    _require(name, key, why is None, str(why))


def sensitivity_cell_id(base: str, choice: str, value: str) -> str:
    return f"{base}~{choice}={value}"


def _add_sensitivity(exp: Experiment, only: tuple[str, str] | None = None, checked: bool = False) -> None:
    """Validate the ``sensitivity`` block and the diagnoses, build one variant experiment
    per non-main value, and list the sensitivity cells: a main cell re-run under a value
    only where that value changes the cell's computation (its fingerprint)."""
    name, e = exp.name, exp.cfg.experiment
    choices = [str(sc.choice) for sc in e.sensitivity]
    main_fps: dict[str, str] = {}
    for i, sc in enumerate(e.sensitivity):
        key = f"experiment.sensitivity[{i}]"
        _check_name(name, f"{key}.choice", "label", sc.choice)
        _require(name, f"{key}.choice", sc.choice not in choices[:i], f"duplicate choice '{sc.choice}'")
        _require(name, f"{key}.choice", sc.choice.casefold() not in {c.casefold() for c in choices[:i]},
                 f"choice '{sc.choice}' differs from an earlier one in case only (its cells' files would be the same "
                 "on a case-insensitive file system)")
        _require(name, f"{key}.values", len(sc["values"]) >= 2, "list at least two values (the main one and an alternative)")
        _require(name, f"{key}.main", sc.main in sc["values"],
                 f"'{sc.main}' is not one of the values ({', '.join(map(str, sc['values']))})")
        alternatives = [OmegaConf.to_container(v) for lb, v in sc["values"].items() if lb != sc.main]
        twin = next((e.sensitivity[h].choice for h in range(i)
                     if _same_value(alternatives, [OmegaConf.to_container(v) for lb, v in e.sensitivity[h]["values"].items()
                                                   if lb != e.sensitivity[h].main])), None)
        _require(name, f"{key}.values", twin is None,
                 f"choice '{sc.choice}' sets the same alternatives as choice '{twin}': one question asked twice")
        labels = [str(v) for v in sc["values"]]
        settings = {str(v): OmegaConf.to_container(s) for v, s in sc["values"].items()}
        for j, (label, sets) in enumerate(sc["values"].items()):
            vkey = f"{key}.values.{label}"
            _check_name(name, vkey, "label", label)
            for k in sets:  # the alternatives run on the main cells' seeds: that is what compares them
                _require(name, f"{vkey}.{k}", str(k) != "experiment.seed",
                         "a sensitivity value may not set the seed: its cells rerun the main cells on the same "
                         "seeds (common random numbers), which is what makes the comparison")
            same = next((v for v in labels[:j] if _same_value(settings[v], settings[str(label)])), None)
            _require(name, vkey, same is None,
                     f"value '{label}' sets the same as value '{same}': the same computation listed twice")
            twin = next((v for v in labels[:j] if v.casefold() == str(label).casefold()), None)
            _require(name, vkey, twin is None, f"value '{label}' differs from value '{twin}' in case only (their "
                                               "cells' files would be the same on a case-insensitive file system)")
            if only is not None and (str(sc.choice), str(label)) != only:
                continue  # a job that runs one sensitivity cell needs its variant only
            if label == sc.main and (checked or not sets):
                continue  # nothing to build; a main value that sets keys is checked below
            cfg = copy.deepcopy(exp.cfg)
            OmegaConf.set_readonly(cfg, False)
            for k, v in sets.items():
                try:
                    with open_dict(cfg):  # new hyperparameters are allowed; the schema re-merge checks the rest
                        OmegaConf.update(cfg, str(k), v, merge=False)
                except Exception as err:
                    raise ConfigError(name, f"{vkey}.{k}", str(err).splitlines()[0]) from None
            if sets and not checked:
                try:
                    checked_cfg = OmegaConf.merge(_SCHEMA, OmegaConf.to_container(cfg))
                    OmegaConf.to_container(checked_cfg, throw_on_missing=True)
                except Exception as err:  # an unknown key or a value of the wrong type
                    k = getattr(err, "full_key", None) or ", ".join(map(str, sets))
                    raise ConfigError(name, f"{vkey}.{k}", str(err).splitlines()[0]) from None
            if label == sc.main:
                _require(name, vkey, OmegaConf.to_yaml(cfg) == exp.to_yaml(),
                         "the main value must leave the main config unchanged (it sets "
                         + ", ".join(f"{k}={v}" for k, v in sets.items()) + ")")
                continue
            try:
                var = _validate(name, exp.scale, cfg, checked=checked)
            except ConfigError as err:
                raise ConfigError(name, f"{vkey} -> {err.key}", str(err).split(": ", 1)[-1]) from None
            main_ids = {c.id: c for c in exp.cells}
            extra = [c.id for c in var.cells if c.id not in main_ids]
            _require(name, vkey, not extra,
                     f"a sensitivity value may change how cells run or narrow a grid, not add cells ({', '.join(extra)})")
            exp.variants[(str(sc.choice), str(label))] = var
            for vc in var.cells:
                c = main_ids[vc.id]
                if c.id not in main_fps:  # each main cell's fingerprint computed once, not once per value
                    main_fps[c.id] = cell_fingerprint(exp, c)
                if cell_fingerprint(var, vc) != main_fps[c.id]:
                    sid = sensitivity_cell_id(c.id, sc.choice, str(label))
                    _check_name(name, vkey, "cell", sid)
                    exp.sensitivity_cells.append(Cell(sid, c.algorithm,
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


def _config_error(name: str, exc: BaseException) -> ConfigError:
    """The most precise description in an exception chain: the key and the first line
    of the OmegaConf message, with the config file Hydra was composing.  A YAML syntax
    error or duplicate key names the key at its line (and file:line); an interpolation that
    cannot be resolved names the key holding it; an error inside a list element (reported
    by OmegaConf relative to the element) is located in the file it came from."""
    where = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    e: BaseException | None = exc
    while e is not None:
        if isinstance(e, OmegaConfBaseException) and getattr(e, "full_key", None):
            msg = str(e).splitlines()[0]
            key = str(e.full_key)
            if where.startswith("In '"):
                msg = f"{msg} ({where.split(':')[0]})"
                key = _locate_in_file(exc, where, key, getattr(e, "value", None)) or key
            return ConfigError(name, key, msg)
        mark = getattr(e, "context_mark", None) or getattr(e, "problem_mark", None)
        if mark is not None and getattr(mark, "name", None):  # a YAML scanner/parser/constructor error
            dup = re.search(r"found duplicate key (\S+)", str(e))
            line = (getattr(e, "problem_mark", None) or mark).line + 1 if dup else mark.line + 1
            key = _yaml_key_at(exc, mark.name, line)
            problem = (getattr(e, "problem", None) or str(e).splitlines()[-1]).strip()
            return ConfigError(name, key, f"{mark.name}:{line}: {problem}")
        if isinstance(e, OmegaConfBaseException) and "nterpolation" in type(e).__name__:
            key, msg = _find_bad_interpolation(exc)
            if key:
                return ConfigError(name, key, msg)
        e = e.__cause__ or e.__context__
    return ConfigError(name, "defaults", where)


def _frame_local(exc: BaseException, local: str, kind: type) -> Any:
    """A local variable of a frame the exception passed through (innermost first)."""
    tb, found = exc.__traceback__, None
    while tb is not None:
        v = tb.tb_frame.f_locals.get(local)
        if isinstance(v, kind):
            found = v
        tb = tb.tb_next
    return found


def _find_bad_interpolation(exc: BaseException) -> tuple[str | None, str]:
    """The key whose interpolation fails, found by resolving the composed config leaf by leaf
    (``OmegaConf.resolve`` reports no key)."""
    cfg = _frame_local(exc, "cfg", DictConfig)
    if cfg is None:
        return None, ""
    try:
        OmegaConf.to_container(cfg, resolve=True)
    except OmegaConfBaseException as err:
        if getattr(err, "full_key", None):
            return str(err.full_key), f"cannot resolve {err.child_node if err.child_node is not None else ''}: " \
                                      f"{str(err).splitlines()[0]}"
    return None, ""


def _group_prefix(exc: BaseException, rel: str) -> str:
    """The dotted key under which a config file is mounted: '' for experiment files (global
    package), 'dataset.', 'scale.', or 'algorithms.<key>.' for an algorithm file (looked up
    in the experiment's defaults list)."""
    group, _, stem = rel.partition("/")
    if group in ("dataset", "scale"):
        return group + "."
    if group == "algorithm":
        cfg_dir = _frame_local(exc, "root", Path)
        exp = _frame_local(exc, "name", str)
        if cfg_dir is not None and exp:
            f = Path(cfg_dir) / "experiment" / f"{exp}.yaml"
            text = f.read_text() if f.is_file() else ""
            m = re.search(r"/algorithm@algorithms\.(\w+)\s*:\s*" + re.escape(stem) + r"\s*$", text, re.M)
            if m:
                return f"algorithms.{m.group(1)}."
        return f"algorithms.{stem}."
    return ""


def _yaml_key_at(exc: BaseException, file: str, line: int) -> str:
    """The dotted key of ``line`` of a YAML file, from the indentation of the lines above
    (list items are shown as [i])."""
    try:
        lines = Path(file).read_text(errors="replace").splitlines()[:line]
    except OSError:
        return Path(file).name
    parts: list[tuple[int, str]] = []
    for text in lines:
        stripped = text.lstrip(" ")
        if not stripped or stripped.startswith("#"):
            continue
        ind = len(text) - len(stripped)
        item = stripped.startswith("- ")
        body = stripped[2:] if item else stripped
        while parts and parts[-1][0] >= ind + (0 if not item else 1) and not (item and parts[-1][1].startswith("[")
                                                                               and parts[-1][0] == ind):
            parts.pop()
        if item:
            n = 0
            if parts and parts[-1][1].startswith("[") and parts[-1][0] == ind:
                n = int(parts.pop()[1][1:-1]) + 1
            parts.append((ind, f"[{n}]"))
            ind += 2
        m = re.match(r"([A-Za-z_][\w@/.-]*)\s*:", body)
        if m:
            parts.append((ind, m.group(1)))
    rel = _config_rel(file)
    key = "".join(p if p.startswith("[") else f".{p}" for _, p in parts).lstrip(".")
    if rel.startswith("experiment/") and key.startswith("defaults"):
        return "defaults"
    return (_group_prefix(exc, rel) + key).rstrip(".") or rel


def _config_rel(file: str) -> str:
    """'group/stem' of a config file path (the part after the config folder)."""
    p = Path(file).with_suffix("")
    parts = p.parts
    for i in range(len(parts) - 1, -1, -1):
        if parts[i] in ("experiment", "algorithm", "dataset", "scale"):
            return "/".join(parts[i:])
    return p.name


def _locate_in_file(exc: BaseException, where: str, key: str, value: Any) -> str | None:
    """Full key of a bad value that OmegaConf reports relative to a list element: find the
    leaf ``key`` holding ``value`` in the file Hydra names (``In 'group/file'``)."""
    if "." in key or "[" in key:
        return None
    m = re.match(r"In '([^']+)'", where)
    cfg_dir = _frame_local(exc, "root", Path)
    if not m or cfg_dir is None:
        return None
    f = Path(cfg_dir) / f"{m.group(1)}.yaml"
    try:
        raw = OmegaConf.to_container(OmegaConf.load(f), resolve=False)
    except Exception:  # noqa: BLE001 - best effort; the plain key is reported otherwise
        return None
    hits: list[str] = []

    def walk(node, path):
        if isinstance(node, dict):
            for k, v in node.items():
                sub = f"{path}.{k}" if path else str(k)
                if str(k) == key and not isinstance(v, (dict, list)) and str(v) == str(value):
                    hits.append(sub)
                walk(v, sub)
        elif isinstance(node, list):
            for i, v in enumerate(node):
                walk(v, f"{path}[{i}]")

    walk(raw, "")
    return _group_prefix(exc, m.group(1)) + hits[0] if len(hits) == 1 else None


def _require(name: str, key: str, ok: bool, message: str) -> None:
    if not ok:
        raise ConfigError(name, key, message)


def _validate(name: str, scale: str, cfg: DictConfig, checked: bool = False) -> Experiment:
    """Check the composed config and expand its cells.  ``checked``: the config was checked
    in full before (a resolved file the workflow wrote): only what builds the experiment runs,
    not the checks of published values, claims, significance and figure options."""
    from ..metrics import METRICS
    from ..protocols import PROTOCOLS
    from ..data.builders import BUILDERS, INJECTED

    e = cfg.experiment
    paper, artefact = name.split("/", 1)
    _require(name, "experiment.paper", e.paper == paper, f"'{e.paper}' must equal the folder name '{paper}'")
    _require(name, "experiment.artefact", e.artefact == artefact,
             f"'{e.artefact}' must equal the file name '{artefact}'")
    # names that become parts of output paths (a resolved file or a kept catalog is checked too)
    _check_name(name, "experiment.paper", "paper", e.paper)
    _check_name(name, "experiment.artefact", "artefact", e.artefact)
    if e.figure is not None and e.figure.file is not None:
        _check_name(name, "experiment.figure.file", "figure", e.figure.file)
    _require(name, "experiment.kind", e.kind in ("table", "figure"), f"'{e.kind}' must be 'table' or 'figure'")
    _require(name, "experiment.n_trials", e.n_trials >= 1, f"must be >= 1, got {e.n_trials}")
    _require(name, "experiment.protocol", e.protocol in PROTOCOLS,
             f"unknown protocol '{e.protocol}' (known: {sorted(PROTOCOLS)})")
    proto = PROTOCOLS[e.protocol]
    # what depends on the protocol: the fields it reads (only those must be set), its own checks
    proto.validate(cfg, lambda key, ok, message: _require(name, key, ok, message))
    _require(name, "experiment.n_test", e.n_test >= 0, f"must be >= 0, got {e.n_test}")
    _require(name, "experiment.seed", e.seed >= 0, f"must be >= 0, got {e.seed}")
    _require(name, "experiment.curve_points", e.curve_points >= 1, f"must be >= 1, got {e.curve_points}")
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
        from ..data.registry import DATASETS

        _require(name, "dataset.source", d.source in DATASETS,
                 f"unknown data set '{d.source}' (known: {sorted(DATASETS)})")
    _require(name, "dataset.builder", d.builder in BUILDERS,
             f"unknown data-set builder '{d.builder}' (known: {sorted(BUILDERS)})")
    _require(name, "dataset.n_ranks", d.n_ranks is None or d.n_ranks >= 2, f"must be >= 2, got {d.n_ranks}")
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
    family = proto.estimators
    cells: list[Cell] = []
    for key, a in cfg.algorithms.items():
        _check_name(name, f"algorithms.{key}", "algorithm", key)
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
            for j, v in enumerate(vals):  # 1 and 1.0 are one setting run twice under two cell ids
                first = next((i for i in range(j) if _same_value(vals[i], v)), None)
                if first is not None:
                    raise ConfigError(name, f"algorithms.{key}.grid.{pk}[{j}]",
                                      f"{pk}={v!r} equals {pk}[{first}]={vals[first]!r}: the same cells would run "
                                      "twice under two ids")
        gkeys = sorted(grid)
        for combo in itertools.product(*[grid[k] for k in gkeys]):
            swept = dict(zip(gkeys, combo))
            params = {**fixed, **swept}
            try:
                extra = ({"n_ranks": int(d.n_ranks)} if "n_ranks" in est_cls._param_names() and d.n_ranks is not None
                         else {})
                est_cls(**extra, **params).validate()
            except ParamError as err:
                where = "grid" if err.param in swept else "params"
                idx = f"[{grid[err.param].index(err.value)}]" if where == "grid" else ""
                raise ConfigError(name, f"algorithms.{key}.{where}.{err.param}{idx}",
                                  f"{err.param}={err.value!r} {err.rule}") from None
            cid = key + "".join(f"-{k}{_fmt(v)}" for k, v in swept.items())
            if name_problem("cell", cid) is not None:  # a swept value that cannot be part of a file name
                bad = [k for k, v in swept.items() if name_problem("cell", f"{k}{_fmt(v)}") is not None]
                where = (f"algorithms.{key}.grid.{bad[0]}[{_index(grid[bad[0]], swept[bad[0]])}]" if bad
                         else f"algorithms.{key}.grid" if swept else f"algorithms.{key}")
                _check_name(name, where, "cell", cid)
            label = a.label + ("" if not swept else " (" + ", ".join(f"{k}={_fmt(v)}" for k, v in swept.items()) + ")")
            _require(name, f"algorithms.{key}", cid not in {c.id for c in cells}, f"duplicate cell id '{cid}'")
            twin = next((c.id for c in cells if c.id.casefold() == cid.casefold()), None)
            _require(name, f"algorithms.{key}", twin is None,
                     f"cell id '{cid}' differs from cell '{twin}' in case only (on a case-insensitive file system "
                     "both cells would write the same files)")
            cells.append(Cell(cid, key, a.estimator, label, params, swept))

    cap = lambda v, m: v if m is None else min(v, m)  # noqa: E731
    built = Experiment(
        name=name, scale=scale, cfg=cfg, cells=cells,
        n_trials=cap(e.n_trials, s.max_trials), n_train=cap(e.n_train, s.max_train),
        n_test=cap(e.n_test, s.max_test), curve_points=s.curve_points or e.curve_points, max_steps=s.max_steps,
        max_users=s.max_users,
    )
    if checked:
        return built
    metrics = set(e.metrics)
    for i, p in enumerate(e.published):
        _require(name, f"experiment.published[{i}].metric", p.metric in metrics,
                 f"metric '{p.metric}' is not computed by this experiment")
        _check_selector(name, f"experiment.published[{i}].select", OmegaConf.to_container(p.select), cells, exactly_one=True)
    for i, c in enumerate(e.claims):
        _require(name, f"experiment.claims[{i}].kind", c.kind in CLAIM_KINDS,
                 f"'{c.kind}' must be {claim_kind_names()}")
        _require(name, f"experiment.claims[{i}].metric", c.metric in metrics,
                 f"metric '{c.metric}' is not computed by this experiment")
        _check_selector(name, f"experiment.claims[{i}].lhs", OmegaConf.to_container(c.lhs), cells)
        CLAIM_KINDS[c.kind].check(Claim.from_config(c), _ClaimChecks(name, f"experiment.claims[{i}]", cells))
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
    return built


# -------------------------------------------------------------------------------------
# cross-field checks: sizes against the data, claims against the cells, figure options
# -------------------------------------------------------------------------------------
#: the largest seed kept: results and provenance store it as int64
MAX_SEED = 2**63 - 1


def _same_value(a: Any, b: Any) -> bool:
    """Equal as settings: numbers by value (1 == 1.0; True is not 1), lists and mappings
    element by element."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if _is_number(a) and _is_number(b):
        return _equal(a, b)
    if isinstance(a, (list, tuple, ListConfig)) and isinstance(b, (list, tuple, ListConfig)):
        return len(a) == len(b) and all(_same_value(x, y) for x, y in zip(a, b))
    if isinstance(a, (dict, DictConfig)) and isinstance(b, (dict, DictConfig)):
        return set(map(str, a)) == set(map(str, b)) and all(_same_value(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def _index(values: list, value: Any) -> int:
    """The position of ``value`` in a grid list (by identity first: 1 and 1.0 compare equal)."""
    for i, v in enumerate(values):
        if v is value:
            return i
    return values.index(value)


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _finite(v: Any) -> bool:
    return _is_number(v) and math.isfinite(v)


def _validate_cross_fields(name: str, cfg: DictConfig, cells: list[Cell]) -> None:
    """Checks across keys, run after the cells are known (called at the end of ``_validate``)."""
    e = cfg.experiment
    _require(name, "experiment.seed", e.seed <= MAX_SEED, f"must be <= 2**63 - 1 (int64), got {e.seed}")
    _validate_dataset(name, cfg)
    _validate_published(name, cfg, cells)
    _validate_claims(name, cfg, cells)
    _validate_figure(name, cfg)


def _data_capacity(cfg: DictConfig) -> tuple[int | None, str]:
    """The most examples one trial can draw from the configured data (the largest over the
    data set and its substitutes, from the registry's official statistics), with a reason."""
    d = cfg.dataset
    params = OmegaConf.to_container(d.params)
    if d.builder == "cf_people":
        first = _builder_param(d.builder, params, "first")
        return (int(first), f"dataset.params.first = {first}: the items of the target person") \
            if _is_number(first) else (None, "")
    if d.source is None or d.builder not in ("cf_judges", "cf_viewer_stream"):
        return None, ""
    from ..data.registry import DATASETS

    entry = DATASETS.get(d.source)
    if entry is None:
        return None, ""
    names = (entry.name, *entry.substitutes)
    stat = "pairs" if d.builder == "cf_judges" else "items"
    sizes = []
    for n in names:
        st = DATASETS[n].stats if n in DATASETS else {}
        v = st.get(stat, st.get("movies")) if stat == "items" else st.get(stat)
        if v:
            sizes.append((int(v), n))
    if not sizes:
        return None, ""
    size, which = max(sizes)
    what = "judged pairs" if stat == "pairs" else "items a person can have rated"
    return size, f"{which} has {size:,} {what}"


def _validate_dataset(name: str, cfg: DictConfig) -> None:
    from ..data.builders import BUILDERS

    e, d = cfg.experiment, cfg.dataset
    # builder parameters: the type of the builder's default, finite numbers
    sig = inspect.signature(BUILDERS[d.builder])
    params = OmegaConf.to_container(d.params)
    for k, v in params.items():
        default = sig.parameters[k].default if k in sig.parameters else inspect.Parameter.empty
        key = f"dataset.params.{k}"
        if isinstance(default, bool):
            _require(name, key, isinstance(v, bool), f"must be true or false, got {v!r}")
        elif _is_number(default):
            _require(name, key, _finite(v), f"must be a finite number, got {v!r}")
            if isinstance(default, int):
                _require(name, key, isinstance(v, int) and v >= 0, f"must be an integer >= 0, got {v!r}")
        elif isinstance(default, str):
            _require(name, key, isinstance(v, str), f"must be a string, got {v!r}")
        elif isinstance(default, tuple):
            _require(name, key, isinstance(v, list) and all(_finite(x) for x in v),
                     f"must be a list of finite numbers, got {v!r}")
    _check_declared_params(name, d.builder, params)
    from ..protocols import PROTOCOLS

    if "n_train" in PROTOCOLS[e.protocol].uses:  # the protocol draws n_train (+ n_test) examples
        cap, why = _data_capacity(cfg)
        if cap is not None:
            _require(name, "experiment.n_train", e.n_train <= cap,
                     f"{e.n_train} training examples exceed what the data give ({why})")
            _require(name, "experiment.n_test", e.n_train + e.n_test <= cap,
                     f"n_train + n_test = {e.n_train + e.n_test} exceeds what the data give ({why})")
    get = lambda k: _builder_param(d.builder, params, k)  # noqa: E731 - the value the builder will use
    if d.builder == "synthetic_hgo":
        sd = get("noise_sd")
        _require(name, "dataset.params.noise_sd", _finite(sd) and sd >= 0, f"must be a number >= 0, got {sd!r}")
        sc = get("scale")
        _require(name, "dataset.params.scale", _finite(sc) and sc > 0, f"must be a number > 0, got {sc!r}")
        th = list(get("thresholds"))
        _require(name, "dataset.params.thresholds", len(th) >= 1 and all(b > a for a, b in zip(th, th[1:])),
                 f"must be a non-empty, strictly increasing list, got {th}")
        _require(name, "dataset.n_ranks", d.n_ranks == len(th) + 1,
                 f"{d.n_ranks} ranks, but {len(th)} thresholds make {len(th) + 1}")
    if d.builder == "cf_judges":
        mj = get("min_judged")
        _require(name, "dataset.params.min_judged", 2 <= mj <= 4,
                 f"must lie in 2..4 (a target judge and at least one other of the 4), got {mj}")
        from ..data.cf import INSTANCE_VALUES

        iv = get("instance_values")
        _require(name, "dataset.params.instance_values", iv in INSTANCE_VALUES,
                 f"'{iv}' must be one of {INSTANCE_VALUES}")
        _require(name, "dataset.n_ranks", d.n_ranks == 3, f"the judges' scores 0-2 make 3 ranks, got {d.n_ranks}")


def _builder_param(builder: str, params: dict[str, Any], key: str) -> Any:
    """A builder parameter as the builder will get it: the config's value, else the default
    of the builder's signature (defaults are stated there only)."""
    from ..data.builders import BUILDERS

    return params[key] if key in params else inspect.signature(BUILDERS[builder]).parameters[key].default


def _check_declared_params(name: str, builder: str, params: dict[str, Any]) -> None:
    """The builder's own declared constraints (:data:`rankrepro.data.builders.PARAM_CONSTRAINTS`)."""
    from ..data.builders import PARAM_CONSTRAINTS

    for k, (ok, allowed) in PARAM_CONSTRAINTS.get(builder, {}).items():
        if k in params:
            _require(name, f"dataset.params.{k}", ok(params[k]), f"must be {allowed}, got {params[k]!r}")


def _selector_values(name: str, key: str, selector: dict[str, Any], cells: list[Cell]) -> None:
    """Every value a selector lists names something a cell has (a value matching no cell
    is silently ignored by ``select`` when another value matches)."""
    for k, want in selector.items():
        wants = list(want) if isinstance(want, (list, tuple)) else [want]
        if k == "best":
            _require(name, f"{key}.best", isinstance(want, bool), f"must be true or false, got {want!r}")
            continue
        have = ({c.algorithm for c in cells} if k == "algorithm" else {c.id for c in cells} if k == "cell"
                else {c.estimator for c in cells} if k == "estimator" else None)
        for w in wants:
            if have is not None:
                _require(name, f"{key}.{k}", w in have, f"'{w}' is not a {k} of this experiment (known: {sorted(have)})")
            else:
                vals = [c.params[k] for c in cells if k in c.params]
                _require(name, f"{key}.{k}", any(_equal(v, w) for v in vals),
                         f"{k}={w!r} is not a value of any cell (values: {sorted({_fmt(v) for v in vals})})")


def _validate_published(name: str, cfg: DictConfig, cells: list[Cell]) -> None:
    from ..metrics import METRICS
    from ..protocols import PROTOCOLS

    e = cfg.experiment
    for i, p in enumerate(e.published):
        key = f"experiment.published[{i}]"
        _require(name, f"{key}.mean", math.isfinite(p.mean), f"must be a finite number, got {p.mean}")
        _require(name, f"{key}.ci", p.ci is None or (math.isfinite(p.ci) and p.ci >= 0),
                 f"a 95% half-width must be a finite number >= 0, got {p.ci}")
        _selector_values(name, f"{key}.select", OmegaConf.to_container(p.select), cells)
        if p.round is not None:
            _require(name, f"{key}.round", METRICS[p.metric].curve,
                     f"metric '{p.metric}' is one value per trial, not a curve: remove 'round'")
            _require(name, f"{key}.round", p.round >= 1, f"must be >= 1, got {p.round}")
            last = PROTOCOLS[e.protocol].last_round(e)
            if last is not None:
                _require(name, f"{key}.round", p.round <= last,
                         f"round {p.round} is beyond the {last} training rounds of the run")


def _validate_claims(name: str, cfg: DictConfig, cells: list[Cell]) -> None:
    from ..metrics import METRICS
    from ..protocols import PROTOCOLS

    e = cfg.experiment
    seen: dict[str, int] = {}
    for i, c in enumerate(e.claims):
        key = f"experiment.claims[{i}]"
        _require(name, f"{key}.id", c.id not in seen, f"claim id '{c.id}' is used twice (first at claims[{seen.get(c.id)}])")
        seen[c.id] = i
        curve = METRICS[c.metric].curve
        if c.rounds is not None:
            r = list(c.rounds)
            _require(name, f"{key}.rounds", curve,
                     f"metric '{c.metric}' is one value per trial, not a curve: remove 'rounds'")
            _require(name, f"{key}.rounds", len(r) == 2, f"must be [first, last] (null = open), got {r}")
            _require(name, f"{key}.rounds", all(x is None or x >= 1 for x in r), f"rounds must be >= 1, got {r}")
            _require(name, f"{key}.rounds", r[0] is None or r[1] is None or r[0] < r[1],
                     f"first round {r[0]} must come before last round {r[1]}")
            last = PROTOCOLS[e.protocol].last_round(e)
            if last is not None and r[0] is not None:
                _require(name, f"{key}.rounds", r[0] < last,
                         f"first round {r[0]} is not before the end of the {last} training rounds")
            if last is not None and r[1] is not None:
                _require(name, f"{key}.rounds", r[1] <= last,
                         f"last round {r[1]} is beyond the {last} training rounds of the run")
        _require(name, f"{key}.factor", math.isfinite(c.factor) and c.factor > 0,
                 f"must be a finite number > 0, got {c.factor}")
        _require(name, f"{key}.expect", c.expect is None or math.isfinite(c.expect), f"must be finite, got {c.expect}")
        lhs_sel = OmegaConf.to_container(c.lhs)
        _selector_values(name, f"{key}.lhs", lhs_sel, cells)
        lhs = select(cells, lhs_sel)
        claim, kind = Claim.from_config(c), CLAIM_KINDS[c.kind]
        kind.check_cells(claim, lhs, _ClaimChecks(name, key, cells, curve))
        for k, default in CLAIM_OPTIONAL.items():  # a key the kind does not read keeps its default
            takers = " or ".join(f"'{n}'" for n, other in CLAIM_KINDS.items() if k in other.reads)
            _require(name, f"{key}.{k}", k in kind.reads or getattr(claim, k) == default,
                     f"'{k}' applies to {takers} claims only, not '{c.kind}'")


@dataclass
class _ClaimChecks:
    """What a claim kind's config checks use (:class:`rankrepro.claims.Checks`), for the
    claim at ``key``."""

    name: str
    key: str
    cells: list[Cell]
    curve: bool = False

    def require(self, key: str, ok: bool, message: str) -> None:
        _require(self.name, f"{self.key}.{key}" if key else self.key, ok, message)

    def check_selector(self, key: str, selector: dict[str, Any]) -> None:
        _check_selector(self.name, f"{self.key}.{key}", selector, self.cells)

    def selected(self, key: str, selector: dict[str, Any]) -> list[Cell]:
        _selector_values(self.name, f"{self.key}.{key}", selector, self.cells)
        return select(self.cells, selector)

    def compatible(self, a: Cell, b: Cell, match: list[str]) -> bool:
        return _compatible(a, b, match)

    equal = staticmethod(_equal)
    fmt = staticmethod(_fmt)


def _compatible(a: Cell, b: Cell, match: list[str]) -> bool:
    """As the claim evaluation pairs cells: equal on every matched parameter both have."""
    return all(not (k in a.params and k in b.params and not _equal(a.params[k], b.params[k])) for k in match)


def _validate_figure(name: str, cfg: DictConfig) -> None:
    """Figure and line-style options as matplotlib would take them."""
    import matplotlib.colors as mcolors
    import matplotlib.markers as mmarkers
    import matplotlib.scale as mscale

    f = cfg.experiment.figure
    if f is not None:
        scales = mscale.get_scale_names()
        _require(name, "experiment.figure.xscale", f.xscale in scales, f"'{f.xscale}' is not a scale (known: {scales})")
        if f.ylim is not None:
            yl = list(f.ylim)
            _require(name, "experiment.figure.ylim", len(yl) == 2 and all(_finite(v) for v in yl) and yl[0] < yl[1],
                     f"must be [bottom, top], two finite numbers with bottom < top, got {yl}")
    for k, a in cfg.algorithms.items():
        if a.color is not None:
            _require(name, f"algorithms.{k}.color", mcolors.is_color_like(a.color),
                     f"'{a.color}' is not a matplotlib colour (a name, '#rrggbb', 'C0'..)")
        if a.marker is not None:
            try:
                mmarkers.MarkerStyle(a.marker)
                ok = True
            except (ValueError, TypeError):
                ok = False
            _require(name, f"algorithms.{k}.marker", ok, f"'{a.marker}' is not a matplotlib marker (e.g. o s ^ v D x +)")
        _require(name, f"algorithms.{k}.linestyle", _linestyle_ok(a.linestyle),
                 f"'{a.linestyle}' is not a matplotlib line style ('-', '--', '-.', ':', 'solid', 'dashed', ...)")


def _linestyle_ok(ls: Any) -> bool:
    from matplotlib import rcsetup

    try:
        rcsetup.validate_linestyle(ls) if hasattr(rcsetup, "validate_linestyle") else rcsetup._validate_linestyle(ls)
        return True
    except (ValueError, TypeError):
        return False


def load_catalog(scale: str = "paper", config_dir: str | os.PathLike | None = None,
                 cache_dir: str | os.PathLike | None = None) -> dict[str, Experiment]:
    """Every experiment, validated.  The first bad config raises.

    ``cache_dir``: keep the validated catalog there and read it back while nothing it depends
    on changed (:func:`catalog_key`: the config files' contents, the scale, this package's
    code and the versions of Python, OmegaConf, Hydra and Matplotlib).  Composing and checking
    the 20 experiments and their variants takes ~10 s, reading them back ~1 s: the workflow
    does it at every start.  The kept file is data, never code (JSON: each experiment's
    resolved config and its cells' fingerprints, :mod:`rankrepro.pipeline.cache`); it is
    validated when read and ignored (composed again and replaced) when it does not validate.
    A config that does not load is never kept."""
    root = Path(config_dir).resolve() if config_dir else find_config_dir()
    names = list_experiments(root)
    if cache_dir is None:
        cat = {n: load_experiment(n, scale, config_dir=root) for n in names}
        check_collisions(cat)
        return cat
    from . import cache

    key = catalog_key(root, scale)
    build = lambda n, resolved: _from_kept(n, scale, resolved)  # noqa: E731
    kept = cache.read(cache_dir, names, scale, key, build, check_collisions)
    if kept is not None:
        return kept
    cat = {n: load_experiment(n, scale, config_dir=root) for n in names}
    check_collisions(cat)
    cache.write(cache_dir, cat, scale, key, build, check_collisions, _same_catalogs)
    return cat


def _from_kept(name: str, scale: str, resolved: dict) -> Experiment:
    """An experiment from the resolved config a kept catalog holds, rebuilt and checked as a
    job does from its resolved file (:func:`load_resolved`), names included."""
    cfg = OmegaConf.create(resolved)
    OmegaConf.set_struct(cfg, True)
    exp = _validate(name, scale, cfg, checked=True)
    _add_sensitivity(exp, checked=True)
    return exp


def _same_catalogs(a: dict[str, Experiment], b: dict[str, Experiment]) -> bool:
    """Whether two catalogs are the same for every use: resolved configs (main and variants),
    sizes, cells (every field) and fingerprints."""
    if list(a) != list(b):
        return False
    for name in a:
        x, y = a[name], b[name]
        if (x.to_yaml() != y.to_yaml() or x.all_cells != y.all_cells or list(x.variants) != list(y.variants)
                or any(x.variants[k].to_yaml() != y.variants[k].to_yaml() or x.variants[k].cells != y.variants[k].cells
                       for k in x.variants)):
            return False
        if any(getattr(x, f) != getattr(y, f) for f in ("scale", "n_trials", "n_train", "n_test", "curve_points",
                                                          "max_steps", "max_users")):
            return False
        if any(cell_fingerprint(*x.variant_of(c)) != cell_fingerprint(*y.variant_of(c)) for c in x.all_cells):
            return False
    return True


def check_collisions(cat: dict[str, Experiment]) -> None:
    """No two experiments write the same output: the same artefact files
    (``results/<paper>/<artefact>.*``) or the same figure (``figures/<paper>/<file>.png``),
    compared without case (one file on a case-insensitive file system).  Otherwise the
    workflow would plan one job for both and silently drop one of them.  Raises
    :class:`ConfigError` on the later experiment, naming both."""
    seen: dict[tuple[str, str, str], str] = {}
    for name, exp in cat.items():
        outs = [("artefact", f"results/{exp.paper}/{exp.artefact}.json", "experiment.artefact")]
        if exp.cfg.experiment.figure is not None:
            key = "experiment.figure.file" if exp.cfg.experiment.figure.file is not None else "experiment.figure"
            outs.append(("figure", f"figures/{exp.paper}/{exp.figure_file}.png", key))
        for what, path, key in outs:
            other = seen.setdefault((what, path.casefold(), ""), name)
            if other != name:
                theirs = cat[other]
                how = ("" if theirs.cfg.experiment.figure is None or what != "figure"
                       else f" (its figure.file is {theirs.cfg.experiment.figure.file!r})"
                       if theirs.cfg.experiment.figure.file is not None else " (its artefact's name)")
                raise ConfigError(name, key, f"experiments '{other}' and '{name}' both write {path}{how}: "
                                             f"give one of them another {'figure.file' if what == 'figure' else 'name'}")


def default_cache_dir() -> Path:
    """Where the workflow keeps validated catalogs: ``$RANKREPRO_CACHE_DIR``, else
    ``$XDG_CACHE_HOME/rankrepro`` (``~/.cache/rankrepro``).  Shared by checkouts and scratch
    copies alike: a file is only read for the very configs, code and libraries it was made from."""
    env = os.environ.get("RANKREPRO_CACHE_DIR")
    if env:
        return Path(env)
    try:
        return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "rankrepro"
    except RuntimeError:  # no home directory to be found: beside Snakemake's own records
        return Path(".snakemake") / "rankrepro"


def catalog_key(config_dir: str | os.PathLike, scale: str) -> str:
    """What a validated catalog depends on, hashed: every file under the config folder (path
    and bytes), the scale, every module of this package, and the versions of the libraries
    that compose and check it."""
    from importlib.metadata import PackageNotFoundError, version
    import sys

    h = hashlib.sha256(f"{scale}\0{sys.version}\0".encode())
    for dist in ("omegaconf", "hydra-core", "matplotlib"):
        try:
            h.update(f"{dist}={version(dist)}\0".encode())
        except PackageNotFoundError:
            h.update(f"{dist}=?\0".encode())
    for base, pattern in ((Path(config_dir), "*"), (Path(__file__).resolve().parents[1], "*.py")):
        for p in sorted(base.rglob(pattern)):
            if p.is_file() and "__pycache__" not in p.parts:
                h.update(str(p.relative_to(base)).encode() + b"\0")
                h.update(p.read_bytes())
                h.update(b"\0")
    return h.hexdigest()[:20]
