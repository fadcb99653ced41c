"""Build one artefact's outputs from its cell tables: summary CSV, Markdown table and a
JSON record (table rows, published comparison, claims, provenance) that the report reads."""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Iterable

import pandas as pd
from omegaconf import OmegaConf

from .. import provenance
from ..files import read_cell, read_json
from ..data.registry import substitute_label
from ..metrics import METRICS
from .. import metric_names as _metric_names  # noqa: F401 - every registered metric name
from ..files import atomic_write
from ..pipeline.cells import Experiment, claim_family, config_fingerprint
from ..pipeline.integrity import cells_sha256, write_sealed
from ..pipeline.verify import kept_verification
from ..pipeline.codeprint import experiment_identity
from .readings import multiverse_summary, table_test_record
from .aggregate import (Family, claims_to_json, compare_published, equivalence_why, evaluate_claims,
                        experiment_claims, final_rows, resolve, sensitivity, significance_marks, summarize)
from .diagnosis import add_strengths, render_numbers
from .md import md_cell, md_text
from ..pipeline.platforms import record_section as platform_section
from .reproducibility import measures as reproducibility_measures


def load_cells(paths: Iterable[str | os.PathLike]) -> pd.DataFrame:
    frames = []
    for p in paths:
        frames.append(read_cell(p))  # a truncated or foreign file: DamagedFile naming it
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def dataset_label(exp: Experiment) -> str:
    d = exp.cfg.dataset
    if d.original:
        return d.description or d.name
    return substitute_label(d.name, d.substitute_for, d.description)


def dataset_record(exp: Experiment, data: dict | None) -> dict:
    """What data an artefact ran on: the configured data set, or the substitute used in its
    place (with the hashes of the processed data's sources)."""
    d = exp.cfg.dataset
    rec = {"name": d.name, "original": bool(d.original), "substitute_for": d.substitute_for,
           "label": dataset_label(exp), "source": d.source}
    if data and data.get("used"):
        rec["used"] = data["used"]
        man = Path("data/processed") / data["used"] / "manifest.json"
        if man.is_file():
            rec["sources"] = read_json(man, "processed-data manifest").get("sources", {})
        if data.get("substitute_for"):
            rec["original"] = False
            rec["substitute_for"] = data["substitute_for"]
            rec["label"] = substitute_label(data["used"], data["substitute_for"], d.description)
    return rec


def table_rows(exp: Experiment, summary: pd.DataFrame, comparison: pd.DataFrame,
               marks: dict | None = None) -> list[dict]:
    """Per cell and metric: the final (or scalar) value with its interval, and the published
    value with the verdicts where the paper gives one (:data:`AGREEMENT_FIELDS`)."""
    rows = []
    for metric in exp.cfg.experiment.metrics:
        fin = final_rows(summary, metric)
        for cell in exp.cells:
            if cell.id not in fin.index:
                continue
            r = fin.loc[cell.id]
            pub = comparison[(comparison["cell"] == cell.id) & (comparison["metric"] == metric)]
            p = pub.iloc[0] if not pub.empty else None
            rows.append({
                "cell": cell.id, "label": cell.label, "metric": metric,
                "round": None if pd.isna(r["round"]) else int(r["round"]),
                "mean": float(r["mean"]), "ci": float(r["ci"]), "n": int(r["n"]),
                "published_mean": None if p is None else float(p["published_mean"]),
                "published_ci": None if p is None or pd.isna(p["published_ci"]) else float(p["published_ci"]),
                "difference": None if p is None else float(p["difference"]),
                "verdict": None if p is None else p["verdict"],
                **{k: None if p is None or _missing(p[k]) else p[k] for k in AGREEMENT_FIELDS},
                "source": None if p is None else p["source"],
                "marks": (marks or {}).get((cell.id, metric), ""),
                "published_marks": None if p is None else p.get("marks", ""),
                "diagnosis": None if p is None else p.get("diagnosis"),
            })
            if rows[-1]["equivalence_trials"] is not None:
                rows[-1]["equivalence_trials"] = int(rows[-1]["equivalence_trials"])
    return rows


