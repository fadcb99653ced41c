"""Checks across keys, run once a config's cells are known: selectors, published values,
claims and significance against the cells, sizes against the data, builder parameters,
figure options.  A resolved config the workflow wrote was checked so before and skips them."""

from __future__ import annotations

import inspect
import math
from dataclasses import dataclass
from typing import Any

from omegaconf import DictConfig, OmegaConf

from ..claims import KINDS as CLAIM_KINDS, OPTIONAL_DEFAULTS as CLAIM_OPTIONAL, Claim, kind_names as claim_kind_names
from .cells import SELECTOR_KEYS, Cell, equal_values, fmt_value, is_number, select
from .config_errors import require


#: the largest seed kept: results and provenance store it as int64
MAX_SEED = 2**63 - 1


def _finite(v: Any) -> bool:
    return is_number(v) and math.isfinite(v)


def check_cross_fields(name: str, cfg: DictConfig, cells: list[Cell]) -> None:
    """Checks across keys, run after the cells are known (called at the end of ``validate``)."""
    e = cfg.experiment
    metrics = set(e.metrics)
    for i, p in enumerate(e.published):
        require(name, f"experiment.published[{i}].metric", p.metric in metrics,
                f"metric '{p.metric}' is not computed by this experiment")
        _check_selector(name, f"experiment.published[{i}].select", OmegaConf.to_container(p.select), cells, exactly_one=True)
    for i, c in enumerate(e.claims):
        require(name, f"experiment.claims[{i}].kind", c.kind in CLAIM_KINDS,
                f"'{c.kind}' must be {claim_kind_names()}")
        require(name, f"experiment.claims[{i}].metric", c.metric in metrics,
                f"metric '{c.metric}' is not computed by this experiment")
        _check_selector(name, f"experiment.claims[{i}].lhs", OmegaConf.to_container(c.lhs), cells)
        CLAIM_KINDS[c.kind].check(Claim.from_config(c), _ClaimChecks(name, f"experiment.claims[{i}]", cells))
    for i, sg in enumerate(e.significance):
        _check_selector(name, f"experiment.significance[{i}].against", OmegaConf.to_container(sg.against), cells,
                        exactly_one=True)
        require(name, f"experiment.significance[{i}].level", 0 < sg.level < 1, "must lie in (0, 1)")
    if e.figure is not None:
        require(name, "experiment.figure.metric", e.figure.metric in metrics,
                f"metric '{e.figure.metric}' is not computed by this experiment")
        for i, panel in enumerate(e.figure.panels):
            require(name, f"experiment.figure.panels[{i}].metric", panel.metric is None or panel.metric in metrics,
                    f"metric '{panel.metric}' is not computed by this experiment")
            for j, sel in enumerate(panel.select):
                _check_selector(name, f"experiment.figure.panels[{i}].select[{j}]", OmegaConf.to_container(sel), cells)
    require(name, "experiment.seed", e.seed <= MAX_SEED, f"must be <= 2**63 - 1 (int64), got {e.seed}")
    _validate_dataset(name, cfg)
    _validate_published(name, cfg, cells)
    _validate_claims(name, cfg, cells)
    _validate_figure(name, cfg)


def _check_selector(name: str, key: str, selector: dict[str, Any], cells: list[Cell], exactly_one: bool = False) -> None:
    params = {p for c in cells for p in c.params}
    for k in selector:
        require(name, f"{key}.{k}", k in SELECTOR_KEYS or k in params,
                f"'{k}' is neither a selector key {SELECTOR_KEYS} nor a hyperparameter of any cell")
    n = len(select(cells, selector))
    if exactly_one:
        require(name, key, n == 1, f"selector {selector} must match exactly one cell, matches {n}")
    else:
        require(name, key, n > 0, f"selector {selector} selects no cell")


