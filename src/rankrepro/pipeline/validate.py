"""A composed experiment config checked and expanded: its sweep into cells (:func:`validate`, the
checks across keys in :mod:`.cross_checks`), its sensitivity values into variants and the cells they
re-run (:func:`add_sensitivity`).  All before any compute; errors are :class:`.ConfigError` naming the key."""

from __future__ import annotations

import inspect
import itertools
import json
import math
import pickle
from typing import Any

from omegaconf import DictConfig, OmegaConf, open_dict
from omegaconf.errors import MissingMandatoryValue

from ..algorithms import FEATURE_MAPS, ParamError
from .cells import Cell, Experiment, cell_fingerprint, fmt_value, is_number, same_value
from .config_errors import ConfigError, check_name, require
from .config_limits import MAX_CELLS, check_hyperparameter_int, check_published_twins, check_sizes
from .names import name_problem
from .schema import DIAGNOSIS_KINDS, SCHEMA
from .targets import TargetError, check_target, is_target


_LETOR = ("valid_ndcg@10", "valid_map", "train_seconds", "selected_step", "selected_train_seconds",
          "selected_pairs_per_second", "test_map", "test_ndcg@1", "test_ndcg@5", "test_ndcg@10", "query_map",
          "query_ndcg@1", "query_ndcg@5", "query_ndcg@10")
#: the metrics each protocol computes: a metric an experiment lists that its protocol never
#: computes is refused (it would give cells without a row of it).  Kept here, outside the
#: protocols' modules, which are in their cells' code fingerprints; tests/test_produced_metrics.py
#: runs the protocols and checks that what they emit is listed.
PRODUCES: dict[str, frozenset[str]] = {
    "online": frozenset({"online_rank_loss", "test_rank_loss", "online_amae", "online_qwk", "test_amae",
                         "test_qwk"}),
    "collab_gp": frozenset({"mae", "zero_one", "fit_seconds", "em_iterations", "ep_unconverged", "amae", "qwk"}),
    "letor": frozenset(_LETOR),
    "letor_seeds": frozenset(_LETOR),
    "ranked_list": frozenset({"list_discordant", "list_ndcg", "list_rr", "list_ap"}),
    "coactive_movies": frozenset({"regret", "wall_seconds", "learner_seconds", "train_seconds"}),
    "coactive_ranking": frozenset({"regret", "wall_seconds", "train_seconds"}),
}