def marks_comparison(exp: Experiment, rows: list[dict], judged: bool) -> dict | None:
    """The paper's significance marks against ours, row by row (Elsas et al. Table 4: * over
    RankBoost, a dagger over RankSVM): published marks are published values.  Each row with a
    published value gets ``marks_agree``; the summary names the rows whose marks differ.  None
    when the experiment tests no significance; on substitute data the marks are references."""
    if not exp.cfg.experiment.significance:
        return None
    compared = [r for r in rows if r.get("published_marks") is not None]
    for r in compared:
        r["marks_agree"] = set(r["marks"] or "") == set(r["published_marks"] or "") if judged else None
    differ = [f"{r['label']} {r['metric']}: ours '{r['marks'] or '-'}', the paper's '{r['published_marks'] or '-'}'"
              for r in compared if judged and not r["marks_agree"]]
    return {"judged": judged, "compared": len(compared),
            "agree": sum(bool(r.get("marks_agree")) for r in compared) if judged else None, "differ": differ}


#: the comparison's fields a table row carries besides the value, difference and verdict:
#: the paper's n, the difference's 95% interval (half-width, ends, degrees of freedom, what it
#: is made of), the former overlap verdict, the equivalence verdict with its TOST p-value and
#: margin (:func:`rankrepro.report.aggregate.compare_published`)
AGREEMENT_FIELDS = ("published_n", "difference_ci", "difference_low", "difference_high", "difference_df",
                    "difference_basis", "rounding", "difference_p", "difference_se", "difference_bound", "overlap",
                    "equivalence", "equivalence_p", "margin", "margin_source", "equivalence_reachable",
                    "equivalence_trials")


def _missing(x) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x))


def _pm(mean, ci) -> str:
    if mean is None or pd.isna(mean):
        return "-"
    if ci is None or pd.isna(ci):
        return f"{mean:.3f}"
    return f"{mean:.3f} ± {ci:.3f}"


def size_text(exp: Experiment) -> str:
    """The run's size in the words of its protocol."""
    from ..protocols import PROTOCOLS

    return PROTOCOLS[exp.cfg.experiment.protocol].size_text(exp)


def diagnosis_text(d: dict | None) -> str:
    """One line: the kind, what explains the gap, and where the evidence is."""
    if not d:
        return ""
    t = f"{d['kind']}" + (f" ({d['choice']})" if d.get("choice") else "")
    if d.get("strength"):
        t += f", {d['strength']['level']}: {d['strength']['text']}"
    t += f": {d['text']}"
    return t + (f" [evidence: {d['evidence']}]" if d.get("evidence") else "")


def depends_text(c: dict) -> str:
    return "; ".join(f"depends on {d['choice']}: " + ", ".join(f"{v} for {k}" for k, v in d["verdicts"].items())
                     for d in c.get("depends_on") or [])


def _fmt_num(x) -> str:
    return "-" if x is None or (isinstance(x, float) and not math.isfinite(x)) else f"{x:.3f}"


def sensitivity_markdown(sens: list[dict]) -> list[str]:
    """The 'what moves the result' table: per choice and value, the headline numbers'
    distance to the paper, the verdicts on them, and the claims whose verdict flips."""
    if not sens:
        return []
    lines = ["## What moves the result (open protocol choices)", "",
             "| choice | value | cells re-run | mean abs. difference to the paper | published cells consistent | claims held | verdicts that flip |",
             "|---|---|---|---|---|---|---|"]
    for s in sens:
        for v in s["values"]:
            held = sum(c["verdict"] == "held" for c in v["claims"])
            comp = f"{v['consistent']} / {v['compared']}" if v["compared"] else "-"
            flips = ", ".join(f"{cid}: {next(c['verdict'] for c in v['claims'] if c['id'] == cid)}" for cid in s["flips"])
            lines.append(f"| {md_cell(s['choice'])} | {md_cell(v['value'])}{' (main)' if v['main'] else ''} | "
                         f"{v['extra_cells']} | "
                         f"{_fmt_num(v['mean_abs_difference'])} | {comp} | {held} / {len(v['claims'])} | {md_cell(flips or '-')} |")
    lines.append("")
    for s in sens:
        lines.append(f"- **{md_text(s['choice'])}**: {md_text(s['text'])} Main run: {md_text(s['main'])}, "
                     f"because {md_text(s['why'])}")
    lines.append("")
    return lines