def _data_capacity(cfg: DictConfig) -> tuple[int | None, str]:
    """The most examples one trial can draw from the configured data (the largest over the
    data set and its substitutes, from the registry's official statistics), with a reason."""
    d = cfg.dataset
    params = OmegaConf.to_container(d.params)
    if d.builder == "cf_people":
        first = _builder_param(d.builder, params, "first")
        return (int(first), f"dataset.params.first = {first}: the items of the target person") \
            if is_number(first) else (None, "")
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
            require(name, key, isinstance(v, bool), f"must be true or false, got {v!r}")
        elif is_number(default):
            require(name, key, _finite(v), f"must be a finite number, got {v!r}")
            if isinstance(default, int):
                require(name, key, isinstance(v, int) and v >= 0, f"must be an integer >= 0, got {v!r}")
        elif isinstance(default, str):
            require(name, key, isinstance(v, str), f"must be a string, got {v!r}")
        elif isinstance(default, tuple):
            require(name, key, isinstance(v, list) and all(_finite(x) for x in v),
                    f"must be a list of finite numbers, got {v!r}")
    _check_declared_params(name, d.builder, params)
    from ..protocols import PROTOCOLS

    if "n_train" in PROTOCOLS[e.protocol].uses:  # the protocol draws n_train (+ n_test) examples
        cap, why = _data_capacity(cfg)
        if cap is not None:
            require(name, "experiment.n_train", e.n_train <= cap,
                    f"{e.n_train} training examples exceed what the data give ({why})")
            if params.get("test_pairs") == "drawn_apart":  # cf_judges: the test set is drawn on its own
                require(name, "experiment.n_test", e.n_test <= cap,
                        f"{e.n_test} test examples exceed what the data give ({why})")
            else:
                require(name, "experiment.n_test", e.n_train + e.n_test <= cap,
                        f"n_train + n_test = {e.n_train + e.n_test} exceeds what the data give ({why})")
    get = lambda k: _builder_param(d.builder, params, k)  # noqa: E731 - the value the builder will use
    if d.builder == "synthetic_hgo":
        sd = get("noise_sd")
        require(name, "dataset.params.noise_sd", _finite(sd) and sd >= 0, f"must be a number >= 0, got {sd!r}")
        sc = get("scale")
        require(name, "dataset.params.scale", _finite(sc) and sc > 0, f"must be a number > 0, got {sc!r}")
        th = list(get("thresholds"))
        require(name, "dataset.params.thresholds", len(th) >= 1 and all(b > a for a, b in zip(th, th[1:])),
                f"must be a non-empty, strictly increasing list, got {th}")
        require(name, "dataset.n_ranks", d.n_ranks == len(th) + 1,
                f"{d.n_ranks} ranks, but {len(th)} thresholds make {len(th) + 1}")
    if d.builder == "cf_judges":
        mj = get("min_judged")
        require(name, "dataset.params.min_judged", 2 <= mj <= 4,
                f"must lie in 2..4 (a target judge and at least one other of the 4), got {mj}")
        from ..data.cf import INSTANCE_VALUES

        iv = get("instance_values")
        require(name, "dataset.params.instance_values", iv in INSTANCE_VALUES,
                f"'{iv}' must be one of {INSTANCE_VALUES}")
        require(name, "dataset.n_ranks", d.n_ranks == 3, f"the judges' scores 0-2 make 3 ranks, got {d.n_ranks}")


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
            require(name, f"dataset.params.{k}", ok(params[k]), f"must be {allowed}, got {params[k]!r}")


def _selector_values(name: str, key: str, selector: dict[str, Any], cells: list[Cell]) -> None:
    """Every value a selector lists names something a cell has (a value matching no cell
    is silently ignored by ``select`` when another value matches)."""
    for k, want in selector.items():
        wants = list(want) if isinstance(want, (list, tuple)) else [want]
        if k == "best":
            require(name, f"{key}.best", isinstance(want, bool), f"must be true or false, got {want!r}")
            continue
        have = {getattr(c, "id" if k == "cell" else k) for c in cells} if k in ("algorithm", "cell", "estimator") else None
        for w in wants:
            if have is not None:
                require(name, f"{key}.{k}", w in have, f"'{w}' is not a {k} of this experiment (known: {sorted(have)})")
            else:
                vals = [c.params[k] for c in cells if k in c.params]
                require(name, f"{key}.{k}", any(equal_values(v, w) for v in vals),
                        f"{k}={w!r} is not a value of any cell (values: {sorted({fmt_value(v) for v in vals})})")


