"""From the per-trial cell tables to an artefact's summary, comparison and claims.

Summary: one row per (cell, metric, round) with the mean over trials, its 95% Student-t
interval and n.  Comparison: each published value beside the reproduced cell, the
difference with its 95% interval and a verdict (``consistent`` when that interval contains
0, else ``differs``), an equivalence verdict (two one-sided tests with a margin) and the
former overlap rule for comparison (:mod:`rankrepro.stats`).
Claims: each of the paper's claims in the experiment config, evaluated on the summary, with
the evidence (the numbers it was decided on), by its kind's checker in :mod:`rankrepro.claims`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import pandas as pd
from omegaconf import OmegaConf

from .. import claims
from ..claims import Claim, ClaimResult
from ..claims.testing import adjust, kept
from ..metrics import METRICS
from .. import metric_names as _metric_names  # noqa: F401 - every registered metric name
from ..pipeline.cells import Cell, Experiment, select
from ..stats import (Interval, consistent, difference_interval, difference_p, draw_difference_interval, equivalence,
                     equivalence_reachable, paired_t_greater, printed_precision, se_from_half_width, t_interval,
                     t_quantile)
from ..joint_test import trials_to_reach_equivalence

from .readings import reading_test as _reading_test

SUMMARY_COLUMNS = ["cell", "algorithm", "label", "metric", "round", "n", "mean", "ci", "low", "high"]


def summarize(exp: Experiment, trials: pd.DataFrame) -> pd.DataFrame:
    labels = {c.id: c.label for c in exp.cells}
    order = {c.id: i for i, c in enumerate(exp.cells)}
    rows = []
    per_q = [m for m in trials["metric"].unique() if METRICS[m].per_query]
    # the columns it reads (taking rows of every text column cost more than the statistics)
    trials = trials[["cell", "algorithm", "metric", "round", "value"]]
    if per_q:
        trials = trials[~trials["metric"].isin(per_q)]
    key_round = trials["round"].fillna(-1)
    groups = trials.groupby([trials["cell"], trials["metric"], key_round], sort=False)
    # each group's rows in the frame's order, the groups in the order they first appear (as
    # iterating the groups gives them), without making a frame per group
    number = groups.ngroup().to_numpy()
    by_group = np.argsort(number, kind="stable")
    starts = np.searchsorted(number[by_group], np.arange(groups.ngroups + 1))
    # each group's keys from its first row: the text columns read at those rows only
    first = by_group[starts[:-1]]
    cells, algos, metrics = (trials[c].take(first).to_numpy(dtype=object) for c in ("cell", "algorithm", "metric"))
    rounds, values = key_round.to_numpy()[first], trials["value"].to_numpy()
    for k in range(groups.ngroups):
        cell, metric, rnd = cells[k], metrics[k], rounds[k]
        iv = t_interval(values[by_group[starts[k]:starts[k + 1]]])
        rows.append((cell, algos[k], labels.get(cell, cell), metric,
                     None if rnd == -1 else int(rnd), iv.n, iv.mean, iv.half_width, iv.low, iv.high))
    out = pd.DataFrame.from_records(rows, columns=SUMMARY_COLUMNS)
    out["round"] = out["round"].astype("Int64")
    out["_o"] = out["cell"].map(order)
    return out.sort_values(["_o", "metric", "round"], na_position="first").drop(columns="_o").reset_index(drop=True)


def final_rows(summary: pd.DataFrame, metric: str) -> pd.DataFrame:
    """One row per cell: the scalar metric, or a curve's last round."""
    s = summary[summary["metric"] == metric]
    if METRICS[metric].curve:
        s = s.sort_values("round").groupby("cell", sort=False).tail(1)
    return s.set_index("cell")