def _spread_text(x: dict) -> str:
    """"held in 1 of 1 (robust)" / "held 3, inconclusive 5 of 8 (depends on the reading: a)"."""
    counts = ", ".join(f"{k if k != 'None' else '-'} {n}" for k, n in x["counts"].items())
    if x["robust"]:
        v = next(iter(x["counts"]))
        return f"{v if v != 'None' else '-'} in " + ("its one reading" if x["of"] == 1 else f"all {x['of']}") + " (robust)"
    return (f"{counts} of {x['of']} (depends on the reading: "
            + (", ".join(x["flipped_by"]) or "no single choice, a combination") + ")")


def _share(x: dict, where: str) -> str:
    """A verdict's spread over the confidence set and, where that is smaller, over every reading."""
    out = f"{where}: {_spread_text(x)}"
    if x["all"]["of"] != x["of"]:
        out += f"; over all {x['all']['of']} readings: {_spread_text(x['all'])}"
    return out + f"; main reading: {x['main'] or '-'}"


def multiverse_markdown(mvs: dict | None) -> list[str]:
    """The record's ``multiverse`` section: the readings, the confidence set, each verdict's
    robustness, and the readings sorted by their distance to the paper with each choice's value
    (a specification curve as a table)."""
    if not mvs:
        return []
    n = mvs["readings"]
    lines = ["## The multiverse of readings", "",
             f"{n} readings: every combination of the open choices {', '.join(mvs['cross'])} (the full product, "
             "declared in the config before any crossed result), and the other choices one at a time."]
    if mvs["table"]:
        cs = mvs["confidence_set"]
        lines.append("Readings compatible with the paper's table (its joint test at 5%, each reading tested once; "
                     "the 95% confidence set of readings, not corrected for the search): "
                     + (f"{{{'; '.join(md_text(k) for k in cs)}}}." if cs else f"none of the {n} readings is compatible.")
                     + ("" if not (mvs.get("power") or {}).get("detectable_low") else
                        f" The test detects (80% power, main reading) a gap of {mvs['power']['detectable_low']:.3g} "
                        f"in its best-measured cell, {mvs['power']['detectable_high']:.3g} in its least."))
    where = "over the confidence set" if mvs["over"] == "confidence set" else f"over the {n} readings"
    lines += [f"The artefact's word {_share(mvs['word'], where)}.", ""]
    for c in mvs["claims"]:
        lines.append(f"- claim {md_text(c['id'])} {_share(c, where)}")
    for c in mvs["cells"]:
        lines.append(f"- published cell {md_text(c['cell'])} {_share(c, where)}")
    rows = sorted(mvs["list"], key=lambda r: (r["mean_abs_difference"] is None, r["mean_abs_difference"] or 0,
                                               -sum(x == "held" for x in r["claims"].values())))
    choices = list(dict.fromkeys(c for r in mvs["list"] for c in r["reading"]))
    by = ("their distance to the paper (mean |difference| over the published cells)"
          if any(r["mean_abs_difference"] is not None for r in mvs["list"]) else "the claims held")
    lines += ["", f"The readings, sorted by {by}, each choice's value where it is off the main one (a specification "
              "curve as a table):", "",
              "| # | " + " | ".join(md_cell(c) for c in choices) + " | mean abs. difference | table p | claims held | word |",
              "|---|" + "---|" * len(choices) + "---|---|---|---|"]
    for i, r in enumerate(rows, 1):
        held = sum(x == "held" for x in r["claims"].values())
        lines.append(f"| {i} | " + " | ".join(md_cell(r["reading"].get(c, "")) for c in choices)
                     + f" | {_fmt_num(r['mean_abs_difference'])} | "
                     + ("-" if r["table_p"] is None else f"{r['table_p']:.2g}" + (" (agrees)" if r["table_agrees"] else ""))
                     + f" | {held} / {len(r['claims'])} | {r['word']} |")
    return lines + [""]


