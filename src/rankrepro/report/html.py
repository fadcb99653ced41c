"""The replication report: one self-contained HTML page (figures inlined), opened offline.

A scorecard on top, then one section per paper and artefact: the reproduced table beside
the published values with verdicts, the figure, the claims with held / not held, the data
used, the notes on protocol, and the provenance (seed, sizes, resolved config, versions).

This module prepares plain data from the records (rows, verdicts, diagnoses, the dot plots'
geometry); the markup is in ``templates/`` (``report.html`` the page, ``artefact.html`` one
artefact, ``dotplot.svg``, the style and the filter's script), rendered by Jinja with
autoescaping: every text of a record is escaped where it is written.
"""

from __future__ import annotations

import json
import math
import os
import re
from pathlib import Path

from .. import provenance
from ..io import atomic_write
from ..files import DamagedFile, read_json
from ..files import atomic_write as files_atomic_write
from ..pipeline import codeprint
from .artefact import equivalence_word, table_test_text
from .scorecard import artefact_score, is_replication, not_evidence, readings_cell, scorecard
from .templating import environment

PAPERS = {
    "harrington2003": "Harrington (2003): Online ranking / collaborative filtering using the perceptron algorithm",
    "crammer_singer2005": "Crammer & Singer (2005): Online ranking by projecting",
    "elsas2008": "Elsas, Carvalho & Carbonell (2008): Fast learning of document ranking functions with the committee perceptron",
    "yu2006": "Yu, Yu & Tresp (2006): Collaborative ordinal regression",
    "shivaswamy2012": "Shivaswamy & Joachims (2012): Online structured prediction via coactive learning",
    "arena": "Arena: every learner of a family on every data set of the papers, compared over the data sets",
}


def verdict_class(v: str | None) -> str:
    """CSS class of a verdict; no verdict (the paper gives no value) is not 'not evaluable'."""
    return {"held": "held", "consistent": "consistent", "not held": "notheld", "differs": "differs",
            "inconclusive": "inconclusive", "reference": "reference", "not evaluable": "ne",
            None: "nopub", "": "nopub"}.get(v, "ne")


ENV = environment()
ENV.filters["verdict_class"] = verdict_class
ENV.filters["equivalence_word"] = equivalence_word
ENV.filters["table_test_text"] = table_test_text
ENV.filters["readings_cell"] = readings_cell


def display_name(title: str) -> str:
    """The artefact in the paper's numbering, from the experiment title:
    "Harrington (2003) Table 2 and Fig. 3(b): cystic fibrosis" -> "Table 2 and Fig. 3(b): cystic fibrosis"."""
    m = re.match(r"^.*?\(\d{4}\)\s+(.*)$", title or "")
    return m.group(1) if m else (title or "")


def data_used_label(ds: dict) -> str:
    """What the artefact ran on, described by the data actually used: on a substitute, the
    registry's title of the substitute and of the data set it stands in for (the configured
    description is the original's)."""
    if ds.get("original", True) or not ds.get("used"):
        return ds.get("label") or ds.get("name") or ""
    from ..data.registry import substitute_label

    return substitute_label(ds["used"], ds.get("substitute_for") or ds.get("source") or "")


def _sensitivity(s: dict) -> dict:
    """One open choice of the 'what moves the result' table: per value, its claims held and
    the verdicts of the claims that flip; the headline cells as rows, one column per value."""
    vals = [dict(v, held=sum(c["verdict"] == "held" for c in v["claims"]),
                 flips=[(cid, next(c["verdict"] for c in v["claims"] if c["id"] == cid)) for cid in s["flips"]])
            for v in s["values"]]
    heads = [dict(h, cells=[v["headline"][i] for v in vals]) for i, h in enumerate(vals[0]["headline"])]
    return dict(s, values=vals, headline=heads)


def _data_uri(path: str | os.PathLike | None) -> str | None:
    if not path or not Path(path).is_file():
        return None
    from .embed import png_data_uri

    return png_data_uri(path)