def resolve(cells: list[Cell], selector: dict[str, Any], summary: pd.DataFrame, metric: str,
            rounds=None) -> list[Cell]:
    """``select`` plus ``best: true``: per algorithm, the cell with the lowest value of
    ``metric``: its final value, or, for a claim about ``rounds`` [first, last] of a curve, its
    mean over those rounds (the value is picked where the claim looks, on the same trials:
    the claim's evidence says so, :func:`best_basis`)."""
    chosen = select(cells, selector)
    if not selector.get("best"):
        return chosen
    if rounds is not None and METRICS[metric].curve:
        from ..claims.base import values_at

        score = {c.id: float(values_at(summary, c.id, metric, rounds)["mean"].mean()) for c in chosen}
        fin = pd.Series(score, dtype=float)
    else:
        fin = final_rows(summary, metric)["mean"]
    best: dict[str, Cell] = {}
    for c in chosen:
        if c.id not in fin.index or not np.isfinite(fin[c.id]):
            continue
        if c.algorithm not in best or fin[c.id] < fin[best[c.algorithm].id]:
            best[c.algorithm] = c
    return [c for c in chosen if best.get(c.algorithm) is c]


def best_basis(claim, picked: list[Cell], tried: list[Cell], split: tuple[int, int] | None = None) -> str:
    """The sentence a claim with a ``best: true`` selector adds to its evidence: what the value
    was picked on, among how many, and on which trials (``split``: the trials it was picked on
    and those the claim was then tested on)."""
    if not picked:
        return ""
    where = (f"its mean over rounds {claim.rounds[0] or 'first'}-{claim.rounds[1] or 'last'}, the rounds the claim "
             "is about" if claim.rounds is not None and METRICS[claim.metric].curve else "its final value")
    on = (f"on the {split[0]} even-numbered trials, and the claim tested on the other {split[1]} (cross-fitted: "
          "selection and test on separate trials)" if split else
          "on the same trials the claim is tested on (post hoc: too few trials to split)")
    return (f"; best setting per algorithm ({', '.join(c.label for c in picked)}) picked among {len(tried)} by "
            f"{where}, {on}")


# -------------------------------------------------------------------------------------
# published values
# -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Published:
    """A published value as configured (``experiment.published[i]``, see
    :class:`rankrepro.pipeline.schema.PublishedCfg`), built once from the config."""

    select: dict
    metric: str
    mean: float
    ci: float | None = None
    round: int | None = None
    source: str = ""
    marks: str = ""
    diagnosis: dict | None = None
    #: the unit of the printed last digit, where the parsed float lost it (0.50 -> 0.01)
    precision: float | None = None
    #: the number of trials behind ``ci`` (default: the experiment's n_trials)
    n: int | None = None
    #: the unit of the printed last digit of ``ci`` (default: the mean's)
    ci_precision: float | None = None
    #: the printed value is exact (a count), not rounded
    exact: bool = False

    @classmethod
    def from_config(cls, node) -> "Published":
        return cls(**OmegaConf.to_container(node))

    @property
    def printed_precision(self) -> float:
        """The unit of the value's printed last digit: ``precision`` when the config states
        it, else read from the value (:func:`rankrepro.stats.printed_precision`)."""
        return float(self.precision) if self.precision is not None else printed_precision(self.mean)

    @property
    def rounding(self) -> float:
        """How far the value the paper computed may lie from the printed one: half a unit of
        the printed last digit (0 for an exact value)."""
        return 0.0 if self.exact else self.printed_precision / 2.0

    @property
    def ci_rounding(self) -> float:
        """Likewise for the printed half-width (a printed +-0.00 is a half-width in [0, 0.005))."""
        if self.ci is None or self.exact:
            return 0.0
        return (float(self.ci_precision) if self.ci_precision is not None else self.printed_precision) / 2.0


def experiment_published(exp: Experiment) -> list[Published]:
    out = []
    for i, node in enumerate(exp.cfg.experiment.published):
        p = Published.from_config(node)
        key = f"{exp.name}: experiment.published[{i}]"
        if p.precision is not None and not p.precision > 0:
            raise ValueError(f"{key}.precision must be > 0 (the unit of the printed last digit), got {p.precision}")
        if p.n is not None and p.n < 1:
            raise ValueError(f"{key}.n must be >= 1 (the paper's number of trials behind ci), got {p.n}")
        if p.ci_precision is not None and not p.ci_precision > 0:
            raise ValueError(f"{key}.ci_precision must be > 0 (the unit of ci's printed last digit), "
                             f"got {p.ci_precision}")
        out.append(p)
    return out


