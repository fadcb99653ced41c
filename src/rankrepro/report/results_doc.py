"""docs/results.md, rendered from ``docs/results.md.j2`` by the report's Jinja engine: the
prose is the template's; the scorecard and every reproduced number on the page come from the
records (``results/<paper>/<artefact>.json`` and the summary tables ``.csv`` beside them).

The numbers are computed by the named functions below, one per artefact the page quotes (its
trials and scorecard counts are always there), and passed to the template as its context:
``{{ t1.bpm | span }}`` writes the range of Harrington Table 1's OAP-BPM means, ``{{ oh.ranksvm
| fmt(".3f") }}`` a mean with three decimals.  To quote another number, add it to the
artefact's function (or add a function to :data:`QUOTED`), then write it in the template.

``scripts/results_doc.py`` writes the page (``--check``: fails when it differs), and
``tests/test_results_doc.py`` fails when the committed page and the committed records disagree.
"""

from __future__ import annotations

import json
import traceback
from pathlib import Path

import pandas as pd

from ..files import read_json
from .scorecard import artefact_score, is_replication, scorecard, status_table
from .templating import environment, fmt

TEMPLATE = Path(__file__).resolve().parents[3] / "docs" / "results.md.j2"


class DocError(ValueError):
    """A number that cannot be computed, or a template that cannot be rendered: names the
    record and cell, or the template's line."""


class Artefact:
    """One record and its summary table; ``metric``: the metric of its numbers unless named.
    A curve metric's value is its last round."""

    def __init__(self, root: str | Path, name: str, metric: str):
        path = Path(root) / f"{name}.json"
        if not path.is_file():
            raise DocError(f"no record {path}")
        self.name, self.metric, self.root = name, metric, Path(root)
        self.record = read_json(path, "record")
        self.summary = pd.read_csv(path.with_suffix(".csv"))

    def v(self, cell: str, metric: str | None = None, field: str = "mean") -> float:
        """A cell's reproduced mean (or ``ci``, ``low``, ``high``, ``n``), from the summary table."""
        s, metric = self.summary, metric or self.metric
        rows = s[(s["cell"] == cell) & (s["metric"] == metric)]
        if rows.empty:
            raise DocError(f"{self.name}: no summary row for cell '{cell}', metric '{metric}' "
                           f"(cells: {sorted(set(s['cell']))})")
        return float(rows.sort_values("round").iloc[-1][field])

    def cells(self, *algorithms: str) -> list[str]:
        """The cell ids of these algorithms, in the table's order."""
        s, out = self.summary, []
        for a in algorithms:
            cells = list(dict.fromkeys(s[s["algorithm"] == a]["cell"]))
            if not cells:
                raise DocError(f"{self.name}: no cell of algorithm '{a}'")
            out += cells
        return out

    def pub(self, cell: str) -> float:
        """The published value beside a cell."""
        for t in self.record["table"]:
            if t["cell"] == cell and t["metric"] == self.metric and t["published_mean"] is not None:
                return float(t["published_mean"])
        raise DocError(f"{self.name}: cell '{cell}' has no published value of '{self.metric}'")

    def sens(self, choice: str, value: str) -> dict:
        """One value of an open choice's sensitivity run: ``consistent``, ``compared``,
        ``mean_abs_difference``, ``extra_cells``, ``headline``."""
        for sc in self.record.get("sensitivity", []):
            if sc["choice"] == choice:
                for val in sc["values"]:
                    if val["value"] == value:
                        return val
                raise DocError(f"{self.name}: choice '{choice}' has no value '{value}'")
        raise DocError(f"{self.name}: no sensitivity choice '{choice}'")

    def sv(self, choice: str, value: str, cell: str) -> float:
        """A cell's headline mean under a value of an open choice."""
        for h in self.sens(choice, value)["headline"]:
            if h["cell"] == cell and h["metric"] == self.metric:
                return float(h["mean"])
        raise DocError(f"{self.name}: no headline value of '{cell}' ({self.metric}) under {choice}={value}")


# The numbers each quoted artefact gives the page, by name.

def harrington_table1(a: Artefact) -> dict:
    bpm = a.cells("oap_bpm")
    return {"bpm": [a.v(c) for c in bpm], "bpm_paper": [a.pub(c) for c in bpm],
            "after_5000": a.sens("training_rounds", "5000")}


def cystic_fibrosis(a: Artefact) -> dict:
    learners, bpm = a.cells("prank", "oap_vp", "oap_bagg", "oap_bpm"), a.cells("oap_bpm")

    def centred(c):
        return a.sv("instance_encoding", "centred", c)

    return {"above_paper": [a.v(c) - a.pub(c) for c in learners],
            "centring_gain": [a.v(c) - centred(c) for c in learners],
            "wh_centred": centred("widrow_hoff-eta0.2"), "wh_paper": a.pub("widrow_hoff-eta0.2"),
            "wh005_above": a.v("widrow_hoff-eta0.05") - a.pub("widrow_hoff-eta0.05"),
            "bpm_centred_above_paper": [centred(c) - a.pub(c) for c in bpm], "bpm_paper": [a.pub(c) for c in bpm],
            # every reading tried: OAP-BPM's lowest mean under any value of any choice, the joint
            # choice's strength (the ensembles' diagnosis), what drawing the test pairs apart moves
            "bpm_best_reading": min(h["mean"] for sc in a.record["sensitivity"] for v in sc["values"]
                                    for h in v["headline"] if h["cell"] in bpm and h["metric"] == a.metric),
            "joint": next(t["diagnosis"]["strength"] for t in a.record["table"]
                          if t["cell"] == "prank" and t.get("diagnosis")),
            "apart_moves": [abs(a.sv("test_pairs", "drawn_apart", c) - a.v(c)) for c in learners]}