def reproducibility_markdown(repro: dict | None) -> list[str]:
    """The record's ``reproducibility`` section in a few lines (empty without published cells)."""
    if not repro or not (repro["rmse"] or repro["effects"] or repro["kendall_tau"]):
        return []
    lines = ["## Reproducibility measures (Breuer et al., SIGIR 2020)", ""]
    if not repro["judged"]:
        lines += ["On substitute data: the measures compare different data sets.", ""]
    for m in repro["rmse"]:
        lines.append(f"- RMSE {md_text(m['metric'])}: {m['rmse']:.4f} over {m['cells']} published cells")
    for k in repro["kendall_tau"]:
        col = md_text(", ".join(f"{a}={b}" for a, b in k["column"].items()))
        lines.append(f"- Kendall's tau {k['metric']}{' (' + col + ')' if col else ''}: {_fmt_num(k['tau'])} "
                     f"over {k['cells']} cells")
    for e in repro["effects"]:
        lines.append(f"- claim {md_text(e['claim'])}: effect ratio {_fmt_num(e['effect_ratio'])}, delta relative improvement "
                     f"{_fmt_num(e['delta_ri'])} ({len(e['pairs'])} pairs with published values)")
    return lines + [""]


def equivalence_word(r: dict) -> str:
    """A cell's equivalence verdict as the tables print it: *undecided* where its trials could
    not have shown equivalence even at a difference of 0 reads *unreachable with n trials*, with
    how many would reach it (or that none would: the published side's spread, or one run's own
    where the paper's number is one draw, fills the margin)."""
    eq = r.get("equivalence")
    if eq != "undecided" or r.get("equivalence_reachable") is not False:
        return eq or "-"
    need = r.get("equivalence_trials")
    more = (f"about {need:,} would reach it" if need else
            "no number of them would: one run's own spread fills the margin" if r.get("difference_basis") == "draw"
            else "no number of them would: the published spread fills the margin")
    return f"unreachable with {r['n']} trials ({more})"


def table_test_text(tt: dict) -> str:
    """One sentence: what the joint test of the table says, and what it could detect."""
    if tt["sampling"]:
        head = (f"max-|t| over {tt['sampling']} cells with Sidak's bound: p = {tt['p']:.3g} "
                f"(smallest cell p = {tt['min_p']:.3g}, {tt['deciding']})")
        power = (f"; with these trials it detects (80% power) a gap of {tt['detectable_low']:.3g} in its best-"
                 f"measured cell, {tt['detectable_high']:.3g} in its least")
    else:
        head, power = "no cell with a sampling spread", ""
    exact = ""
    if tt["exact"]:
        exact = (f"; {tt['exact']} cell(s) without one (exact, or run once), "
                 + (f"outside: {', '.join(tt['exact_outside'])}" if tt["exact_outside"] else "all agree"))
    word = "agrees with the paper" if tt["agrees"] else "differs from the paper"
    return (f"The published table as a whole {word} ({head}{exact}{power}); {tt['consistent']} of {tt['cells']} cells "
            f"consistent, {tt['equivalent']} equivalent.")