def equivalence_margin(exp: Experiment, p: Published) -> tuple[float, str]:
    """The margin of a published value's equivalence test and where it comes from, as the
    artefact declares it before its results (``experiment.equivalence``): an absolute
    ``margin`` (*declared*), a ``relative`` share of the published value (*declared*,
    relative), or neither: the project's default share (*default*,
    :data:`rankrepro.pipeline.schema.DEFAULT_EQUIVALENCE`)."""
    from ..pipeline.schema import DEFAULT_EQUIVALENCE

    e = exp.cfg.experiment.get("equivalence") or {}
    margin, rel = e.get("margin"), e.get("relative")
    if margin is not None:
        return float(margin), "declared"
    if rel is not None:
        return float(rel) * abs(float(p.mean)), "declared (relative)"
    return float(DEFAULT_EQUIVALENCE["relative"]) * abs(float(p.mean)), "default (relative)"


def equivalence_why(exp: Experiment) -> str:
    """The reason the artefact gives for its equivalence margin (the default's, where it
    declares none)."""
    from ..pipeline.schema import DEFAULT_EQUIVALENCE

    e = exp.cfg.experiment.get("equivalence") or {}
    if e.get("margin") is None and e.get("relative") is None:
        return str(DEFAULT_EQUIVALENCE["why"])
    return str(e.get("why") or "")


#: the columns of :func:`compare_published`
COMPARISON_COLUMNS = ["cell", "label", "metric", "source", "published_mean", "published_ci", "published_n",
                      "mean", "ci", "n", "difference", "difference_ci", "difference_low", "difference_high",
                      "difference_df", "difference_basis", "rounding", "verdict", "difference_p", "difference_se",
                      "difference_bound", "overlap", "equivalence", "equivalence_p", "margin", "margin_source",
                      "equivalence_reachable", "equivalence_trials", "marks", "diagnosis"]


def _finite(x: float) -> float | None:
    return float(x) if x is not None and np.isfinite(x) else None