def _nice_ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    span = hi - lo if hi > lo else abs(hi) or 1.0
    step = 10 ** math.floor(math.log10(span / n))
    for m in (1, 2, 2.5, 5, 10):
        if span / (step * m) <= n:
            step *= m
            break
    first = math.ceil(lo / step) * step
    return [first + i * step for i in range(int((hi - first) / step + 1e-9) + 1)]


def metric_unit(metric: str) -> str | None:
    """The unit of a metric of the records, for an axis (None when it has none to say)."""
    if metric.endswith("_seconds"):
        return "seconds"
    if metric.endswith("per_second"):
        return "pair visits per second"
    if "rank_loss" in metric or metric == "mae":
        return "ranks, mean |predicted - true|"
    if metric == "zero_one":
        return "fraction of ranks wrong"
    if any(k in metric for k in ("ndcg", "map", "_ap", "_rr")):
        return "score from 0 to 1"
    return {"list_discordant": "misranked pairs", "regret": "utility per round", "em_iterations": "iterations",
            "selected_step": "training steps"}.get(metric)


def axis_label(metric: str, rnd=None) -> str:
    unit = metric_unit(metric)
    return metric + (f" at round {rnd}" if rnd is not None else "") + (f" ({unit})" if unit else "")


def dot_plot_geometry(rows: list[dict]) -> dict | None:
    """Paper against reproduction for one metric's table (drawn by ``templates/dotplot.svg``):
    per cell the reproduced mean with its 95% interval (filled dot and bar) and the published
    value (open diamond, with its interval when the paper gives one), coloured by verdict.
    None when no cell has a published value."""
    rows = [r for r in rows if r["mean"] is not None]
    if not any(r["published_mean"] is not None for r in rows):
        return None
    xs = []
    for r in rows:
        xs += [r["mean"] - (r["ci"] or 0), r["mean"] + (r["ci"] or 0)]
        if r["published_mean"] is not None:
            pc = r["published_ci"] or 0
            xs += [r["published_mean"] - pc, r["published_mean"] + pc]
    lo, hi = min(xs), max(xs)
    pad = (hi - lo) * 0.05 or abs(hi) * 0.05 or 0.05
    lo, hi = lo - pad, hi + pad
    # text at 13px (tick labels 12px), the axis labelled with the metric and its unit below the ticks
    left, width, rh, top = 270, 460, 21, 8
    axis = top + rh * len(rows)

    def x(v: float) -> float:
        return left + (v - lo) / (hi - lo) * width

    colour = {"consistent": "#176f2c", "differs": "#b3261e", "reference": "#777"}
    cells = []
    for i, r in enumerate(rows):
        ci, p, pc = r["ci"] or 0, r["published_mean"], r["published_ci"] or 0
        cells.append({"y": top + rh * i + rh / 2, "colour": colour.get(r["verdict"] or "", "#1a4f8b"),
                      "verdict": r["verdict"] or "none",
                      "label": r["label"] if len(r["label"]) <= 36 else r["label"][:35] + "…",
                      "lo": x(r["mean"] - ci), "hi": x(r["mean"] + ci), "x": x(r["mean"]),
                      "published": None if p is None else {"x": x(p), "lo": x(p - pc), "hi": x(p + pc), "ci": pc}})
    return {"left": left, "right": left + width, "width": left + width + 20, "top": top, "axis": axis,
            "height": axis + 50, "ticks": [(x(t), t) for t in _nice_ticks(lo, hi)], "cells": cells,
            "label": axis_label(rows[0]["metric"], rows[0].get("round"))}


def dot_plot(rows: list[dict]) -> str:
    """The dot plot of :func:`dot_plot_geometry` as an inline SVG ("" when there is none)."""
    g = dot_plot_geometry(rows)
    return str(ENV.get_template("dotplot.svg").module.dot_plot(g)) if g else ""