def markdown(exp: Experiment, rows: list[dict], claims: list[dict], data_label: str | None = None,
             sens: list[dict] | None = None, repro: dict | None = None, mvs: dict | None = None) -> str:
    e = exp.cfg.experiment
    lines = [f"# {md_text(e.title)}", "", f"Data: {md_text(data_label or dataset_label(exp))}.  Scale: {exp.scale} "
             f"({size_text(exp)}, root seed {e.seed}).",
             "", "Reproduced values are means over trials with 95% Student-t intervals. The difference reproduced - "
             "published has its 95% interval (Welch from both intervals where the paper gives one, else ours), "
             "widened by the published numbers' printed rounding (half a unit of the last digit); a "
             "published value is *consistent* when that interval contains 0, else it *differs*; *overlap* is the "
             "former rule (do the two intervals overlap?); *equivalence*: two one-sided tests within the margin "
             f"the artefact declares ({equivalence_why(exp)}), allowing for the rounding: *equivalent*, "
             "*different* or *undecided*; *unreachable with n trials* marks a cell whose trials could not show "
             "equivalence even at a difference of 0. A learner run once (deterministic given the data) is judged "
             "by equivalence: *consistent* when equivalent within the margin. The whole table is judged by one "
             "joint test whose level holds over all its cells. On a substitute data set the published value is a "
             "*reference*, not judged (docs/reproducibility.md).", ""]
    tt = table_test_record(rows, judged=any(r.get("verdict") in ("consistent", "differs") for r in rows))
    if tt:
        lines += [f"**The table**: {table_test_text(tt)}", ""]
    for metric in e.metrics:
        mrows = [r for r in rows if r["metric"] == metric]
        if not mrows:
            continue
        at = f" (at round {mrows[0]['round']})" if METRICS[metric].curve else ""
        lines += [f"## {metric}{at}", "",
                  "| algorithm | reproduced | published | difference [95% interval] | verdict | overlap | "
                  "equivalence (margin) | diagnosis |",
                  "|---|---|---|---|---|---|---|---|"]
        for r in mrows:
            pub = _pm(r["published_mean"], r["published_ci"]) if r["published_mean"] is not None else "-"
            pub += md_cell(r.get("published_marks") or "")
            diff = f"{r['difference']:+.3f}" if r["difference"] is not None else "-"
            if r.get("difference_low") is not None and r.get("difference_ci"):
                diff += f" [{r['difference_low']:+.3f}, {r['difference_high']:+.3f}]"
            eq = f"{equivalence_word(r)} (±{r['margin']:.3g})" if r.get("equivalence") else "-"
            diag = diagnosis_text(r.get("diagnosis")) if r["verdict"] not in (None, "consistent") else ""
            lines.append(f"| {md_cell(r['label'])} | {_pm(r['mean'], r['ci'])}{md_cell(r.get('marks', ''))} | {pub} | "
                         f"{diff} | {r['verdict'] or '-'} | {r.get('overlap') or '-'} | {eq} | "
                         f"{md_cell(diag.replace('|', '/'))} |")
        lines.append("")
    if claims:
        lines += ["## Claims", ""]
        for c in claims:
            extra = ""
            if c.get("depends_on"):
                extra += f" **{md_text(depends_text(c))}.**"
            if c.get("diagnosis") and c["verdict"] != "held":
                extra += f" *Diagnosis*: {md_text(diagnosis_text(c['diagnosis']))}."
            lines.append(f"- **{c['verdict']}**: {md_text(c['text'])}. {md_text(c['evidence'])}{extra}")
        lines.append("")
    lines += sensitivity_markdown(sens or [])
    lines += multiverse_markdown(mvs)
    lines += reproducibility_markdown(repro)
    if e.notes:
        lines += ["## Notes", ""] + [f"- {md_text(n)}" for n in e.notes] + [""]
    return "\n".join(lines)


def _record_base(exp: Experiment) -> dict:
    """The fields every artefact record has, run or not: identity, notes, provenance."""
    e = exp.cfg.experiment
    return {"name": exp.name, "paper": exp.paper, "artefact": exp.artefact, "figure_file": exp.figure_file,
            "title": e.title, "kind": e.kind,
            "description": e.description, "scale": exp.scale, "notes": list(e.notes),
            "config": OmegaConf.to_yaml(exp.cfg), "config_fingerprint": config_fingerprint(exp),
            "git_commit": provenance.git_commit(),
            "versions": provenance.versions()}