def validate(name: str, scale: str, cfg: DictConfig, checked: bool = False) -> Experiment:
    """Check the composed config and expand its cells.  ``checked``: the config was checked
    in full before (a resolved file the workflow wrote): only what builds the experiment runs,
    not the checks of published values, claims, significance and figure options."""
    from ..metrics import METRICS
    from .. import metric_names as _metric_names  # noqa: F401 - every registered metric name
    from ..protocols import PROTOCOLS
    from ..data.builders import BUILDERS, INJECTED

    e = cfg.experiment
    paper, artefact = name.split("/", 1)
    require(name, "experiment.paper", e.paper == paper, f"'{e.paper}' must equal the folder name '{paper}'")
    require(name, "experiment.artefact", e.artefact == artefact,
            f"'{e.artefact}' must equal the file name '{artefact}'")
    # names that become parts of output paths (a resolved file or a kept catalog is checked too)
    check_name(name, "experiment.paper", "paper", e.paper)
    check_name(name, "experiment.artefact", "artefact", e.artefact)
    if e.get("claim_family") is not None:
        check_name(name, "experiment.claim_family", "paper", e.claim_family)
    if e.figure is not None and e.figure.file is not None:
        check_name(name, "experiment.figure.file", "figure", e.figure.file)
    require(name, "experiment.kind", e.kind in ("table", "figure"), f"'{e.kind}' must be 'table' or 'figure'")
    require(name, "experiment.n_trials", e.n_trials >= 1, f"must be >= 1, got {e.n_trials}")
    require(name, "experiment.protocol", e.protocol in PROTOCOLS,
            f"unknown protocol '{e.protocol}' (known: {sorted(PROTOCOLS)})")
    proto = PROTOCOLS[e.protocol]
    # what depends on the protocol: the fields it reads (only those must be set), its own checks
    proto.validate(cfg, lambda key, ok, message: require(name, key, ok, message))
    require(name, "experiment.compare", e.compare in ("mean", "draw"),
            f"must be 'mean' (the published value is a mean over trials) or 'draw' (one run), got '{e.compare}'")
    require(name, "experiment.claims_unit", e.claims_unit in ("trials", "queries"),
            f"must be 'trials' or 'queries', got '{e.claims_unit}'")
    require(name, "experiment.claims_unit", e.claims_unit != "queries" or e.protocol in ("letor", "letor_seeds"),
            f"'queries' needs per-query values (protocol letor or letor_seeds), not protocol '{e.protocol}'")
    for key, a in cfg.algorithms.items():
        require(name, f"algorithms.{key}.deterministic", not a.deterministic or hasattr(proto, "trials_of"),
                f"only a protocol that replicates over seeds (letor_seeds) runs a deterministic learner once; "
                f"protocol '{e.protocol}' runs every cell {e.n_trials} times: remove the key")
    require(name, "experiment.n_test", e.n_test >= 0, f"must be >= 0, got {e.n_test}")
    require(name, "experiment.seed", e.seed >= 0, f"must be >= 0, got {e.seed}")
    require(name, "experiment.curve_points", e.curve_points >= 1, f"must be >= 1, got {e.curve_points}")
    check_sizes(name, cfg)
    require(name, "experiment.features", e.features in FEATURE_MAPS,
            f"unknown feature map '{e.features}' (known: {sorted(FEATURE_MAPS)})")
    require(name, "experiment.metrics", len(e.metrics) > 0, "list at least one metric")
    for i, m in enumerate(e.metrics):
        require(name, f"experiment.metrics[{i}]", m in METRICS, f"unknown metric '{m}' (known: {sorted(METRICS)})")
        made = PRODUCES.get(e.protocol)
        require(name, f"experiment.metrics[{i}]", made is None or m in made,
                f"protocol '{e.protocol}' does not compute '{m}' (it computes: {sorted(made or ())})")
    if any(METRICS[m].needs_test for m in e.metrics):
        require(name, "experiment.n_test", e.n_test >= 1, "a test metric needs n_test >= 1")
    if e.kind == "figure":
        require(name, "experiment.figure", e.figure is not None, "a figure experiment needs a 'figure' block")
    # a table may carry a figure block too (Harrington's Table 2 and Fig. 3 share their runs)

    s = cfg.scale
    for key in ("max_trials", "max_train", "max_test", "curve_points", "max_steps", "max_users"):
        v = s.get(key)
        require(name, f"scale.{key}", v is None or v >= 1, f"must be >= 1 or null, got {v}")

    d = cfg.dataset
    if d.source is not None:
        from ..data.registry import DATASETS

        require(name, "dataset.source", d.source in DATASETS,
                f"unknown data set '{d.source}' (known: {sorted(DATASETS)})")
    require(name, "dataset.builder", d.builder in BUILDERS,
            f"unknown data-set builder '{d.builder}' (known: {sorted(BUILDERS)})")
    require(name, "dataset.n_ranks", d.n_ranks is None or d.n_ranks >= 2, f"must be >= 2, got {d.n_ranks}")
    sig = inspect.signature(BUILDERS[d.builder])
    for k in d.params:
        require(name, f"dataset.params.{k}", k not in INJECTED and k in sig.parameters
                and sig.parameters[k].kind == inspect.Parameter.KEYWORD_ONLY,
                f"'{d.builder}' takes no parameter '{k}'")
    needs_data = "data_path" in sig.parameters
    require(name, "dataset.source", needs_data == (d.source is not None),
            f"builder '{d.builder}' {'needs' if needs_data else 'takes no'} downloaded data: "
            f"{'set' if needs_data else 'remove'} dataset.source")

    require(name, "algorithms", len(cfg.algorithms) > 0, "list at least one algorithm")
    family = proto.estimators
    cells: list[Cell] = []
    ids: set[str] = set()  # the cell ids so far, and by their case-folded form: each check O(1)
    folded: dict[str, str] = {}
    for key, a in cfg.algorithms.items():
        check_name(name, f"algorithms.{key}", "algorithm", key)
        if is_target(a.estimator):  # _target_: package.module.ClassName, imported and checked now
            try:
                est_cls = check_target(a.estimator, e.protocol)
            except TargetError as err:
                raise ConfigError(name, f"algorithms.{key}._target_", str(err)) from None
        else:
            require(name, f"algorithms.{key}.estimator", a.estimator in family,
                    f"unknown estimator '{a.estimator}' for protocol '{e.protocol}' (known: {sorted(family)})")
            est_cls = family[a.estimator]
        known = set(est_cls._param_names()) - {"n_ranks", "seed"}
        fixed = OmegaConf.to_container(a.params)
        grid = OmegaConf.to_container(a.grid)
        for where, block in (("params", fixed), ("grid", grid)):
            for pk in block:
                require(name, f"algorithms.{key}.{where}.{pk}", pk in known,
                        f"{est_cls.__name__} has no hyperparameter '{pk}' (known: {sorted(known)})")
        fixed = {k: v for k, v in fixed.items() if k not in grid}  # a swept value overrides a fixed one
        for pk, vals in grid.items():
            require(name, f"algorithms.{key}.grid.{pk}", isinstance(vals, list) and len(vals) > 0,
                    "a grid entry must be a non-empty list")
            dup = _first_repeat(vals)  # 1 and 1.0 are one setting run twice under two cell ids
            if dup is not None:
                j, first = dup
                raise ConfigError(name, f"algorithms.{key}.grid.{pk}[{j}]",
                                  f"{pk}={vals[j]!r} equals {pk}[{first}]={vals[first]!r}: the same cells would run "
                                  "twice under two ids")
            for j, v in enumerate(vals):
                check_hyperparameter_int(name, f"algorithms.{key}.grid.{pk}[{j}]", v)
        for pk, v in fixed.items():
            check_hyperparameter_int(name, f"algorithms.{key}.params.{pk}", v)
        n_cells = len(cells) + math.prod(len(v) for v in grid.values())
        require(name, f"algorithms.{key}.grid", n_cells <= MAX_CELLS,
                f"the grids expand to {n_cells:,} cells, more than an experiment may have ({MAX_CELLS:,}): each cell "
                "is a job, a set of files and a line of the report")
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
            cid = key + "".join(f"-{k}{fmt_value(v)}" for k, v in swept.items())
            if name_problem("cell", cid) is not None:  # a swept value that cannot be part of a file name
                bad = [k for k, v in swept.items() if name_problem("cell", f"{k}{fmt_value(v)}") is not None]
                where = (f"algorithms.{key}.grid.{bad[0]}[{_index(grid[bad[0]], swept[bad[0]])}]" if bad
                         else f"algorithms.{key}.grid" if swept else f"algorithms.{key}")
                check_name(name, where, "cell", cid)
            label = a.label + ("" if not swept else " (" + ", ".join(f"{k}={fmt_value(v)}" for k, v in swept.items()) + ")")
            require(name, f"algorithms.{key}", cid not in ids, f"duplicate cell id '{cid}'")
            twin = folded.get(cid.casefold())
            require(name, f"algorithms.{key}", twin is None,
                    f"cell id '{cid}' differs from cell '{twin}' in case only (on a case-insensitive file system "
                    "both cells would write the same files)")
            cells.append(Cell(cid, key, a.estimator, label, params, swept))
            ids.add(cid)
            folded[cid.casefold()] = cid

    cap = lambda v, m: v if m is None else min(v, m)  # noqa: E731
    built = Experiment(
        name=name, scale=scale, cfg=cfg, cells=cells,
        n_trials=cap(e.n_trials, s.max_trials), n_train=cap(e.n_train, s.max_train),
        n_test=cap(e.n_test, s.max_test), curve_points=s.curve_points or e.curve_points, max_steps=s.max_steps,
        max_users=s.max_users,
    )
    if not checked:
        # imported here: the claims' kinds and statistics (SciPy's) are not needed by a job,
        # which reads a config the workflow checked in full when it started
        from .config_meaning import check_meaning, check_scale
        from .cross_checks import check_cross_fields

        check_scale(name, scale, cfg)
        check_cross_fields(name, cfg, cells)
        check_meaning(name, cfg, cells)
        check_published_twins(name, cfg, cells)
    return built