def compare_published(exp: Experiment, summary: pd.DataFrame, reference_only: bool = False) -> pd.DataFrame:
    """Each published value beside its reproduced cell: the difference reproduced -
    published with its 95% interval (:func:`rankrepro.stats.difference_interval`; the
    paper's number of trials is the published entry's ``n``, else the experiment's
    configured ``n_trials``), the verdict (*consistent* when the interval contains 0, else
    *differs*), the equivalence verdict within the margin (:func:`equivalence_margin`) and,
    for comparison, the former rule's verdict (``overlap``: do the two intervals overlap?).
    ``reference_only`` (a substitute data set): the published value is shown as a reference,
    with no verdict (the statistics are still given)."""
    rows = []
    paper_n = int(exp.cfg.experiment.n_trials)
    for p in experiment_published(exp):
        cell = select(exp.cells, p.select)[0]
        s = summary[(summary["cell"] == cell.id) & (summary["metric"] == p.metric)]
        if METRICS[p.metric].curve:
            s = s[s["round"] == p.round] if p.round is not None else s.sort_values("round").tail(1)
        if s.empty:
            rep = Interval(float("nan"), float("nan"), 0)
        else:
            r = s.iloc[0]
            rep = Interval(float(r["mean"]), float(r["ci"]), int(r["n"]))
        pub_ci = None if p.ci is None else float(p.ci)
        pub_n = int(p.n) if p.n is not None else paper_n
        diff = difference_interval(rep, float(p.mean), pub_ci, pub_n, rounding=p.rounding,
                                   ci_rounding=p.ci_rounding if pub_n >= 2 else 0.0)
        draw = exp.cfg.experiment.get("compare", "mean") == "draw"
        if draw:  # the paper's number is one run: a prediction interval
            # (a published half-width, were there one, and the printed rounding bound it)
            diff = draw_difference_interval(rep, float(p.mean), (0.0 if pub_ci is None else float(pub_ci) + p.ci_rounding)
                                            + p.rounding)
        margin, margin_source = equivalence_margin(exp, p)
        ok = np.isfinite(diff.difference)
        eq = equivalence(diff, margin, rounding=p.rounding) if ok else None
        # a learner run once (deterministic given the data) whose tuning the paper does not
        # state: no sampling spread separates it from the paper but the printed rounding, so it
        # is judged by equivalence within the declared margin (docs/reproducibility.md)
        agree = (None if eq is None else eq.verdict == "equivalent" if diff.basis == "deterministic"
                 else diff.contains_zero)
        reach = equivalence_reachable(diff, margin, rounding=p.rounding) if ok else None
        if ok and not reach and rep.n >= 2 and np.isfinite(rep.half_width):
            sd = float(rep.half_width) * np.sqrt(rep.n) / t_quantile(rep.n - 1, 0.975)
            pub_se = (se_from_half_width(pub_ci + p.ci_rounding, pub_n) if (pub_ci is not None and pub_n >= 2
                                                                          and not draw) else 0.0)
            n_reach = trials_to_reach_equivalence(sd, pub_se, float(pub_n - 1), margin, p.rounding, draw=draw)
        else:
            n_reach = None

        def label(ok: bool | None) -> str:
            if ok is None:
                return "no result"
            return "reference" if reference_only else ("consistent" if ok else "differs")

        rows.append({
            "cell": cell.id, "label": cell.label, "metric": p.metric, "source": p.source,
            "published_mean": float(p.mean), "published_ci": pub_ci, "published_n": 1 if draw else pub_n,
            "mean": rep.mean, "ci": rep.half_width, "n": rep.n, "difference": rep.mean - float(p.mean),
            "difference_ci": _finite(diff.half_width), "difference_low": _finite(diff.low),
            "difference_high": _finite(diff.high), "difference_df": _finite(diff.df),
            "difference_basis": diff.basis, "rounding": p.rounding,
            "verdict": label(agree), "difference_p": _finite(difference_p(diff)) if ok else None,
            "difference_se": _finite(diff.se), "difference_bound": _finite(diff.bound),
            "overlap": label(consistent(rep, float(p.mean), pub_ci)),
            "equivalence": (None if eq is None else "reference" if reference_only else eq.verdict),
            "equivalence_p": None if eq is None else _finite(eq.p),
            "margin": margin, "margin_source": margin_source,
            "equivalence_reachable": reach, "equivalence_trials": n_reach,
            "marks": p.marks, "diagnosis": p.diagnosis,
        })
    return pd.DataFrame(rows, columns=COMPARISON_COLUMNS)


# -------------------------------------------------------------------------------------
# claims
# -------------------------------------------------------------------------------------
def experiment_claims(exp: Experiment) -> list[Claim]:
    """The experiment's claims as typed objects (built from its config)."""
    return [Claim.from_config(cl) for cl in exp.cfg.experiment.claims]


def evaluate_claim(exp: Experiment, claim: Claim | Any, summary: pd.DataFrame,
                   trials: pd.DataFrame | None = None) -> ClaimResult:
    """One claim's verdict and evidence, by its kind's checker (:data:`rankrepro.claims.KINDS`);
    ``claim`` a :class:`Claim` or its config node; ``trials`` the rows ``summary`` was made
    from (a claim about time pairs them)."""
    c = claim if isinstance(claim, Claim) else Claim.from_config(claim)
    unit = str(exp.cfg.experiment.get("claims_unit", "trials"))
    sides = [side for side in (c.lhs, c.rhs) if side and side.get("best")]
    if sides and trials is not None and "trial" in trials and trials["trial"].nunique() >= 4:
        # best-of on separate trials: picked on the even-numbered trials, tested on the odd ones
        pick = trials[trials["trial"] % 2 == 0]
        test = trials[trials["trial"] % 2 == 1]
        pick_summary, test_summary = summarize(exp, pick), summarize(exp, test)
        r = claims.evaluate(c, test_summary, lambda sel: resolve(exp.cells, sel, pick_summary, c.metric, c.rounds),
                            test, unit=unit)
        if r.verdict != "not evaluable":
            for side in sides:
                r.evidence += best_basis(c, resolve(exp.cells, side, pick_summary, c.metric, c.rounds),
                                         select(exp.cells, side), (pick["trial"].nunique(), test["trial"].nunique()))
        return r
    r = claims.evaluate(c, summary, lambda sel: resolve(exp.cells, sel, summary, c.metric, c.rounds), trials,
                        unit=unit)
    for side in sides:
        if r.verdict != "not evaluable":
            r.evidence += best_basis(c, resolve(exp.cells, side, summary, c.metric, c.rounds), select(exp.cells, side))
    return r