_SWEPT = re.compile(r"^(.*) \((\w+)=([^,()]+)\)$")


def pivot(rows: list[dict]) -> tuple[str, list[str], list[str], dict] | None:
    """A table whose every cell is one model at one value of the same single swept setting
    (Yu et al.: four models at 100..400 training items) laid out as the paper's: one row per
    value, one column per model.  None when the rows are not of that shape."""
    parsed = [_SWEPT.match(r["label"]) for r in rows]
    if not rows or not all(parsed) or len({m.group(2) for m in parsed}) != 1:
        return None
    models = list(dict.fromkeys(m.group(1) for m in parsed))
    values = list(dict.fromkeys(m.group(3) for m in parsed))
    grid = {(m.group(3), m.group(1)): r for m, r in zip(parsed, rows)}
    if len(models) < 2 or len(values) < 2 or len(grid) != len(models) * len(values):
        return None
    return parsed[0].group(2), values, models, grid


def _row_verdict(rs: list[dict]) -> str:
    vs = [r["verdict"] for r in rs]
    for v in ("differs", "consistent", "reference"):
        if v in vs:
            return v
    return "none"


def _pivot_rows(pv) -> dict | None:
    if pv is None:
        return None
    key, values, models, grid = pv
    rows = [[grid[(v, m)] for m in models] for v in values]
    return {"key": key, "models": models, "rows": [(v, _row_verdict(rs), rs) for v, rs in zip(values, rows)]}


def long_table(rows: list[dict], anchor: str = "") -> dict:
    """One row per cell.  A diagnosis that covers several rows is written once, under the
    table, naming the rows it covers; each of those rows points to it (``see``: its number)."""
    shown = [r for r in rows if r.get("diagnosis") and r["verdict"] not in (None, "consistent")]
    key = {id(r): json.dumps(r["diagnosis"], sort_keys=True) for r in shown}
    covers: dict[str, list[dict]] = {}
    for r in shown:
        covers.setdefault(key[id(r)], []).append(r)
    shared = [k for k, rs in covers.items() if len(rs) > 1]
    out = [dict(r, see=shared.index(key[id(r)]) + 1 if key.get(id(r)) in shared else None,
                diagnosis=r["diagnosis"] if id(r) in key else None) for r in rows]
    return {"rows": out, "anchor": anchor, "shared": [covers[k] for k in shared]}


def staleness(rec: dict) -> str | None:
    """None when the code that computes a record's numbers is today's code (the record's
    ``code``: the digests of the modules its cells run and the numeric libraries' versions,
    kept when it was made or verified); else a sentence naming what changed since.  A record
    that is not a reproduction (not run: no numbers) is never stale."""
    if rec.get("status") != "ran":
        return None
    code = rec.get("code")
    if not code:
        return ("made by commit " + str(rec.get("git_commit", "unknown"))[:10] + " before records kept the code "
                "they come from")
    changed = codeprint.changed(code, codeprint.current(code))
    if not changed:
        return None
    when = "verified" if rec.get("verified") else "made"
    return (f"computed by code that has changed since they were {when}: "
            + ", ".join(changed[:8]) + (f" and {len(changed) - 8} more" if len(changed) > 8 else ""))


def artefact_files(json_path: str | os.PathLike | None, png: str | os.PathLike | None,
                   out_dir: str | os.PathLike) -> list[tuple[str, str]]:
    """(label, relative link from the report's folder) for each of an artefact's files that
    exists: the summary table, its Markdown, the JSON record, the resolved config, the figure."""
    if json_path is None:
        return []
    j = Path(json_path)
    cands = [("table (CSV)", j.with_suffix(".csv")), ("table (Markdown)", j.with_suffix(".md")),
             ("record (JSON)", j), ("resolved config (YAML)", j.with_suffix(".config.yaml"))]
    if png:
        cands += [("figure (PNG)", Path(png)), ("figure (PDF)", Path(png).with_suffix(".pdf"))]
    return [(lab, Path(os.path.relpath(p, out_dir)).as_posix()) for lab, p in cands if p.is_file()]