def _first_repeat(values: list) -> tuple[int, int] | None:
    """(j, i): the first value ``values[j]`` equal as a setting (:func:`same_value`) to an earlier
    ``values[i]``, or None.  Numbers are sorted and compared with their neighbours, everything
    else by its canonical text: O(n log n), where comparing every pair took seconds for a grid
    of a few thousand values."""
    hits: list[tuple[int, int]] = []
    nums = sorted((float(v), i) for i, v in enumerate(values) if is_number(v))
    for (x, i), (y, j) in zip(nums, nums[1:]):
        if same_value(values[i], values[j]):
            hits.append((max(i, j), min(i, j)))
    seen: dict[str, int] = {}
    for j, v in enumerate(values):
        if is_number(v):
            continue
        k = f"{type(v).__name__}:{json.dumps(v, sort_keys=True, default=str)}"
        if k in seen:
            hits.append((j, seen[k]))
        else:
            seen[k] = j
    return min(hits) if hits else None


def _index(values: list, value: Any) -> int:
    """The position of ``value`` in a grid list (by identity first: 1 and 1.0 compare equal)."""
    for i, v in enumerate(values):
        if v is value:
            return i
    return values.index(value)


def sensitivity_cell_id(base: str, choice: str, value: str) -> str:
    return f"{base}~{choice}={value}"