def evaluate_claims(exp: Experiment, summary: pd.DataFrame, trials: pd.DataFrame,
                    family: "Family | None" = None) -> list[ClaimResult]:
    """The experiment's claims, decided together with the rest of their family: Holm's
    adjustment over the tested ones and ``family``'s p-values (the paper's other artefacts'
    claims, :func:`family_pvalues`; :func:`rankrepro.claims.testing.adjust`)."""
    out = [evaluate_claim(exp, c, summary, trials) for c in experiment_claims(exp)]
    adjust(out, others=family.pvalues if family is not None else (), name=exp.name)
    return out


@dataclass(frozen=True)
class Family:
    """The p-values of the claims an artefact's claims are adjusted with: the paper's other
    artefacts that run here (their names kept for the record)."""

    artefacts: tuple[str, ...] = ()
    #: (``<artefact>:<claim id>``, p) of each tested claim (the key ranks ties, testing.adjust)
    pvalues: tuple[tuple[str, float], ...] = ()


def claim_pvalues(exp: Experiment, trials: pd.DataFrame) -> list[tuple[str, float]]:
    """(``<artefact>:<claim id>``, unadjusted two-sided p-value) of an experiment's tested claims."""
    trials = trials[trials["cell"].isin([c.id for c in exp.cells])]
    summary = summarize(exp, trials)
    rs = [evaluate_claim(exp, c, summary, trials) for c in experiment_claims(exp)]
    return [(f"{exp.name}:{r.id}", r.stats["p"]) for r in rs if r.stats is not None and r.verdict != "not evaluable"]


def family_pvalues(groups: dict[str, list[str]], load, read, known: dict[str, list] | None = None) -> Family:
    """The family of the paper's other artefacts: ``groups`` their cell files by experiment
    name, ``load(name)`` the experiment, ``read(paths)`` the trials of cell files; ``known``:
    the p-values of experiments already computed from the same files (name -> p-values; added
    to), when one process aggregates several artefacts of a paper."""
    names, ps = [], []
    known = {} if known is None else known
    for name in sorted(groups):
        names.append(name)
        if name not in known:
            known[name] = claim_pvalues(load(name), read(groups[name]))
        ps += known[name]
    return Family(tuple(names), tuple(ps))


# -------------------------------------------------------------------------------------
# sensitivity: the open protocol choices
# -------------------------------------------------------------------------------------
def variant_trials(exp: Experiment, trials: pd.DataFrame, choice: str, value: str) -> pd.DataFrame:
    """The trials of the main cells as they come out under one value of a choice: the
    sensitivity cells' rows in place of their main cells' (under the main cells' ids), the
    main rows where the value does not change a cell's computation."""
    swap = {c.base: c.id for c in exp.sensitivity_cells if c.choice == choice and c.value == value}
    # a value may narrow a grid: only the variant's cells
    main_ids = [c.id for c in exp.variants[(choice, value)].cells]
    # the rows of the main cells kept, in the frame's order, then each sensitivity cell's under
    # its main cell's id: taken in one go (each selection of its own took every text column
    # of the whole frame again, most of an aggregation's time)
    rows = _cell_rows(trials)
    empty = np.empty(0, dtype=np.intp)
    kept = [rows[i] for i in main_ids if i not in swap and i in rows]
    parts = [np.sort(np.concatenate(kept)) if kept else empty] + [rows.get(sid, empty) for sid in swap.values()]
    out = trials.take(np.concatenate(parts)).reset_index(drop=True)
    if swap:
        cells = out["cell"].to_numpy(dtype=object, copy=True)
        at = len(parts[0])
        for base, part in zip(swap, parts[1:]):
            cells[at:at + len(part)] = base
            at += len(part)
        out["cell"] = pd.array(cells, dtype=trials["cell"].dtype)
    return out