def _disagreements(rec: dict) -> int:
    return sum(t["verdict"] == "differs" for t in rec.get("table", [])) + \
        sum(c["verdict"] == "not held" for c in rec.get("claims", []))


def artefact(rec: dict, png: str | None = None, files: list[tuple[str, str]] = (), stale: str | None = None,
             kept: str | None = None) -> dict:
    """What ``templates/artefact.html`` shows of one record.  ``kept``: why this reproduced
    record could not be rerun here (its data are absent) and is shown as committed."""
    a = {"rec": rec, "id": f"{rec['paper']}-{rec['artefact']}", "name": display_name(rec["title"]),
         "disagreements": _disagreements(rec), "files": files, "stale": stale, "kept": kept,
         "ran": rec.get("status") == "ran"}
    if not a["ran"]:
        return a
    ds = rec["dataset"]
    tables = []
    for m in dict.fromkeys(r["metric"] for r in rec["table"]):
        rows = [r for r in rec["table"] if r["metric"] == m]
        tables.append({"metric": m, "round": rows[0]["round"], "pivot": _pivot_rows(pivot(rows)),
                       "long": long_table(rows, f"{a['id']}-{m}-"), "plot": dot_plot_geometry(rows),
                       "published": any(r.get("published_mean") is not None for r in rows)})
    # the paper's own comparison first: a metric the paper prints no value of (Table 1's online
    # loss beside its test loss) comes after, said so in its heading (stable otherwise)
    tables.sort(key=lambda t: not t["published"])
    return dict(a, score=artefact_score(rec), data=data_used_label(ds), tables=tables, png=_data_uri(png),
                protocol=None if ds["original"] else ds.get("label", "").split(": ", 1)[-1],
                sensitivity=[_sensitivity(s) for s in rec.get("sensitivity") or []],
                multiverse=multiverse_html(rec.get("multiverse")),
                versions=json.dumps(rec["versions"], indent=1))


def multiverse_html(mvs: dict | None) -> str:
    """The artefact's multiverse (its Markdown summary, rendered) and its specification curve."""
    if not mvs:
        return ""
    from markdown_it import MarkdownIt

    from .artefact import multiverse_markdown
    from .speccurve import svg

    text = "\n".join(multiverse_markdown(mvs)[2:])  # below the section's own heading
    body = MarkdownIt("commonmark", {"html": False}).enable("table").render(text)
    return f'<div class="multiverse"><h4>The multiverse of readings</h4>{svg(mvs)}{body}</div>'


def artefact_section(rec: dict, png: str | None = None, files: list[tuple[str, str]] = (),
                     stale: str | None = None, kept: str | None = None) -> str:
    """One artefact's section of the page, alone."""
    return ENV.get_template("artefact.html").render(a=artefact(rec, png, files, stale, kept))


def _order(records):
    order = list(PAPERS)
    return sorted({r["paper"] for r, _ in records}, key=lambda p: (order.index(p) if p in order else len(order), p))


def comparison(rec: dict, png: str | None = None, files: list[tuple[str, str]] = ()) -> dict:
    """What ``templates/comparison.html`` shows of an arena family's comparison record
    (:mod:`rankrepro.report.arena`)."""
    return {"rec": rec, "id": f"arena-comparison-{rec['family']}", "name": display_name(rec["title"]),
            "files": files, "png": _data_uri(png),
            "significant": [p for p in rec["pairwise"] if p["holm"] or p["nemenyi"]]}


