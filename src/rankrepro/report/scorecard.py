"""The scorecard counts, from the artefacts' records: the report's scorecard
(:mod:`rankrepro.report.html`) and the one of docs/results.md
(:mod:`rankrepro.report.results_doc`) are both made from :func:`scorecard`."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class ArtefactScore:
    name: str
    paper: str
    artefact: str
    title: str
    reproduced: bool
    original: bool | None = None
    #: published cells on the paper's own data: consistent, and judged (consistent or differs)
    consistent: int = 0
    compared: int = 0
    #: published cells on substitute data (shown as references, not judged)
    references: int = 0
    #: claims by verdict
    claims: int = 0
    held: int = 0
    inconclusive: int = 0
    not_held: int = 0
    not_evaluable: int = 0


@dataclass
class Scorecard:
    artefacts: list[ArtefactScore]
    #: the diagnoses of the disagreements (cells that differ, claims not held) by kind
    disagreements: dict[str, int] = field(default_factory=dict)
    #: the same by kind and strength (report/diagnosis.py): {kind: {level: n}}
    strengths: dict[str, dict[str, int]] = field(default_factory=dict)

    def total(self, key: str) -> int:
        return sum(getattr(a, key) for a in self.artefacts)

    @property
    def reproduced(self) -> list[ArtefactScore]:
        return [a for a in self.artefacts if a.reproduced]

    @property
    def substitutes(self) -> int:
        return sum(not a.original for a in self.reproduced)


def artefact_score(r: dict) -> ArtefactScore:
    s = ArtefactScore(r["name"], r["paper"], r["artefact"], r["title"], r.get("status") == "reproduced")
    if not s.reproduced:
        return s
    s.original = bool(r["dataset"]["original"])
    verdicts = [t["verdict"] for t in r["table"]]
    s.consistent = verdicts.count("consistent")
    s.compared = s.consistent + verdicts.count("differs")
    s.references = verdicts.count("reference")
    cv = [c["verdict"] for c in r["claims"]]
    s.claims, s.held, s.inconclusive = len(cv), cv.count("held"), cv.count("inconclusive")
    s.not_held, s.not_evaluable = cv.count("not held"), cv.count("not evaluable")
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
        if r.get("status") != "reproduced":
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
    return Scorecard(arts, dict(sorted(by_kind.items())), dict(sorted(by_strength.items())))