def _cell_rows(trials: pd.DataFrame) -> dict[str, np.ndarray]:
    """Each cell's row positions in ``trials`` (ascending), kept while the frame lives."""
    return kept(trials, "cell_rows", lambda t: {str(k): np.asarray(v) for k, v in
                                                t.groupby("cell", sort=False, observed=True).indices.items()})


def _claim_brief(r: ClaimResult) -> dict:
    """A claim's verdict under one value of a choice, with its adjusted p-value and the way its
    tests point (the diagnosis strength adjusts it again over the values tried)."""
    out = {"id": r.id, "verdict": r.verdict}
    if r.stats is not None and "p_adjusted" in r.stats:
        out["p_adjusted"] = r.stats["p_adjusted"]
        ph, po = r.stats["p_held"], r.stats["p_opposite"]
        out["direction"] = "held" if ph < po else "not held" if po < ph else "tie"
    return out


def _headline(exp: Experiment, summary: pd.DataFrame, comparison: pd.DataFrame) -> list[dict]:
    """The numbers a choice is judged on: the published cells, else each cell's final value
    of the figure's (or the first) metric."""
    if not comparison.empty:
        return [{"cell": r["cell"], "label": r["label"], "metric": r["metric"], "mean": r["mean"], "ci": r["ci"],
                 "published_mean": r["published_mean"], "verdict": r["verdict"]} for _, r in comparison.iterrows()]
    e = exp.cfg.experiment
    metric = e.figure.metric if e.figure is not None else e.metrics[0]
    fin = final_rows(summary, metric)
    return [{"cell": c.id, "label": c.label, "metric": metric, "mean": float(fin.loc[c.id, "mean"]),
             "ci": float(fin.loc[c.id, "ci"]), "published_mean": None, "verdict": None}
            for c in exp.cells if c.id in fin.index]


def _align(heads: list[list[dict]]) -> list[list[dict]]:
    """The headline rows of every value on the cells they share (a value that narrows a grid
    has fewer), in the first value's order, so that a table can put them side by side."""
    keys = [(h["cell"], h["metric"]) for h in heads[0]]
    common = [k for k in keys if all(any((h["cell"], h["metric"]) == k for h in hs) for hs in heads)]
    return [[next(h for h in hs if (h["cell"], h["metric"]) == k) for k in common] for hs in heads]