def _check_against_schema(cfg: DictConfig, sets: dict) -> None:
    """The keys a sensitivity value set in ``cfg`` (a copy of the main config, which the schema
    accepted) merged into the schema: an unknown key or a value of the wrong type raises as the
    whole config's merge would, and so does a set subtree that leaves a required field MISSING.
    Only the set keys are merged (the rest is the main config's, checked): the whole config's
    merge took ~0.25 s per variant, a quarter of composing the catalog."""
    paths = [str(k).split(".") for k in sets]
    if any("[" in str(k) for k in sets):  # a list element: the whole config, as it is
        OmegaConf.to_container(OmegaConf.merge(SCHEMA, OmegaConf.to_container(cfg)), throw_on_missing=True)
        return
    sparse: dict = {}
    for *head, last in paths:
        parent = OmegaConf.select(cfg, ".".join(head)) if head else cfg
        node = sparse
        for part in head:
            node = node.setdefault(part, {})
        node[last] = OmegaConf.to_container(parent)[last]  # as set, interpolations unresolved
    merged = OmegaConf.merge(SCHEMA, sparse)
    for *head, last in paths:
        parent = OmegaConf.select(merged, ".".join(head)) if head else merged
        if OmegaConf.is_missing(parent, last):
            err = MissingMandatoryValue(f"Missing mandatory value: {'.'.join([*head, last])}")
            err.full_key = ".".join([*head, last])
            raise err
        value = parent._get_node(last)
        if OmegaConf.is_config(value):
            OmegaConf.to_container(value, throw_on_missing=True)


def as_written(cfg: DictConfig) -> Any:
    """The config as written (interpolations unresolved): what its YAML text says."""
    return OmegaConf.to_container(cfg, resolve=False, enum_to_str=True)