def build_artefact(exp: Experiment, cell_paths: Iterable[str | os.PathLike], out_csv: str | os.PathLike,
                   out_md: str | os.PathLike, out_json: str | os.PathLike, data: dict | None = None,
                   family: Family | None = None) -> dict:
    cell_paths = list(cell_paths)
    all_trials = load_cells(cell_paths)
    missing = {c.id for c in exp.all_cells} - set(all_trials["cell"].unique() if not all_trials.empty else [])
    if missing:
        raise RuntimeError(f"{exp.name}: no results for cells {sorted(missing)}")
    trials = all_trials[all_trials["cell"].isin([c.id for c in exp.cells])]
    dataset = dataset_record(exp, data)
    # on a substitute data set a published value is a reference: shown, not judged
    reference_only = not dataset["original"]
    summary = summarize(exp, trials)
    comparison = compare_published(exp, summary, reference_only)
    family = family or Family()
    claim_results = evaluate_claims(exp, summary, trials, family)
    sens = sensitivity(exp, all_trials, summary, comparison, claim_results, reference_only, family)
    claims = claims_to_json(claim_results)
    rows = table_rows(exp, summary, comparison, significance_marks(exp, trials))
    marks = marks_comparison(exp, rows, judged=not reference_only)
    tt = table_test_record(rows, judged=not reference_only)
    repro = reproducibility_measures(exp, comparison, experiment_claims(exp),
                                     lambda sel, metric: resolve(exp.cells, sel, summary, metric),
                                     judged=not reference_only)
    e = exp.cfg.experiment
    record = {
        **_record_base(exp), "status": "ran",
        "n_trials": exp.n_trials, "n_train": exp.n_train, "n_test": exp.n_test, "seed": int(e.seed),
        "size": size_text(exp),
        "dataset": dataset, "table": rows, **({"table_test": tt} if tt else {}), "claims": claims,
        "sensitivity": sens,
        # every verdict over the readings of the crossed choices (pipeline/multiverse.py), with the
        # joint test's power (main reading) beside the confidence set
        **({"multiverse": {**mvs, "power": None if not tt else {k: tt[k] for k in ("detectable_low", "detectable_high")}}}
           if (mvs := multiverse_summary(sens, claims, not reference_only,
                                         list(e.multiverse.cross) if e.get("multiverse") is not None else None))
           else {}),
        # the paper's significance marks against ours (published marks are published values)
        **({"significance_marks": marks} if marks is not None else {}),
        # the claims are decided over their family (Holm): this artefact's and these others'
        "claim_family": {"name": claim_family(exp), "artefacts": sorted([exp.name, *family.artefacts]),
                         "tests": len(family.pvalues) + sum(c.get("stats") is not None
                                                            and c["verdict"] != "not evaluable" for c in claims)},
        # RMSE, effect ratios, Kendall's tau against the published cells (report.reproducibility)
        "reproducibility": repro,
        # the code these numbers come from (module digests, numeric libraries): the report
        # names the modules changed since, and `rankrepro verify` adds when it checked them
        "code": experiment_identity(exp),
        "cells": [{"id": c.id, "label": c.label, "estimator": c.estimator, "params": c.params} for c in exp.cells],
        "sensitivity_cells": [{"id": c.id, "base": c.base, "choice": c.choice, "value": c.value, "params": c.params}
                              for c in exp.sensitivity_cells],
    }
    # what `rankrepro verify` recorded of these cells stays true of them: kept across a new aggregation
    # the numbers the diagnoses quote, from this run; how much each explains, from the sensitivity
    render_numbers(record, summary, exp.name, all_trials, strict=exp.scale == "paper")
    add_strengths(record)
    # the content hash of every cell file these numbers come from (`rankrepro verify --records`)
    record["cells_sha256"] = cells_sha256(cell_paths)
    if (verified := kept_verification(out_json, cell_paths)) is not None:
        record["verified"] = verified
    # how far other CPU kernels move these cells, and whether any outcome with them (`make spread`)
    if (plat := platform_section(exp.name, Path(out_json).parent.parent, record["cells_sha256"])) is not None:
        record["platform"] = plat
    atomic_write(out_csv, lambda tmp: summary.to_csv(tmp, index=False, float_format="%.6g"))
    atomic_write(out_md, lambda tmp: Path(tmp).write_text(markdown(exp, rows, claims, record["dataset"]["label"], sens, repro,
                                                                   record.get("multiverse"))))
    write_sealed(out_json, record)
    return record


def build_not_run(exp: Experiment, reason: str, how_to_obtain: str, out_csv: str | os.PathLike,
                  out_md: str | os.PathLike, out_json: str | os.PathLike) -> dict:
    """The record of an artefact whose data cannot be had: the report shows it as not run."""
    e = exp.cfg.experiment
    record = {
        **_record_base(exp), "status": "not run", "reason": reason, "how_to_obtain": how_to_obtain,
        "table": [], "claims": [], "published": [OmegaConf.to_container(p) for p in e.published],
    }
    md = f"# {md_text(e.title)}\n\n**Not run**: {md_text(reason)}.\n\nHow to obtain the data: {md_text(how_to_obtain)}\n"
    atomic_write(out_csv, lambda tmp: Path(tmp).write_text(",".join(
        ["cell", "algorithm", "label", "metric", "round", "n", "mean", "ci", "low", "high"]) + "\n"))
    atomic_write(out_md, lambda tmp: Path(tmp).write_text(md))
    write_sealed(out_json, record)
    return record
