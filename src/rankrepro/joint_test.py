"""The joint test of a whole published table (:func:`table_test`) and how many trials would let
a cell's equivalence test decide (:func:`trials_to_reach_equivalence`): what a table's agreement
with the paper rests on beyond its cells' own intervals (rankrepro.stats)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .stats import t_quantile, welch_satterthwaite_df


def trials_to_reach_equivalence(rep_sd: float, published_se: float, published_df: float, margin: float,
                                rounding: float = 0.0, draw: bool = False, alpha: float = 0.05,
                                limit: int = 1_000_000) -> int | None:
    """The smallest number of our trials n with which :func:`equivalence` could say
    *equivalent* at all (:func:`equivalence_reachable` at a difference of 0): our standard
    error ``rep_sd`` / sqrt(n) (a prediction's, ``rep_sd`` sqrt(1 + 1/n), when the published
    number is one draw), the published side's ``published_se`` (``published_df`` degrees of
    freedom; 0 when it has none) fixed.  None when no n up to ``limit`` reaches it: the
    published side's spread or a draw's own spread alone fills the margin less the rounding."""
    m_eff = float(margin) - float(rounding)
    if m_eff <= 0:
        return None

    def se_df(n: int) -> tuple[float, float]:
        ours = rep_sd * (np.sqrt(1.0 + 1.0 / n) if draw else 1.0 / np.sqrt(n))
        parts = [(ours, float(n - 1))] + ([(published_se, published_df)] if published_se > 0 else [])
        return float(np.sqrt(sum(s ** 2 for s, _ in parts))), welch_satterthwaite_df(*parts)

    def ok(n: int) -> bool:
        se, df = se_df(n)
        return se == 0 or t_quantile(df, 1 - alpha) * se < m_eff

    if not ok(limit):
        return None
    lo, hi = 2, limit
    if ok(lo):
        return lo
    while hi - lo > 1:  # the half-width falls with n (t and se both shrink)
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if ok(mid) else (mid, hi)
    return hi


@dataclass(frozen=True)
class TableTest:
    """The joint test of a whole published table (:func:`table_test`)."""

    #: cells judged; those with a sampling spread (in the max-|t| test) and those without
    cells: int
    sampling: int
    exact: int
    #: the smallest per-cell p-value, its cell, and Sidak's bound on it over the sampling cells
    min_p: float | None
    deciding: str | None
    p: float | None
    #: the cells with no sampling spread that lie outside their bound (or equivalence margin)
    exact_outside: list
    agrees: bool
    #: the smallest and largest gap in one cell the test detects with 80% power
    detectable_low: float | None
    detectable_high: float | None


def table_test(rows: list[dict], alpha: float = 0.05, power: float = 0.8) -> TableTest:
    """One test of a whole published table: does any cell differ from the paper?

    ``rows``: per judged cell ``{"cell", "p", "se", "df", "bound", "consistent"}``.  The cells
    with a sampling spread (se > 0) are tested together by their smallest two-sided p-value
    (:func:`difference_p`) with Sidak's bound, p = 1 - (1 - min p)^k, which keeps the level at
    ``alpha`` under any correlation of the cells' t statistics (Sidak 1967: cells that share
    trials are positively dependent, and two-sided normal tests satisfy his inequality for
    every correlation); a cell without a sampling spread (an exact computation, a
    deterministic learner run once) has no chance variation and must be *consistent* itself.
    The table *agrees* unless the joint test rejects at ``alpha`` or such a cell is outside.
    The power: the gap in one cell that the Sidak-level test detects with ``power``,
    (t_{1 - alpha'/2} + t_power) se + bound, alpha' = 1 - (1 - alpha)^(1/k), over the cells."""
    samp = [r for r in rows if r["se"] > 0]
    exact = [r for r in rows if not r["se"] > 0]
    outside = [r["cell"] for r in exact if not r["consistent"]]
    if samp:
        best = min(samp, key=lambda r: r["p"])
        k = len(samp)
        p = float(-np.expm1(k * np.log1p(-best["p"])))  # 1 - (1 - p)^k, exact for tiny p
        a1 = 1.0 - (1.0 - alpha) ** (1.0 / k)
        gaps = [(t_quantile(r["df"], 1 - a1 / 2) + t_quantile(r["df"], power)) * r["se"] + r["bound"] for r in samp]
        lo, hi, min_p, deciding = float(min(gaps)), float(max(gaps)), float(best["p"]), best["cell"]
    else:
        p = lo = hi = min_p = deciding = None
    agrees = (p is None or p >= alpha) and not outside
    return TableTest(len(rows), len(samp), len(exact), min_p, deciding, p, outside, bool(agrees), lo, hi)
