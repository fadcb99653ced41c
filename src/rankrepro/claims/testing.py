"""How a claim is tested: one-sided t-tests on the per-trial values, paired where the compared
values share their trials, combined over a claim's comparisons, then adjusted for multiplicity.

Every cell of an artefact draws trial i's data from the same seed (pipeline/seeding.py: common
random numbers), so two cells' values at trial i are a pair: the test is the paired t-test on
the per-trial differences, much stronger than comparing two intervals.  Values that do not
share their trials (different trial sets) are compared by Welch's t-test.

A claim usually makes several comparisons (every lhs against every rhs cell, at every checked
round; every step of a monotone sweep).  It *holds* when all of them go its way: the
intersection-union test, whose p-value is the largest of theirs, ``p_held``.  It *fails* when
at least one goes significantly the other way: the smallest opposite p-value times the number
of comparisons (Bonferroni), ``p_opposite``.  A claim's p-value is then the two-sided
``p = min(1, 2 min(p_held, p_opposite))``; Holm's adjustment over a family of claims
(:func:`adjust`; the family is a paper's claims, report/aggregate.py) gives ``p_adjusted``, and
the verdict is *held* when it is below :data:`ALPHA` and ``p_held < p_opposite``, *not held*
when below and the other way, otherwise *inconclusive*: symmetric, and a tie is inconclusive.
For an inconclusive claim, ``n_needed`` is the number of trials its deciding comparison would
need for 80% power at its Holm level, taking the observed mean and spread as the truth.
"""

from __future__ import annotations

import math
import weakref
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..stats import holm, paired_power, paired_t_greater, welch_t_greater

#: the level every claim is decided at, after Holm's adjustment
ALPHA = 0.05
#: the power ``n_needed`` is computed for
POWER = 0.8


@dataclass
class Test:
    """One comparison: is ``lhs`` below ``rhs``?  (``p_less`` its one-sided p-value, ``p_greater``
    the opposite one; NaN when it could not be made.)"""

    what: str
    p_less: float
    p_greater: float
    n: int
    paired: bool
    diffs: np.ndarray | None = None  # the paired differences lhs - rhs (for the power)
    #: the design effect the test carries (queries that share a fold's model: :func:`less_by_folds`)
    deff: float = 1.0

    @property
    def p_claim(self) -> float:
        return 1.0 if math.isnan(self.p_less) else self.p_less

    @property
    def p_opp(self) -> float:
        return 1.0 if math.isnan(self.p_greater) else self.p_greater


#: id(trials) -> (a weak reference to it, its row count, what was derived from it, by name): the
#: claims of an artefact, its sensitivity analysis and its family's claims read the same frames
#: thousands of times (the frames are never changed in place)
_FRAMES: dict[int, tuple[weakref.ref, int, dict]] = {}


def kept(trials: pd.DataFrame, name: str, build):
    """``build(trials)``, made once per frame while the frame lives (:data:`_FRAMES`)."""
    hit = _FRAMES.get(id(trials))
    if hit is None or hit[0]() is not trials or hit[1] != len(trials):
        for k in [k for k, v in _FRAMES.items() if v[0]() is None]:
            del _FRAMES[k]
        hit = _FRAMES[id(trials)] = (weakref.ref(trials), len(trials), {})
    made = hit[2]
    if name not in made:
        made[name] = build(trials)
    return made[name]


def cell_metric_rows(trials: pd.DataFrame) -> dict:
    """Each (cell, metric)'s row positions in ``trials``."""
    return kept(trials, "cell_metric", lambda t: t.groupby(["cell", "metric"], sort=False, observed=True).indices
                if len(t) else {})


def value_columns(trials: pd.DataFrame) -> pd.DataFrame:
    """The trial, round and value columns, all a question reads: taking rows of the text
    columns too (Arrow strings) cost most of an aggregation's time."""
    return kept(trials, "values", lambda t: t[["trial", "round", "value"]])