def same_as_written(a: Any, b: Any) -> bool:
    """Whether two configs as written (:func:`as_written`) have the same YAML text: the same keys in
    the same order, the same types (1 is not 1.0, "1" or True) and the same values (floats as
    written: NaN is NaN, -0.0 is not 0.0).  Comparing the trees instead of their YAML texts
    spares writing a whole config's YAML twice per sensitivity value (~70 ms each, a fifth of
    composing the catalog)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return ([(type(k), k) for k in a] == [(type(k), k) for k in b]
                and all(same_as_written(a[k], b[k]) for k in a))
    if isinstance(a, list):
        return len(a) == len(b) and all(same_as_written(x, y) for x, y in zip(a, b))
    if isinstance(a, float):
        return repr(a) == repr(b)
    return a == b


def add_sensitivity(exp: Experiment, only: tuple[str, str] | frozenset | None = None, checked: bool = False) -> None:
    """Validate the ``sensitivity`` block and the diagnoses, build one variant experiment
    per non-main value, and list the sensitivity cells: a main cell re-run under a value
    only where that value changes the cell's computation (its fingerprint).  ``only``: build
    this (choice, value) variant alone, or those of a set of them (a job that runs some
    sensitivity cells needs their variants only)."""
    name, e = exp.name, exp.cfg.experiment
    wanted = None if only is None else {only} if isinstance(only, tuple) else set(only)
    choices = [str(sc.choice) for sc in e.sensitivity]
    main_fps: dict[str, str] = {}
    # the main config as written, which each value's config is compared with (not when checked)
    main_tree = None if checked else as_written(exp.cfg)
    main_bytes = None
    for i, sc in enumerate(e.sensitivity):
        key = f"experiment.sensitivity[{i}]"
        check_name(name, f"{key}.choice", "label", sc.choice)
        require(name, f"{key}.choice", sc.choice not in choices[:i], f"duplicate choice '{sc.choice}'")
        require(name, f"{key}.choice", sc.choice.casefold() not in {c.casefold() for c in choices[:i]},
                f"choice '{sc.choice}' differs from an earlier one in case only (its cells' files would be the same "
                "on a case-insensitive file system)")
        require(name, f"{key}.values", len(sc["values"]) >= 2, "list at least two values (the main one and an alternative)")
        require(name, f"{key}.main", sc.main in sc["values"],
                f"'{sc.main}' is not one of the values ({', '.join(map(str, sc['values']))})")
        alternatives = [OmegaConf.to_container(v) for lb, v in sc["values"].items() if lb != sc.main]
        twin = next((e.sensitivity[h].choice for h in range(i)
                     if same_value(alternatives, [OmegaConf.to_container(v) for lb, v in e.sensitivity[h]["values"].items()
                                                  if lb != e.sensitivity[h].main])), None)
        require(name, f"{key}.values", twin is None,
                f"choice '{sc.choice}' sets the same alternatives as choice '{twin}': one question asked twice")
        labels = [str(v) for v in sc["values"]]
        settings = {str(v): OmegaConf.to_container(s) for v, s in sc["values"].items()}
        for j, (label, sets) in enumerate(sc["values"].items()):
            vkey = f"{key}.values.{label}"
            check_name(name, vkey, "label", label)
            for k in sets:  # the alternatives run on the main cells' seeds: that is what compares them
                require(name, f"{vkey}.{k}", str(k) != "experiment.seed",
                        "a sensitivity value may not set the seed: its cells rerun the main cells on the same "
                        "seeds (common random numbers), which is what makes the comparison")
            same = next((v for v in labels[:j] if same_value(settings[v], settings[str(label)])), None)
            require(name, vkey, same is None,
                    f"value '{label}' sets the same as value '{same}': the same computation listed twice")
            twin = next((v for v in labels[:j] if v.casefold() == str(label).casefold()), None)
            require(name, vkey, twin is None, f"value '{label}' differs from value '{twin}' in case only (their "
                                              "cells' files would be the same on a case-insensitive file system)")
            if wanted is not None and (str(sc.choice), str(label)) not in wanted:
                continue  # a job that runs one sensitivity cell needs its variant only
            if label == sc.main and (checked or not sets):
                continue  # nothing to build; a main value that sets keys is checked below
            # a copy of the main config through pickle: the same tree, node types and flags as
            # copy.deepcopy, in a third of its time (39 variants of an experiment: ~0.5 s -> 0.2 s);
            # the main config pickled once per experiment
            if main_bytes is None:
                main_bytes = pickle.dumps(exp.cfg, protocol=pickle.HIGHEST_PROTOCOL)
            cfg = pickle.loads(main_bytes)
            OmegaConf.set_readonly(cfg, False)
            for k, v in sets.items():
                try:
                    with open_dict(cfg):  # new hyperparameters are allowed; the schema re-merge checks the rest
                        OmegaConf.update(cfg, str(k), v, merge=False)
                except Exception as err:
                    raise ConfigError(name, f"{vkey}.{k}", str(err).splitlines()[0]) from None
            if sets and not checked:
                try:
                    _check_against_schema(cfg, sets)
                except Exception as err:  # an unknown key or a value of the wrong type
                    k = getattr(err, "full_key", None) or ", ".join(map(str, sets))
                    raise ConfigError(name, f"{vkey}.{k}", str(err).splitlines()[0]) from None
            if label != sc.main and sets and not checked:
                require(name, vkey, not same_as_written(as_written(cfg), main_tree),
                        f"value '{label}' sets what the main config already has ("
                        + ", ".join(f"{k}={v}" for k, v in sets.items()) + f"): it is the main value '{sc.main}' again")
            if label == sc.main:
                require(name, vkey, same_as_written(as_written(cfg), main_tree),
                        "the main value must leave the main config unchanged (it sets "
                        + ", ".join(f"{k}={v}" for k, v in sets.items()) + ")")
                continue
            try:
                var = validate(name, exp.scale, cfg, checked=checked)
            except ConfigError as err:
                raise ConfigError(name, f"{vkey} -> {err.key}", str(err).split(": ", 1)[-1]) from None
            main_ids = {c.id: c for c in exp.cells}
            extra = [c.id for c in var.cells if c.id not in main_ids]
            require(name, vkey, not extra,
                    f"a sensitivity value may change how cells run or narrow a grid, not add cells ({', '.join(extra)})")
            exp.variants[(str(sc.choice), str(label))] = var
            for vc in var.cells:
                c = main_ids[vc.id]
                if c.id not in main_fps:  # each main cell's fingerprint computed once, not once per value
                    main_fps[c.id] = cell_fingerprint(exp, c)
                if cell_fingerprint(var, vc) != main_fps[c.id]:
                    sid = sensitivity_cell_id(c.id, sc.choice, str(label))
                    check_name(name, vkey, "cell", sid)
                    exp.sensitivity_cells.append(Cell(sid, c.algorithm,
                                                      c.estimator, vc.label, vc.params, vc.swept,
                                                      base=c.id, choice=str(sc.choice), value=str(label)))
    for what, items in (("published", e.published), ("claims", e.claims)):
        for i, it in enumerate(items):
            d = it.diagnosis
            if d is None:
                continue
            key = f"experiment.{what}[{i}].diagnosis"
            require(name, f"{key}.kind", d.kind in DIAGNOSIS_KINDS,
                    f"'{d.kind}' must be one of {', '.join(repr(k) for k in DIAGNOSIS_KINDS)}")
            require(name, f"{key}.text", bool(str(d.text).strip()), "say what explains the disagreement")
            if "{{" in str(d.text) or "{%" in str(d.text):  # generated numbers (report/diagnosis.py)
                import jinja2

                try:
                    jinja2.Environment().parse(str(d.text))
                except jinja2.TemplateSyntaxError as err:
                    require(name, f"{key}.text", False, f"its numbers do not parse as a template: {err}")
            if d.kind == "open protocol choice":
                require(name, f"{key}.choice", d.choice in choices,
                        f"an open protocol choice names one of the experiment's sensitivity choices "
                        f"({', '.join(choices) or 'none declared'}), got {d.choice!r}")
            elif d.choice is not None:
                require(name, f"{key}.choice", d.choice in choices,
                        f"'{d.choice}' is not a sensitivity choice of this experiment ({', '.join(choices) or 'none'})")