def _validate_published(name: str, cfg: DictConfig, cells: list[Cell]) -> None:
    from ..metrics import METRICS
    from .. import metric_names as _metric_names  # noqa: F401 - every registered metric name
    from ..protocols import PROTOCOLS

    e = cfg.experiment
    eq = e.equivalence
    if eq is not None:
        require(name, "experiment.equivalence", eq.margin is None or eq.relative is None,
                "give either margin (absolute) or relative (a share of each published value), not both")
        require(name, "experiment.equivalence.margin",
                eq.margin is None or (math.isfinite(eq.margin) and 0 < eq.margin < 1e6),
                f"an equivalence margin must be a finite number > 0 in the metric's unit, got {eq.margin}")
        require(name, "experiment.equivalence.relative",
                eq.relative is None or (math.isfinite(eq.relative) and 0 < eq.relative <= 1),
                f"a relative equivalence margin must be a share in (0, 1], got {eq.relative}")
        require(name, "experiment.equivalence.why",
                (eq.margin is None and eq.relative is None) or bool(str(eq.why or "").strip()),
                "say why this margin (a difference that matters in the paper's own unit), before seeing results")
    for i, p in enumerate(e.published):
        key = f"experiment.published[{i}]"
        require(name, f"{key}.mean", math.isfinite(p.mean), f"must be a finite number, got {p.mean}")
        require(name, f"{key}.precision", p.precision is None or (math.isfinite(p.precision) and p.precision > 0),
                f"the unit of the printed last digit must be a finite number > 0, got {p.precision}")
        require(name, f"{key}.ci_precision",
                p.ci_precision is None or (math.isfinite(p.ci_precision) and p.ci_precision > 0 and p.ci is not None),
                f"the unit of ci's printed last digit must be a finite number > 0, with a ci, got {p.ci_precision}")
        require(name, f"{key}.ci", p.ci is None or (math.isfinite(p.ci) and p.ci >= 0),
                f"a 95% half-width must be a finite number >= 0, got {p.ci}")
        _selector_values(name, f"{key}.select", OmegaConf.to_container(p.select), cells)
        if p.round is not None:
            require(name, f"{key}.round", METRICS[p.metric].curve,
                    f"metric '{p.metric}' is one value per trial, not a curve: remove 'round'")
            require(name, f"{key}.round", p.round >= 1, f"must be >= 1, got {p.round}")
            last = PROTOCOLS[e.protocol].last_round(e)
            if last is not None:
                require(name, f"{key}.round", p.round <= last,
                        f"round {p.round} is beyond the {last} training rounds of the run")