def trial_values(trials: pd.DataFrame, cell: str, metric: str, rnd) -> pd.Series:
    """A cell's per-trial values of ``metric`` (at round ``rnd`` for a curve), by trial.  Kept per
    frame: the same Series object for the same question (never changed in place by its users)."""
    no_round = rnd is None or (isinstance(rnd, float) and math.isnan(rnd)) or rnd is pd.NA
    done = kept(trials, "trial_values", lambda t: {})
    key = (cell, metric, None if no_round else int(rnd))
    if key in done:
        return done[key]
    pos = cell_metric_rows(trials).get((cell, metric))
    # trials[(trials.cell == cell) & (trials.metric == metric)]: the same rows, in the same order
    pos = np.asarray(pos if pos is not None else [], dtype=np.intp)
    trial, rounds, value = kept(trials, "arrays", lambda t: (t["trial"].to_numpy(dtype=np.int64),
                                                             t["round"].to_numpy(dtype=float, na_value=np.nan),
                                                             t["value"].to_numpy(dtype=float)))
    r = rounds[pos]
    if no_round:
        missing = np.isnan(r)
        if missing.any() and not missing.all():
            pos = pos[missing]
    else:
        pos = pos[r == int(rnd)]
    done[key] = out = _last_by_trial(trial[pos], value[pos])
    return out


def _last_by_trial(trial: np.ndarray, value: np.ndarray) -> pd.Series:
    """``pd.DataFrame({"trial": trial, "value": value}).groupby("trial")["value"].last()``: each
    trial's last non-missing value (NaN when it has none), by trial, as one Series."""
    trials = np.unique(trial)
    out = np.full(len(trials), np.nan)
    ok = ~np.isnan(value)
    if ok.any():
        at = np.searchsorted(trials, trial[ok])
        last = np.full(len(trials), -1, dtype=np.intp)
        np.maximum.at(last, at, np.arange(len(at), dtype=np.intp))
        has = last >= 0
        out[has] = value[ok][last[has]]
    return pd.Series(out, index=pd.Index(trials, dtype="int64", name="trial"), name="value")


def less(x: pd.Series, y: pd.Series, what: str) -> Test:
    """Is ``x`` below ``y``?  Paired on their common trials when they have the same trials,
    else Welch."""
    x, y = x.dropna(), y.dropna()
    if len(x) == 1 and len(y) == 1:
        # one trial a side: an exact computation (Elsas et al. Sec. 3), no sampling to test
        a, b = float(x.iloc[0]), float(y.iloc[0])
        return Test(what, float(not a < b), float(not a > b), 1, True)
    if len(x) and list(x.index) == list(y.index):
        a, b = x.to_numpy(float), y.to_numpy(float)
        return Test(what, paired_t_greater(b, a), paired_t_greater(a, b), len(a), True, a - b)
    a, b = x.to_numpy(float), y.to_numpy(float)
    return Test(what, welch_t_greater(b, a), welch_t_greater(a, b), min(len(a), len(b)), False)


def less_by_folds(x: pd.Series, y: pd.Series, fx: pd.Series | None, fy: pd.Series | None, what: str) -> Test:
    """:func:`less` paired over the test queries, which are not independent: the queries of a
    fold share the model trained on it.  The design effect of the folds, deff = (var of the fold
    differences / G) / (var of the query differences / N) (the cluster-robust variance of the mean
    difference over its naive one, with the G folds as equal clusters; at least 1), widens the
    standard error by sqrt(deff), and the t-test takes N / deff - 1 degrees of freedom (the
    effective number of queries).  Without fold values (or with deff = 1) it is :func:`less`."""
    t = less(x, y, what)
    if fx is None or fy is None or not t.paired or t.diffs is None or len(t.diffs) < 3:
        return t
    fd = (fx - fy).dropna().to_numpy(float)
    d = t.diffs
    n, g = len(d), len(fd)
    vq = float(np.var(d, ddof=1)) / n
    if g < 2 or not vq > 0:
        return t
    deff = max(1.0, (float(np.var(fd, ddof=1)) / g) / vq)
    if deff == 1.0:
        return t
    from ..stats import t_sf

    df = max(n / deff - 1.0, 1.0)
    stat = float(np.mean(d)) / math.sqrt(vq * deff)
    return Test(what, t_sf(df, -stat), t_sf(df, stat), n, True, d, deff)


@dataclass
class Outcome:
    """What a claim's tests give before the family's adjustment."""

    p_held: float
    p_opposite: float
    tests: int
    paired: bool
    deciding: Test | None
    #: is the deciding comparison the strongest reversal (its p multiplied by ``tests``)?
    reversed: bool = False

    @property
    def p(self) -> float:
        return min(1.0, 2.0 * min(self.p_held, self.p_opposite))


def combine(tests: list[Test]) -> Outcome:
    """Intersection-union for holding (the largest p), Bonferroni for failing."""
    if not tests:
        return Outcome(1.0, 1.0, 0, True, None)
    worst = max(tests, key=lambda t: t.p_claim)
    strongest_opp = min(tests, key=lambda t: t.p_opp)
    p_held = worst.p_claim
    p_opp = min(1.0, len(tests) * strongest_opp.p_opp)
    rev = p_held > p_opp
    return Outcome(p_held, p_opp, len(tests), all(t.paired for t in tests), strongest_opp if rev else worst, rev)