def elsas_sec3(a: Artefact) -> dict:
    return {"rnrnrn": a.v("list-rankingRNRNRN"), "rnrnrn_paper": a.pub("list-rankingRNRNRN")}


def elsas_ohsumed(a: Artefact) -> dict:
    learners = ("ranksvm", "rankboost", "com_a", "com_b", "pocket", "average")
    return {**{c: a.v(c) for c in learners}, "paper": {c: a.pub(c) for c in learners},
            "ci": [x for x in (a.v(c, field="ci") for c in a.cells(*learners)) if x == x],  # seeded learners
            "file_order": a.sens("pair_order", "file"),
            "file_order_loss": a.v("average") - a.sv("pair_order", "file", "average")}


def elsas_table5(a: Artefact) -> dict:
    faster = next(c for c in a.record["claims"] if c["id"] == "committee_faster")
    validated = next(t for t in faster["timing"] if t["rhs"] == "ranksvm")
    return {"svm_ratio": a.v("ranksvm") / a.v("committee"), "svmlight_ratio": a.v("ranksvm_svmlight") / a.v("committee"),
            "per_fold": validated["per_trial"]}


def coactive_web_strict(a: Artefact) -> dict:
    return {"alpha1": a.v("perceptron-alpha1.0"), "alpha01": a.v("perceptron-alpha0.1")}


def coactive_movies_strict(a: Artefact) -> dict:
    return {"alpha01": a.v("perceptron-alpha0.1"), "alpha05": a.v("perceptron-alpha0.5"),
            "alpha1": a.v("perceptron-alpha1.0")}


def coactive_noisy(a: Artefact, seconds: str) -> dict:
    """The perceptron against the Ranking SVM: regret, and the CPU seconds of a pass (web
    search) or of a group (movies: the learners' own time), the clock the cost claims are
    decided on."""
    s = {c: a.v(c, seconds) for c in ("perceptron", "ranksvm")}
    return {"perceptron": a.v("perceptron"), "ranksvm": a.v("ranksvm"), "seconds": s,
            "cost_ratio": s["ranksvm"] / s["perceptron"]}


def arena_letor_coactive(a: Artefact) -> dict:
    """The coactive perceptron's two simulated users against the best of the rankers trained on
    the labels (test NDCG@10 and MAP, means over the folds): what the weaker supervision costs."""
    labelled = [c for c in dict.fromkeys(a.summary["cell"]) if not c.startswith("coactive")]
    best = max(labelled, key=a.v)
    label = a.summary[a.summary["cell"] == best]["label"].iloc[0]
    strong, noisy = "coactive-feedbackstrict", "coactive-feedbacknoisy"
    return {"strong": a.v(strong), "noisy": a.v(noisy), "best": a.v(best), "best_label": label,
            "cost": a.v(best) - a.v(strong), "cost_noisy": a.v(best) - a.v(noisy),
            "strong_map": a.v(strong, "test_map"), "noisy_map": a.v(noisy, "test_map"),
            "best_map": max(a.v(c, "test_map") for c in labelled)}


def yu_tables(a: Artefact) -> dict:
    models = a.cells("gpr", "cgpr", "gpor", "cgpor")
    return {"mae": [a.v(c) for c in models], "mae_paper": [a.pub(c) for c in models],
            "mae_100": {m: a.v(f"{m}-n_items100") for m in ("gpor", "cgpor")},
            "zero_one_400": {m: a.v(f"{m}-n_items400", "zero_one") for m in ("gpr", "gpor", "cgpor")},
            "fit_cap": fit_cap(Path(a.root) / "yu2006" / "tables" / "fit_cap.json")}


def fit_cap(path: Path) -> dict:
    """scripts/gp_fit_cap.py's record: the threshold/sigma searches of the GPOR models and those
    that stopped at the L-BFGS cap, over all main cells and draws."""
    if not path.is_file():
        raise DocError(f"no record {path} (python scripts/gp_fit_cap.py writes it)")
    cells = read_json(path, "cell index")["cells"].values()
    searches, capped = sum(c["searches"] for c in cells), sum(c["capped"] for c in cells)
    return {"searches": searches, "capped": capped, "share": capped / searches if searches else 0.0,
            "iters": sorted({c["param_fit_iters"] for c in cells})}