def _validate_claims(name: str, cfg: DictConfig, cells: list[Cell]) -> None:
    from ..metrics import METRICS
    from .. import metric_names as _metric_names  # noqa: F401 - every registered metric name
    from ..protocols import PROTOCOLS

    e = cfg.experiment
    seen: dict[str, int] = {}
    for i, c in enumerate(e.claims):
        key = f"experiment.claims[{i}]"
        require(name, f"{key}.id", c.id not in seen, f"claim id '{c.id}' is used twice (first at claims[{seen.get(c.id)}])")
        seen[c.id] = i
        curve = METRICS[c.metric].curve
        if c.rounds is not None:
            r = list(c.rounds)
            require(name, f"{key}.rounds", curve,
                    f"metric '{c.metric}' is one value per trial, not a curve: remove 'rounds'")
            require(name, f"{key}.rounds", len(r) == 2, f"must be [first, last] (null = open), got {r}")
            require(name, f"{key}.rounds", all(x is None or x >= 1 for x in r), f"rounds must be >= 1, got {r}")
            require(name, f"{key}.rounds", r[0] is None or r[1] is None or r[0] < r[1],
                    f"first round {r[0]} must come before last round {r[1]}")
            last = PROTOCOLS[e.protocol].last_round(e)
            if last is not None and r[0] is not None:
                require(name, f"{key}.rounds", r[0] < last,
                        f"first round {r[0]} is not before the end of the {last} training rounds")
            if last is not None and r[1] is not None:
                require(name, f"{key}.rounds", r[1] <= last,
                        f"last round {r[1]} is beyond the {last} training rounds of the run")
        require(name, f"{key}.factor", math.isfinite(c.factor) and c.factor > 0,
                f"must be a finite number > 0, got {c.factor}")
        require(name, f"{key}.expect", c.expect is None or math.isfinite(c.expect), f"must be finite, got {c.expect}")
        lhs_sel = OmegaConf.to_container(c.lhs)
        _selector_values(name, f"{key}.lhs", lhs_sel, cells)
        lhs = select(cells, lhs_sel)
        claim, kind = Claim.from_config(c), CLAIM_KINDS[c.kind]
        kind.check_cells(claim, lhs, _ClaimChecks(name, key, cells, curve))
        for k, default in CLAIM_OPTIONAL.items():  # a key the kind does not read keeps its default
            takers = " or ".join(f"'{n}'" for n, other in CLAIM_KINDS.items() if k in other.reads)
            require(name, f"{key}.{k}", k in kind.reads or getattr(claim, k) == default,
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
        require(self.name, f"{self.key}.{key}" if key else self.key, ok, message)

    def check_selector(self, key: str, selector: dict[str, Any]) -> None:
        _check_selector(self.name, f"{self.key}.{key}", selector, self.cells)

    def selected(self, key: str, selector: dict[str, Any]) -> list[Cell]:
        _selector_values(self.name, f"{self.key}.{key}", selector, self.cells)
        return select(self.cells, selector)

    def compatible(self, a: Cell, b: Cell, match: list[str]) -> bool:
        """As the claim evaluation pairs cells: equal on every matched parameter both have."""
        return all(not (k in a.params and k in b.params and not equal_values(a.params[k], b.params[k])) for k in match)

    equal = staticmethod(equal_values)
    fmt = staticmethod(fmt_value)


def _validate_figure(name: str, cfg: DictConfig) -> None:
    """Figure and line-style options as matplotlib would take them."""
    import matplotlib.colors as mcolors
    import matplotlib.markers as mmarkers
    import matplotlib.scale as mscale

    f = cfg.experiment.figure
    if f is not None:
        scales = mscale.get_scale_names()
        require(name, "experiment.figure.xscale", f.xscale in scales, f"'{f.xscale}' is not a scale (known: {scales})")
        if f.ylim is not None:
            yl = list(f.ylim)
            require(name, "experiment.figure.ylim", len(yl) == 2 and all(_finite(v) for v in yl) and yl[0] < yl[1],
                    f"must be [bottom, top], two finite numbers with bottom < top, got {yl}")
    for k, a in cfg.algorithms.items():
        if a.color is not None:
            require(name, f"algorithms.{k}.color", mcolors.is_color_like(a.color),
                    f"'{a.color}' is not a matplotlib colour (a name, '#rrggbb', 'C0'..)")
        if a.marker is not None:
            try:
                mmarkers.MarkerStyle(a.marker)
                ok = True
            except (ValueError, TypeError):
                ok = False
            require(name, f"algorithms.{k}.marker", ok, f"'{a.marker}' is not a matplotlib marker (e.g. o s ^ v D x +)")
        require(name, f"algorithms.{k}.linestyle", _linestyle_ok(a.linestyle),
                f"'{a.linestyle}' is not a matplotlib line style ('-', '--', '-.', ':', 'solid', 'dashed', ...)")


def _linestyle_ok(ls: Any) -> bool:
    from matplotlib import rcsetup

    try:
        rcsetup.validate_linestyle(ls) if hasattr(rcsetup, "validate_linestyle") else rcsetup._validate_linestyle(ls)
        return True
    except (ValueError, TypeError):
        return False