def describe(o: Outcome) -> str:
    kind = "paired" if o.paired else "Welch"
    return (f"{kind} t-tests, {o.tests} comparison{'s' if o.tests != 1 else ''}: p(held) = {o.p_held:.3g}, "
            f"p(reversed) = {o.p_opposite:.3g}")


def fields(o: Outcome) -> dict:
    """The record's fields of a tested claim (``p_adjusted`` and the verdict come from :func:`adjust`)."""
    return {"p_held": o.p_held, "p_opposite": o.p_opposite, "p": o.p, "tests": o.tests,
            "test": "paired t" if o.paired else "Welch t",
            # the comparison that decides the claim: its weakest (held) or strongest reversal
            "deciding": None if o.deciding is None else o.deciding.what}


def adjust(results: list, alpha: float = ALPHA, others=(), name: str = "") -> None:
    """Holm over the tested claims of ``results`` (ClaimResults whose ``stats`` is set) and
    ``others`` (the rest of the family: the paper's other claims, as (key, p) pairs or bare
    p-values): sets ``stats["p_adjusted"]``, ``stats["family"]`` (its size), the verdict, and
    for an inconclusive one ``stats["n_needed"]`` (trials for 80% power at its Holm level).

    The family is ranked by p-value, ties by the claim's key (``<paper>/<artefact>:<id>``,
    ``name`` the artefact of ``results``), so that every record of a family gives a claim the
    same rank.  A claim whose tests point neither way (``p_held`` = ``p_opposite``) is
    *inconclusive* whatever its adjusted p-value."""
    tested = [r for r in results if r.stats is not None and r.verdict != "not evaluable"]
    pairs = [(f"{name}:{r.id}", r.stats["p"]) for r in tested]
    pairs += [(str(o[0]), float(o[1])) if isinstance(o, (tuple, list)) else ("", float(o)) for o in others]
    ps = [p for _, p in pairs]
    adj = holm(ps)
    m = len(ps)
    order = sorted(range(m), key=lambda i: (np.nan_to_num(ps[i], nan=np.inf), pairs[i][0]))
    rank = {i: k for k, i in enumerate(order)}
    for i, (r, pa) in enumerate(zip(tested, adj)):
        st = r.stats
        st["p_adjusted"] = float(pa)
        st["family"] = m
        if pa < alpha and st["p_held"] != st["p_opposite"]:
            r.verdict = "held" if st["p_held"] < st["p_opposite"] else "not held"
        else:
            r.verdict = "inconclusive"
        o = getattr(r, "_outcome", None)
        diffs = None if o is None or o.deciding is None else o.deciding.diffs
        bonf = o.tests if o is not None and o.reversed else 1
        st["n_needed"] = None
        if r.verdict == "inconclusive" and diffs is not None:
            # the level the deciding comparison must meet: Holm's at the claim's rank, halved
            # (the claim's p is two-sided), divided by the comparisons for a reversal
            level = alpha / (m - rank[i]) / 2.0 / bonf
            st["n_needed"] = paired_power(diffs, level, POWER)
            deff = o.deciding.deff
            if st["n_needed"] and deff > 1.0:  # the queries a fold shares count for fewer
                st["n_needed"] = int(math.ceil(st["n_needed"] * deff))
        r.evidence += (f"; Holm over the {m} tested claims of the paper: p = {pa:.3g}"
                       + (f"; about {st['n_needed']} {st.get('unit', 'trials')} would decide it (80% power)"
                            if st["n_needed"] else ""))



def provisional(o: Outcome, alpha: float = ALPHA) -> str:
    """The verdict of one claim alone (a family of one): :func:`adjust` replaces it."""
    if o.tests == 0:
        return "not evaluable"
    if o.p < alpha and o.p_held != o.p_opposite:
        return "held" if o.p_held < o.p_opposite else "not held"
    return "inconclusive"


def tested(claim, evidence: str, o: Outcome, fraction: float | None = None):
    """A claim's result from its tests: the evidence, then the tests' summary."""
    from .base import result

    r = result(claim, provisional(o), f"{evidence}; {describe(o)}", fraction)
    r.stats = fields(o)
    r._outcome = o  # not a field: for the power of an inconclusive claim (adjust)
    return r