def render(records: list[tuple[dict, str | None]], scale: str, files: dict[str, list[tuple[str, str]]] | None = None,
           head_commit: str | None = None, kept: dict[str, str] | None = None,
           comparisons: list[tuple[dict, str | None]] = ()) -> str:
    """The page.  ``files``: per record name, the (label, relative link) of its files;
    ``head_commit``: the commit the report is made from (default: the last commit of the sources,
    :func:`rankrepro.provenance.source_commit`, which committing the report itself does not move);
    ``kept``: the reproduced records whose data are absent here, shown as committed (name -> why);
    ``comparisons``: the arena's comparison records and their diagrams, shown first in their section."""
    files, kept = files or {}, kept or {}
    arts = [artefact(r, png, files.get(r["name"], []), staleness(r), kept.get(r["name"])) for r, png in records]
    comps = [comparison(r, png, files.get(r["name"], [])) for r, png in comparisons]
    papers = [{"id": p, "title": PAPERS.get(p, p), "artefacts": [a for a in arts if a["rec"]["paper"] == p],
               "comparisons": [c for c in comps if c["rec"]["paper"] == p]}
              for p in _order([*records, *comparisons])]
    # the scorecard counts the papers' artefacts: the arena's experiments replicate no paper
    scored = [a for a in arts if is_replication(a["rec"])]
    ran = [a for a in scored if a["ran"]]
    verified = [a["rec"]["verified"] for a in ran if a["rec"].get("verified")]
    caveat = not_evidence(scale)
    return ENV.get_template("report.html").render(
        scale=scale, head_commit=head_commit or provenance.source_commit(), papers=papers, artefacts=scored,
        sc=scorecard([a["rec"] for a in scored]), n_ran=len(ran), caveat=caveat,
        caveat_parts=caveat.split(". ", 1) if caveat else None, kept=sorted(kept),
        not_run=[a["rec"] for a in arts if not a["ran"]], stale=[a for a in arts if a["stale"]],
        verified=verified, verified_by=sorted({(v["commit"], v["date"]) for v in verified}, key=lambda cv: (cv[1], cv[0])))


from ..files import RecordMismatch  # noqa: E402 - its home, where the command line catches it


def report_roots(out_html: str | os.PathLike) -> list[Path]:
    """The folders a report's inputs must resolve inside by default: the checkout (the current
    folder) and the output tree the report is written in (``<root>/results/report/index.html``)."""
    roots = [Path.cwd()]
    out = Path(os.path.abspath(out_html))
    if out.parent.name == "report" and out.parent.parent.name == "results":
        roots.append(out.parent.parent.parent)
    return roots


