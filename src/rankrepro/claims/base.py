"""What every claim kind shares: the typed claim, its result, the base class a kind derives
from, and the summary helpers the kinds evaluate with.

This module imports only numpy, pandas and :mod:`rankrepro.metrics`: the config validation
(:mod:`rankrepro.pipeline.cross_checks`) and the report (:mod:`rankrepro.report.aggregate`) both
use it, and hand a kind what it needs (the cells a selector picks, a way to raise a config
error naming a key) instead of it importing them.
"""

from __future__ import annotations

import math
import weakref
from dataclasses import MISSING, dataclass, field, fields
from typing import Any, Callable, ClassVar, Protocol

import numpy as np
import pandas as pd

from ..metrics import METRICS
from .. import metric_names as _metric_names  # noqa: F401 - every registered metric name

#: the keys every claim has, whatever its kind
COMMON_FIELDS = ("id", "text", "kind", "metric", "lhs", "rounds", "diagnosis", "trivial")


@dataclass(frozen=True)
class Claim:
    """One of a paper's claims, as configured (``experiment.claims[i]``; the meaning of each
    key is in :class:`rankrepro.pipeline.schema.ClaimCfg`).  Built once from the config by
    :meth:`from_config`; values are kept as configured (numbers are not re-typed, so the
    evidence prints them as before)."""

    id: str
    text: str
    kind: str
    metric: str
    lhs: dict = field(default_factory=dict)
    rhs: dict = field(default_factory=dict)
    match: tuple = ()
    rounds: tuple | None = None
    significant: bool = False
    stat: str = "mean"
    over: str | None = None
    direction: str = "increasing"
    expect: float | None = None
    factor: float = 1.0
    timed_solver: dict | None = None
    diagnosis: dict | None = None
    #: why the claim is trivial (exact arithmetic, a description); "" for a substantive claim
    trivial: str = ""

    @classmethod
    def from_config(cls, node: Any) -> "Claim":
        """From a claim's config node (a ``DictConfig``) or a plain mapping; absent keys take
        the schema's defaults."""
        if not isinstance(node, dict):
            from omegaconf import OmegaConf

            node = OmegaConf.to_container(node)
        known = {f.name for f in fields(cls)}
        c = {k: v for k, v in node.items() if k in known}
        if c.get("lhs") is None:
            c["lhs"] = {}
        if c.get("rhs") is None:
            c["rhs"] = {}
        c["match"] = tuple(c.get("match") or ())
        if c.get("rounds") is not None:
            c["rounds"] = tuple(c["rounds"])
        for k in ("significant", "stat", "direction", "factor", "trivial"):
            if k in c and c[k] is None:
                del c[k]
        return cls(**c)


#: the defaults of the keys a kind may or may not read (a kind that does not read one
#: rejects any other value)
OPTIONAL_DEFAULTS = {f.name: f.default_factory() if f.default is MISSING else f.default
                     for f in fields(Claim) if f.name not in COMMON_FIELDS}


@dataclass
class ClaimResult:
    id: str
    text: str
    #: "held", "not held" (each at the Holm-adjusted 5% level), "inconclusive" or "not evaluable"
    verdict: str
    evidence: str
    fraction: float | None = None
    #: the configured diagnosis (shown beside a verdict other than "held")
    diagnosis: dict | None = None
    #: for each open protocol choice whose values give different verdicts: {choice, verdicts: {value: verdict}}
    depends_on: list | None = None
    #: a claim about time: each comparison's paired ratio, interval, spread and load tolerance
    #: (:mod:`rankrepro.claims.timing`)
    timing: list | None = None
    #: a tested claim: p_held, p_opposite, p, tests, test, p_adjusted, family, n_needed
    #: (:mod:`rankrepro.claims.testing`)
    stats: dict | None = None
    #: why the claim is trivial (counted apart from the substantive ones); None for a substantive claim
    trivial: str | None = None


class Checks(Protocol):
    """What the config validation hands a kind's checks (implemented in
    :mod:`rankrepro.pipeline.cross_checks`) for one claim ``experiment.claims[i]``."""

    #: is the claim's metric a curve (one value per logged round)?
    curve: bool

    def require(self, key: str, ok: bool, message: str) -> None:
        """Raise a config error at ``experiment.claims[i].<key>`` (the claim itself for ``""``)
        unless ``ok``."""

    def check_selector(self, key: str, selector: dict) -> None:
        """The selector's keys exist and it selects at least one cell."""

    def selected(self, key: str, selector: dict) -> list:
        """The cells the selector picks (``best`` not resolved), after checking each value it lists."""

    def compatible(self, a, b, match) -> bool:
        """Do cells ``a`` and ``b`` agree on every matched hyperparameter both have?"""

    def equal(self, a, b) -> bool:
        """Are two hyperparameter values equal (numbers to rounding)?"""

    def fmt(self, v) -> str:
        """A hyperparameter value as cell ids print it."""