#: the artefacts the page quotes: name in the template -> (record, the metric of its numbers, its numbers)
QUOTED = {
    "t1": ("harrington2003/table1", "test_rank_loss", harrington_table1),
    "fig6": ("crammer_singer2005/fig6", "online_rank_loss", None),
    "cf": ("harrington2003/table2_cystic_fibrosis", "test_rank_loss", cystic_fibrosis),
    "sec3": ("elsas2008/sec3_table", "list_ndcg", elsas_sec3),
    "oh": ("elsas2008/table4_ohsumed", "test_map", elsas_ohsumed),
    "t5": ("elsas2008/table5", "selected_train_seconds", elsas_table5),
    "web_strict": ("shivaswamy2012/fig2", "regret", coactive_web_strict),
    "web_noisy": ("shivaswamy2012/fig3", "regret", lambda a: coactive_noisy(a, "train_seconds")),
    "movies_strict": ("shivaswamy2012/fig4", "regret", coactive_movies_strict),
    "movies_noisy": ("shivaswamy2012/fig5", "regret", lambda a: coactive_noisy(a, "train_seconds")),
    "yu": ("yu2006/tables", "mae", yu_tables),
    "arena_oh": ("arena/letor_ohsumed", "test_ndcg@10", arena_letor_coactive),
    "arena_mq": ("arena/letor_mq2008", "test_ndcg@10", arena_letor_coactive),
}


def claim_verdict(records: dict, name: str, claim: str) -> str:
    """A claim's verdict as its record says (the page's verdict words are the records')."""
    rec = records.get(name)
    if rec is None:
        raise KeyError(f"docs/results.md.j2: no record results/{name}.json")
    for c in rec.get("claims", []):
        if c["id"] == claim:
            return c["verdict"]
    raise KeyError(f"docs/results.md.j2: results/{name}.json has no claim '{claim}'")


def context(root: str | Path = "results") -> dict:
    """The template's variables: the scorecard of every record under ``root``, and per quoted
    artefact its trials, its scorecard counts and its named numbers."""
    root = Path(root)
    records = {f"{p.parent.name}/{p.stem}": read_json(p, "record") for p in sorted(root.glob("*/*.json"))}
    sc = scorecard([r for r in records.values() if is_replication(r)])
    ctx = {"scorecard": sc, "status_table": status_table(sc, lambda n: f"[`{n}`](../results/{n}.md)"),
           "verdict": lambda name, claim: claim_verdict(records, name, claim),
           # the arena's comparisons (report.arena), by family
           "arena": {p.stem: read_json(p, "record") for p in sorted(root.glob("arena/comparison/*.json"))},
           # each record's platform section (make spread; pipeline/platforms.py)
           "platforms": [(n, r["platform"]) for n, r in records.items() if r.get("platform")]}
    for key, (name, metric, numbers) in QUOTED.items():
        a = Artefact(root, name, metric)
        ctx[key] = {"trials": int(a.record["n_trials"]), "score": artefact_score(a.record),
                    **(numbers(a) if numbers else {})}
    return ctx


#: the README's generated status table lies between these two lines
README_MARKS = ("<!-- status table: generated from the records by scripts/results_doc.py; do not edit -->",
                "<!-- end of the status table -->")


def readme_status(readme_text: str, root: str | Path = "results") -> str:
    """The README with its status table (between :data:`README_MARKS`) made again from the
    records under ``root`` (:func:`rankrepro.report.scorecard.status_table`)."""
    root = Path(root)
    recs = [read_json(p, "record") for p in sorted(root.glob("*/*.json"))]
    table = status_table(scorecard([r for r in recs if is_replication(r)]), lambda n: f"[`{n}`](results/{n}.md)")
    a, b = README_MARKS
    if a not in readme_text or b not in readme_text:
        raise DocError(f"README.md: the status table's markers are missing ({a} ... {b})")
    head, rest = readme_text.split(a, 1)
    _, tail = rest.split(b, 1)
    return f"{head}{a}\n{table}{b}{tail}"


def span(values: list[float], spec: str = ".2f") -> str:
    """The range of some numbers, as "low-high", with as many more decimals as it takes (up to
    six) for two different ends not to print alike ("0.00-0.00" for 0.0001-0.0033)."""
    lo, hi = min(values), max(values)
    if spec.endswith("f") and lo != hi:
        digits = int(spec[1:-1] or 6)
        while digits < 6 and fmt(lo, f".{digits}f") == fmt(hi, f".{digits}f"):
            digits += 1
        spec = f".{digits}f"
    return f"{fmt(lo, spec)}-{fmt(hi, spec)}"


def render(root: str | Path = "results", template: str | Path = TEMPLATE) -> str:
    """The page from the records under ``root``."""
    template = Path(template)
    env = environment(template.parent)
    env.filters["span"] = span
    ctx = context(root)
    try:
        return env.get_template(template.name).render(ctx)
    except Exception as e:  # noqa: BLE001 - reported with the template's line
        lines = [f.lineno for f in traceback.extract_tb(e.__traceback__) if f.filename == str(template)]
        where = f"{template.name} line {lines[-1]}" if lines else template.name
        raise DocError(f"{where}: {type(e).__name__}: {e}") from None