def build_report(json_paths: list[str], png_paths: dict[str, str], out_html: str | os.PathLike, scale: str,
                 kept: dict[str, str] | None = None, roots: list[str | os.PathLike] | None = None) -> list[str]:
    """Raises :class:`RecordMismatch`, naming each file, when a record is not what was written
    (its ``record_sha256``), a cell it names no longer has the bytes it was aggregated from
    (``cells_sha256``), or a figure file of it (or the PNG embedded for it) has not the bytes
    the record names (``figures_sha256``): the report shows no number whose chain to its cells
    is broken, and no figure swapped for another.  Returns the names of the records this
    machine has not aggregated from their cells (``aggregated_here``): the seal is no secret.

    ``roots``: the folders its inputs (records, figure PNGs, which are embedded) must resolve
    inside (default :func:`report_roots`; ``rankrepro run`` passes its ``--out``): one that
    leads outside (a symbolic link to ``/etc/passwd``) is refused, naming it
    (:class:`~rankrepro.checkout.OutsideCheckout`), before it is read."""
    from ..checkout import refuse_outside
    from ..pipeline.integrity import aggregated_here, figure_problems, record_problems

    roots = list(roots) if roots is not None else report_roots(out_html)
    records, comparisons, files = [], [], {}
    out_dir = Path(out_html).parent
    loaded, problems = [], []
    for p in json_paths:
        refuse_outside(p, roots, "a record the report reads")
    for png in png_paths.values():
        refuse_outside(png, roots, "a figure the report embeds")
    for p in json_paths:
        rec = read_json(p, "record")  # a truncated file, NaN, not an object: named, one line
        for key in (("name", "family") if rec.get("kind") == "comparison" else ("name", "paper", "artefact")):
            if key not in rec:
                raise DamagedFile(p, f"the record has no field '{key}'")
        problems += record_problems(p, rec)
        # the figure it embeds: one the record names, with the bytes it names (a swapped PNG is refused)
        try:
            key = (f"comparison/{Path(rec['figure']).stem}" if rec.get("kind") == "comparison"
                   else f"{rec['paper']}/{rec.get('figure_file') or rec['artefact']}")
        except (KeyError, TypeError):
            key = None
        problems += figure_problems(p, rec, png_paths.get(key) if key else None)
        loaded.append((p, rec))
    if problems:
        raise RecordMismatch(f"the report refuses {len(problems)} record(s) or figure(s) that do not match what was "
                             "written, the cells they were aggregated from or the figure bytes their record names "
                             "(`rankrepro verify --records` says more; the workflow aggregates them again, rerunning a "
                             "changed cell, and draws their figures again): " + "; ".join(problems))
    for p, rec in loaded:
        try:
            if rec.get("kind") == "comparison":  # an arena family's comparison (report.arena)
                png = png_paths.get(f"comparison/{Path(rec['figure']).stem}")
                comparisons.append((rec, png))
                files[rec["name"]] = artefact_files(p, png, out_dir)
                continue
            png = png_paths.get(f"{rec['paper']}/{rec.get('figure_file') or rec['artefact']}")
            records.append((rec, png))
            files[rec["name"]] = artefact_files(p, png, out_dir)
        except KeyError as e:
            raise DamagedFile(p, f"the record has no field {e}") from None
        except (TypeError, AttributeError) as e:
            raise DamagedFile(p, f"the record is not what the report reads ({e})") from None
    records.sort(key=lambda rp: (rp[0]["paper"], rp[0]["artefact"]))
    comparisons.sort(key=lambda rp: rp[0]["family"])
    page = render(records, scale, files, kept=kept, comparisons=comparisons)
    files_atomic_write(out_html, lambda tmp: Path(tmp).write_text(page, encoding="utf-8"))
    # the seals, cells and figures are checked above, in a second; aggregating every record again
    # takes minutes: the page says so (the same page on every machine), the caller which records
    # this machine did not aggregate from their cells
    return sorted(rec["name"] for _, rec in loaded if not aggregated_here(rec))


def rebuild_report(scale: str = "paper", root: str | os.PathLike = ".") -> Path:
    """The report again from the records and figures already on disk (``make report``): no
    job runs, nothing is recomputed."""
    root = Path(root)
    prefix = root / ("" if scale == "paper" else f"runs/{scale}")
    records = sorted(str(p) for p in (prefix / "results").glob("*/*.json"))
    # the arena's comparisons (report.arena) and their critical-difference diagrams
    records += sorted(str(p) for p in (prefix / "results").glob("*/comparison/*.json"))
    pngs = {f"{p.parent.name}/{p.stem}": str(p)
            for p in [*(prefix / "figures").glob("*/*.png"), *(prefix / "figures").glob("*/comparison/*.png")]}
    out = prefix / "results" / "report" / "index.html"
    not_here = build_report(records, pngs, out, scale, roots=[root])
    if not_here:  # said, not refused: `make verify` aggregates them again (docs/reproducibility.md)
        import sys

        print(f"rankrepro report: {len(not_here)} of {len(records)} records were not aggregated from their cells "
              f"on this machine (by the workflow or `rankrepro verify --records`): their seals and the bytes of their "
              f"cells and figures are checked, not their content; `make verify` aggregates them again "
              f"({', '.join(not_here[:3])}{', ...' if len(not_here) > 3 else ''})", file=sys.stderr)
    return out