def sensitivity(exp: Experiment, trials: pd.DataFrame, summary: pd.DataFrame, comparison: pd.DataFrame,
                claims: list[ClaimResult], reference_only: bool = False, family: Family | None = None) -> list[dict]:
    """For each open choice and each of its values: what it sets, how many cells it re-ran,
    the headline numbers and every claim's verdict.  Marks, on the main claims, the ones
    whose verdict depends on a choice (``depends_on``)."""
    from ..pipeline import multiverse as mv

    out = []
    e = exp.cfg.experiment
    crossed = mv.labelled(OmegaConf.to_container(e.sensitivity), OmegaConf.to_container(e.multiverse)
                          if e.get("multiverse") is not None else None)
    for sc in exp.cfg.experiment.sensitivity:
        choice = str(sc.choice)
        values = []
        for label, sets in sc["values"].items():
            label = str(label)
            # the reading this value stands for: its choices off their main value
            reading = ({} if label == sc.main else
                       {c: v for c, v in crossed[label].items()
                        if v != str(next(x.main for x in e.sensitivity if str(x.choice) == c))}
                       if choice == mv.CHOICE else {choice: label})
            if label == sc.main:
                v_summary, v_comp, v_claims = summary, comparison, claims
                extra = 0
            else:
                var = exp.variants[(choice, label)]
                v_trials = variant_trials(exp, trials, choice, label)
                v_summary = summarize(var, v_trials)
                v_comp = compare_published(var, v_summary, reference_only)
                v_claims = evaluate_claims(var, v_summary, v_trials, family)
                extra = sum(c.choice == choice and c.value == label for c in exp.sensitivity_cells)
            head = _headline(exp if label == sc.main else exp.variants[(choice, label)], v_summary, v_comp)
            diffs = [abs(h["mean"] - h["published_mean"]) for h in head
                     if h["published_mean"] is not None and h["mean"] is not None and np.isfinite(h["mean"])]
            values.append({
                "value": label, "main": label == sc.main, "reading": reading, "sets": OmegaConf.to_container(sets),
                "extra_cells": extra,
                "headline": head,
                "mean_abs_difference": float(np.mean(diffs)) if diffs else None,
                "consistent": sum(h["verdict"] == "consistent" for h in head),
                "compared": sum(h["verdict"] in ("consistent", "differs") for h in head),
                # the joint test of the whole published table under this reading (table_test_record)
                "table_test": _reading_test(v_comp, not reference_only),
                "claims": [_claim_brief(r) for r in v_claims],
            })
        for v, h in zip(values, _align([v["headline"] for v in values])):
            v["headline"] = h
        flips = []
        for i, r in enumerate(claims):
            verdicts = {v["value"]: v["claims"][i]["verdict"] for v in values}
            if len(set(verdicts.values())) > 1:
                flips.append(r.id)
                r.depends_on = (r.depends_on or []) + [{"choice": choice, "verdicts": verdicts}]
        out.append({"choice": choice, "text": sc.text, "main": str(sc.main), "why": sc.why, "values": values,
                    "flips": flips})
    return out


def claims_to_json(results: list[ClaimResult]) -> list[dict]:
    """The claims as the record keeps them (``timing`` only on a claim about time, ``stats`` on a
    tested one)."""
    return [{k: v for k, v in asdict(r).items() if not (k in ("timing", "stats", "trivial") and v is None)}
            for r in results]


@dataclass(frozen=True)
class Significance:
    """A significance test as configured (``experiment.significance[i]``, see
    :class:`rankrepro.pipeline.schema.SignificanceCfg`)."""

    against: dict
    mark: str
    level: float = 0.05

    @classmethod
    def from_config(cls, node) -> "Significance":
        return cls(**OmegaConf.to_container(node))


def significance_marks(exp: Experiment, trials: pd.DataFrame) -> dict[tuple[str, str], str]:
    """(cell, test metric) -> marks: for each configured baseline, its mark when the cell's
    per-query values are greater in a one-tailed paired t-test at the configured level."""
    out: dict[tuple[str, str], str] = {}
    sigs = [Significance.from_config(sg) for sg in exp.cfg.experiment.significance]
    if not sigs:
        return out
    pq = trials[trials["metric"].str.startswith("query_")]
    for sg in sigs:
        base = select(exp.cells, sg.against)[0]
        for m in pq["metric"].unique():
            # a query's value, averaged over the trials that hold it (the seeds of a LETOR seeds run)
            b = pq[(pq["cell"] == base.id) & (pq["metric"] == m)].groupby("round")["value"].mean()
            for cell in exp.cells:
                if cell.id == base.id:
                    continue
                a = pq[(pq["cell"] == cell.id) & (pq["metric"] == m)].groupby("round")["value"].mean()
                common = a.index.intersection(b.index)
                if len(common) < 2 or np.allclose(a[common].to_numpy(), b[common].to_numpy()):
                    continue
                if paired_t_greater(a[common].to_numpy(), b[common].to_numpy()) < sg.level:
                    key = (cell.id, "test_" + m[len("query_"):])
                    out[key] = out.get(key, "") + sg.mark
    return out