@dataclass
class Context:
    """What a kind evaluates on: the summary (:func:`rankrepro.report.aggregate.summarize`),
    ``cells(selector)``, the cells a selector picks with ``best`` resolved on the claim's
    metric, and the trials the summary was made from."""

    summary: pd.DataFrame
    cells: Callable[[dict], list]
    #: the per-trial rows (cell, trial, metric, round, value) the summary was made from: the
    #: claims about time pair their trials
    trials: pd.DataFrame | None = None
    #: what a claim on a LETOR test metric is tested over: "trials" or "queries"
    #: (``experiment.claims_unit``, :mod:`rankrepro.claims.units`)
    unit: str = "trials"

    def values(self, cell: str, metric: str, rounds) -> pd.DataFrame:
        return values_at(self.summary, cell, metric, rounds)


class ClaimKind:
    """A kind of claim.  A subclass sets ``name`` (the config's ``kind``) and ``reads`` (which
    of the optional keys ``rhs``, ``match``, ``significant``, ``factor``, ``stat``, ``over``,
    ``direction``, ``expect`` it uses: any other one must keep its default), and implements
    ``evaluate``; ``check`` (keys alone, when the config loads) and ``check_cells`` (against
    the cells) add its own config checks.  Register it in :data:`rankrepro.claims.KINDS`."""

    name: ClassVar[str]
    reads: ClassVar[tuple[str, ...]] = ()

    def check(self, claim: Claim, chk: Checks) -> None:
        """Checks of the claim's own keys (required ones present, values in range)."""

    def check_cells(self, claim: Claim, lhs: list, chk: Checks) -> None:
        """Checks against the experiment's cells; ``lhs`` the cells the lhs selector picks."""

    def evaluate(self, claim: Claim, ctx: Context) -> ClaimResult:
        raise NotImplementedError


def result(claim: Claim, verdict: str, evidence: str, fraction: float | None = None) -> ClaimResult:
    return ClaimResult(claim.id, claim.text, verdict, evidence, fraction, trivial=claim.trivial or None)


# -------------------------------------------------------------------------------------
# summary helpers
# -------------------------------------------------------------------------------------
#: the rows of each (cell, metric) of the last summary :func:`cell_rows` read: (a weak reference to
#: the frame, its index object, {(cell, metric): row positions})
_ROWS: tuple = (None, None, {})
_NONE = np.empty(0, dtype=np.intp)


def cell_rows(summary: pd.DataFrame, cell: str, metric: str) -> pd.DataFrame:
    """``summary[(summary["cell"] == cell) & (summary["metric"] == metric)]``, the same frame
    (rows in order, index, dtypes), from the row positions of every (cell, metric) grouped
    once per summary instead of two comparisons over the whole frame per call (the claims of
    an artefact and of its sensitivity values read thousands: ~5 s of Harrington et al.'s smoke
    job).  A summary is not changed in place once made; another frame, or one whose index was
    replaced, is grouped afresh."""
    global _ROWS
    ref, index, rows = _ROWS
    if ref is None or ref() is not summary or index is not summary.index:
        rows = summary.groupby(["cell", "metric"], sort=False).indices if len(summary) else {}
        _ROWS = (weakref.ref(summary), summary.index, rows)
    return summary.take(rows.get((cell, metric), _NONE))


def values_at(summary: pd.DataFrame, cell: str, metric: str, rounds) -> pd.DataFrame:
    """A cell's summary rows of a metric: a scalar's one row, a curve's last round (``rounds``
    None) or its rounds in ``[first, last]`` (either end None: open)."""
    s = cell_rows(summary, cell, metric)
    if not METRICS[metric].curve:
        return s
    s = s.sort_values("round")
    if rounds is None:
        return s.tail(1)
    lo, hi = rounds[0], rounds[1]
    m = pd.Series(True, index=s.index)
    if lo is not None:
        m &= s["round"] >= lo
    if hi is not None:
        m &= s["round"] <= hi
    return s[m]


def lo(r) -> float:
    """The low end of a summary row's interval (the mean when there is no interval)."""
    return float(r["mean"]) if pd.isna(r["ci"]) else float(r["low"])


def hi(r) -> float:
    return float(r["mean"]) if pd.isna(r["ci"]) else float(r["high"])


def fmt_round(r) -> str:
    return "" if r is None or (isinstance(r, float) and math.isnan(r)) or r is pd.NA else f" at round {int(r)}"


def final_points(claim: Claim, ctx: Context, cells: list) -> list[tuple[Any, float, float, float]]:
    """(cell, mean, low, high) of each cell's last checked value, for the cells that have one."""
    pts = []
    for cell in cells:
        v = ctx.values(cell.id, claim.metric, claim.rounds)
        if not v.empty:
            r = v.iloc[-1]
            pts.append((cell, float(r["mean"]), float(r["low"]), float(r["high"])))
    return pts


def compared_points(claim: Claim, ctx: Context):
    """The lhs cells' final points, their one-line description and the lowest point; None
    when fewer than two cells have a value (the claim is then not evaluable)."""
    pts = final_points(claim, ctx, ctx.cells(claim.lhs))
    if len(pts) < 2:
        return None
    return pts, ", ".join(f"{cell.label} {m:.3f}" for cell, m, _, _ in pts), min(pts, key=lambda p: p[1])
