"""The scorecard counts, from the artefacts' records: the report's scorecard
(:mod:`rankrepro.report.html`) and the one of docs/results.md
(:mod:`rankrepro.report.results_doc`) are both made from :func:`scorecard`."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field

from ..stats import pooled_rmse


@dataclass
class ArtefactScore:
    name: str
    paper: str
    artefact: str
    title: str
    #: the artefact ran here (its record has results); says nothing of agreement
    ran: bool
    original: bool | None = None
    #: published cells on the paper's own data: consistent (the difference's 95% interval
    #: contains 0), and judged (consistent or differs)
    consistent: int = 0
    compared: int = 0
    #: the same cells under the former rule (the two 95% intervals overlap), and how many
    #: cells the two rules give different verdicts
    overlap_consistent: int = 0
    verdict_changes: int = 0
    #: the judged cells by equivalence verdict (two one-sided tests within the margin)
    equivalent: int = 0
    different: int = 0
    undecided: int = 0
    #: undecided cells whose trials could not show equivalence even at a difference of 0
    unreachable: int = 0
    #: the joint test of the whole published table (record ``table_test``): None where none
    table_agrees: bool | None = None
    table_p: float | None = None
    #: the table's cells without a sampling spread that are outside (they fail it alone)
    table_exact_outside: int = 0
    #: the multiverse (record ``multiverse``): its readings, the confidence set's size (None
    #: without a table), and the word's spread over the confidence set (all readings without one)
    readings: int = 0
    compatible: int | None = None
    word_counts: dict = field(default_factory=dict)
    #: published cells on substitute data (shown as references, not judged)
    references: int = 0
    #: substantive claims by verdict (trivial ones, exact arithmetic or a description, apart)
    claims: int = 0
    held: int = 0
    inconclusive: int = 0
    not_held: int = 0
    not_evaluable: int = 0
    trivial: int = 0
    trivial_held: int = 0
    #: published significance marks compared with ours (original data), and how many agree
    marks_compared: int = 0
    marks_agree: int = 0

    def parts(self) -> dict[str, str]:
        """The states of the artefact's two parts (:data:`PART_STATES`), each part only where it
        has something to count.  *table* (the paper's own data): *agrees* when the joint test of
        the whole published table does not reject (``table_test``), else *partly* when some cell
        is consistent and *disagrees* when none is.  *claims* (the substantive ones that could be
        evaluated): *agrees* when every one held, *disagrees* when some did not hold and none
        held, *partly* when some held and some did not, *undecided* when none failed and some
        are inconclusive."""
        out = {}
        if self.original and self.compared:
            out["table"] = ("agrees" if self.table_agrees else "partly" if self.consistent else "disagrees")
        if self.claims - self.not_evaluable:
            if self.not_held:
                out["claims"] = "partly" if self.held else "disagrees"
            else:
                out["claims"] = "undecided" if self.inconclusive else "agrees"
        return out

    @property
    def agreement(self) -> str:
        """What the artefact's verdicts say, in one word (:data:`AGREEMENT`), from its
        :meth:`parts`.  On the paper's own data: *reproduced* when every part agrees;
        *partly reproduced* when some part partly agrees, or one agrees and another disagrees;
        *not reproduced* when some part disagrees and none agrees or partly agrees;
        *inconclusive* when no part disagrees or partly agrees and some part is undecided.  On
        substitute data the published values are references, so only the claims speak
        (*claims hold*, *claims partly hold*, *claims do not hold*, *claims inconclusive*);
        *-* where nothing was published or claimed; *not run*."""
        if not self.ran:
            return "not run"
        states = set(self.parts().values())
        if not states:
            return "-"
        if self.original:
            bad = states & {"disagrees", "partly"}
            if bad:
                return "partly reproduced" if states & {"agrees", "partly"} else "not reproduced"
            return "inconclusive" if "undecided" in states else "reproduced"
        return {"agrees": "claims hold (substitute data)", "partly": "claims partly hold (substitute data)",
                "disagrees": "claims do not hold (substitute data)",
                "undecided": "claims inconclusive (substitute data)"}[self.parts()["claims"]]


#: a part's states (:meth:`ArtefactScore.parts`)
PART_STATES = ("agrees", "partly", "disagrees", "undecided")


#: every agreement word, in the order the report lists them
AGREEMENT = ("reproduced", "partly reproduced", "not reproduced", "inconclusive", "claims hold (substitute data)",
             "claims partly hold (substitute data)", "claims do not hold (substitute data)",
             "claims inconclusive (substitute data)", "-", "not run")


@dataclass
class PaperMeasures:
    """A paper's reproducibility measures (Breuer et al., SIGIR 2020), pooled over its
    artefacts on the paper's own data (``original``) or over those on substitutes, from the
    records' ``reproducibility`` sections (:mod:`rankrepro.report.reproducibility`)."""

    paper: str
    original: bool
    #: the artefacts pooled (those with published cells compared)
    artefacts: list[str] = field(default_factory=list)
    #: per metric: {metric, cells, rmse} over every published cell of the metric in these artefacts
    rmse: list[dict] = field(default_factory=list)
    #: every table column's {artefact, metric, column, cells, tau}, and their mean
    kendall_tau: list[dict] = field(default_factory=list)
    kendall_tau_mean: float | None = None
    #: every comparative claim's {artefact, claim, metric, pairs, effect_ratio, delta_ri},
    #: and the medians of its effect ratios and delta relative improvements
    effects: list[dict] = field(default_factory=list)
    effect_ratio_median: float | None = None
    delta_ri_median: float | None = None


def paper_measures(records: list[dict]) -> list[PaperMeasures]:
    """Per paper and kind of data (original first), the pooled measures; a paper with no
    published cell compared has none."""
    groups: dict[tuple[str, bool], list[dict]] = {}
    for r in records:
        rep = r.get("reproducibility") if r.get("status") == "ran" else None
        if rep and (rep["rmse"] or rep["effects"] or rep["kendall_tau"]):
            groups.setdefault((r["paper"], bool(r["dataset"]["original"])), []).append(r)
    out = []
    for (paper, original), recs in sorted(groups.items(), key=lambda kv: (kv[0][0], not kv[0][1])):
        pm = PaperMeasures(paper, original, [r["name"] for r in recs])
        sq: dict[str, list[tuple[float, int]]] = {}
        for r in recs:
            rep = r["reproducibility"]
            for m in rep["rmse"]:
                sq.setdefault(m["metric"], []).append((m["rmse"], m["cells"]))
            pm.kendall_tau += [{"artefact": r["name"], **k} for k in rep["kendall_tau"]]
            pm.effects += [{"artefact": r["name"], **{k: v for k, v in e.items()}} for e in rep["effects"]]
        pm.rmse = [{"metric": m, "cells": sum(n for _, n in parts), "rmse": pooled_rmse(parts)}
                   for m, parts in sq.items()]
        taus = [k["tau"] for k in pm.kendall_tau if k["tau"] is not None]
        pm.kendall_tau_mean = sum(taus) / len(taus) if taus else None
        ers = [e["effect_ratio"] for e in pm.effects if e["effect_ratio"] is not None]
        dris = [e["delta_ri"] for e in pm.effects if e["delta_ri"] is not None]
        pm.effect_ratio_median = statistics.median(ers) if ers else None
        pm.delta_ri_median = statistics.median(dris) if dris else None
        out.append(pm)
    return out


@dataclass
class Scorecard:
    artefacts: list[ArtefactScore]
    #: the diagnoses of the disagreements (cells that differ, claims not held) by kind
    disagreements: dict[str, int] = field(default_factory=dict)
    #: the same by kind and strength (report/diagnosis.py): {kind: {level: n}}
    strengths: dict[str, dict[str, int]] = field(default_factory=dict)
    #: the reproducibility measures per paper (and kind of data)
    papers: list[PaperMeasures] = field(default_factory=list)

    def total(self, key: str) -> int:
        return sum(getattr(a, key) for a in self.artefacts)

    @property
    def ran(self) -> list[ArtefactScore]:
        return [a for a in self.artefacts if a.ran]

    @property
    def substitutes(self) -> int:
        return sum(not a.original for a in self.ran)

    def by_data(self, original: bool) -> list[ArtefactScore]:
        """The artefacts that ran on the paper's own data (``original``) or on a substitute."""
        return [a for a in self.ran if bool(a.original) == original]

    def count(self, key: str, original: bool) -> int:
        return sum(getattr(a, key) for a in self.by_data(original))

    def agreements(self) -> dict[str, int]:
        """How many artefacts each agreement word describes."""
        out = {w: 0 for w in AGREEMENT}
        for a in self.artefacts:
            out[a.agreement] += 1
        return {w: n for w, n in out.items() if n}


def is_replication(r: dict) -> bool:
    """Whether a record replicates a paper's artefact (and counts in the scorecard): every
    record but the arena's (config/experiment/arena/), which put the papers' learners side by
    side on their data sets and have no published values to agree with."""
    return r["paper"] != "arena"


def artefact_score(r: dict) -> ArtefactScore:
    s = ArtefactScore(r["name"], r["paper"], r["artefact"], r["title"], r.get("status") == "ran")
    if not s.ran:
        return s
    s.original = bool(r["dataset"]["original"])
    verdicts = [t["verdict"] for t in r["table"]]
    s.consistent = verdicts.count("consistent")
    s.compared = s.consistent + verdicts.count("differs")
    s.references = verdicts.count("reference")
    judged = [t for t in r["table"] if t["verdict"] in ("consistent", "differs")]
    s.overlap_consistent = sum(t.get("overlap") == "consistent" for t in judged)
    s.verdict_changes = sum(t.get("overlap") is not None and t["overlap"] != t["verdict"] for t in judged)
    eqs = [t.get("equivalence") for t in judged]
    s.equivalent, s.different, s.undecided = eqs.count("equivalent"), eqs.count("different"), eqs.count("undecided")
    s.unreachable = sum(t.get("equivalence") == "undecided" and t.get("equivalence_reachable") is False
                        for t in judged)
    mv = r.get("multiverse")
    if mv:
        s.readings = mv["readings"]
        s.compatible = len(mv["confidence_set"]) if mv["table"] else None
        s.word_counts = dict(mv["word"]["counts"])
    if r.get("table_test") and s.original:
        s.table_agrees, s.table_p = bool(r["table_test"]["agrees"]), r["table_test"]["p"]
        s.table_exact_outside = len(r["table_test"]["exact_outside"])
    s.trivial = sum(bool(c.get("trivial")) for c in r["claims"])
    s.trivial_held = sum(bool(c.get("trivial")) and c["verdict"] == "held" for c in r["claims"])
    cv = [c["verdict"] for c in r["claims"] if not c.get("trivial")]
    s.claims, s.held, s.inconclusive = len(cv), cv.count("held"), cv.count("inconclusive")
    s.not_held, s.not_evaluable = cv.count("not held"), cv.count("not evaluable")
    sm = r.get("significance_marks")
    if sm and sm.get("judged"):
        s.marks_compared, s.marks_agree = sm["compared"], sm["agree"]
    return s


def not_evidence(scale: str) -> str | None:
    """What a report at a scale other than the papers' must say of its verdicts (None at paper
    scale): a smoke run's few trials and rounds make its consistent / differs and held / not
    held counts a check that the pipeline runs, not evidence about the papers."""
    if scale == "paper":
        return None
    return (f"Scale {scale}: these verdicts are not evidence. Every artefact ran with far fewer trials, rounds "
            "or items than the papers (this scale checks that the pipeline runs end to end), so the counts of "
            "consistent cells and held claims say nothing about the replication; the paper-scale report "
            "(results/report/index.html) is the one to read.")


def scorecard(records: list[dict]) -> Scorecard:
    arts = [artefact_score(r) for r in records]
    by_kind: dict[str, int] = {}
    by_strength: dict[str, dict[str, int]] = {}
    for r in records:
        if r.get("status") != "ran":
            continue
        diags = [t.get("diagnosis") for t in r["table"] if t["verdict"] == "differs"] + \
                [c.get("diagnosis") for c in r["claims"] if c["verdict"] == "not held"]
        for d in diags:
            k = d["kind"] if d else "undiagnosed"
            by_kind[k] = by_kind.get(k, 0) + 1
            if d:
                lv = (d.get("strength") or {}).get("level", "not swept")
                by_strength.setdefault(k, {})
                by_strength[k][lv] = by_strength[k].get(lv, 0) + 1
    return Scorecard(arts, dict(sorted(by_kind.items())), dict(sorted(by_strength.items())), paper_measures(records))


def readings_cell(a: "ArtefactScore") -> str:
    """The status table's cell of an artefact's multiverse: how many readings are compatible
    with the paper's table, and whether its word is the same over them."""
    if not a.readings:
        return "-"
    n = sum(a.word_counts.values())
    over = (f"{a.compatible} of {a.readings} compatible" if a.compatible else
            f"none of {a.readings} compatible" if a.compatible == 0 else f"{a.readings} readings")
    words = ("robust" if len(a.word_counts) == 1 else
             "depends: " + ", ".join(f"{w} {k}" for w, k in a.word_counts.items()))
    return f"{over}; word {words}" + (f" (over {n})" if a.compatible else "")


def status_table(sc: Scorecard, link=None) -> str:
    """The artefacts' agreement as a Markdown table (the README's status and docs/results.md):
    per artefact the published cells consistent / differing and their equivalence verdicts, the
    substantive claims held / not held / inconclusive, the trivial claims apart, and the
    agreement word (:attr:`ArtefactScore.agreement`); the artefacts on the papers' own data
    first, then those on substitute data (their published values references, not judged), then
    those not run.  ``link(name)``: the text of an artefact's cell (default: its name as code)."""
    link = link or (lambda name: f"`{name}`")
    head = ("| artefact | the table (joint test) | published cells: consistent / differ "
            "| equivalent / different / undecided (of which unreachable) "
            "| claims: held / not held / inconclusive | trivial claims held | agreement | over the readings |"
            "\n|---|---|---|---|---|---|---|---|")

    readings = readings_cell

    def table(a):
        if a.table_agrees is None:
            return "-"
        why = [] if a.table_p is None else [f"p = {a.table_p:.2g}"]
        if a.table_exact_outside:
            why.append(f"{a.table_exact_outside} exact cell{'s' if a.table_exact_outside > 1 else ''} outside")
        return ("agrees" if a.table_agrees else "differs") + (f" ({', '.join(why)})" if why else "")

    def cells(a):
        if a.compared:
            return f"{a.consistent} / {a.compared - a.consistent}"
        return f"{a.references} references" if a.references else "-"

    def eq(a):
        return f"{a.equivalent} / {a.different} / {a.undecided} ({a.unreachable})" if a.compared else "-"

    def claims(a):
        decided = a.claims - a.not_evaluable
        return f"{a.held} / {a.not_held} / {a.inconclusive}" if decided else "-"

    def row(a):
        triv = f"{a.trivial_held} / {a.trivial}" if a.trivial else "-"
        return (f"| {link(a.name)} | {table(a)} | {cells(a)} | {eq(a)} | {claims(a)} | {triv} | {a.agreement} | "
                f"{readings(a)} |")

    out = []
    for title, arts in (("On the papers' own data", sc.by_data(True)),
                        ("On substitute data (the published values are references, not judged)", sc.by_data(False))):
        if not arts:
            continue
        out += [f"**{title}**", "", head] + [row(a) for a in sorted(arts, key=lambda a: a.name)]
        tot = ArtefactScore("all", "", "", "", True, original=arts[0].original)
        for k in ("consistent", "compared", "references", "equivalent", "different", "undecided", "unreachable",
                  "claims", "held", "not_held", "inconclusive", "not_evaluable", "trivial", "trivial_held"):
            setattr(tot, k, sum(getattr(a, k) for a in arts))
        tables = [a for a in arts if a.table_agrees is not None]
        tab = f"{sum(a.table_agrees for a in tables)} of {len(tables)} agree" if tables else "-"
        out += [f"| **all {len(arts)}** | {tab} | {cells(tot)} | {eq(tot)} | {claims(tot)} | "
                f"{f'{tot.trivial_held} / {tot.trivial}' if tot.trivial else '-'} | | |", ""]
    not_run = [a for a in sc.artefacts if not a.ran]
    if not_run:
        out += ["**Not run** (their data cannot be had here): " + ", ".join(link(a.name) for a in not_run), ""]
    return "\n".join(out).rstrip() + "\n"
