"""The replication report: one self-contained HTML page (figures inlined), opened offline.

A scorecard on top, then one section per paper and artefact: the reproduced table beside
the published values with verdicts, the figure, the claims with held / not held, the data
used, the notes on protocol, and the provenance (seed, sizes, resolved config, versions).
"""

from __future__ import annotations

import base64
import html
import json
import os
import re
from pathlib import Path

from .. import provenance
from ..pipeline import codeprint
from ..io import atomic_write
from .scorecard import artefact_score, not_evidence, scorecard

PAPERS = {
    "harrington2003": "Harrington (2003): Online ranking / collaborative filtering using the perceptron algorithm",
    "crammer_singer2005": "Crammer & Singer (2005): Online ranking by projecting",
    "elsas2008": "Elsas, Carvalho & Carbonell (2008): Fast learning of document ranking functions with the committee perceptron",
    "yu2006": "Yu, Yu & Tresp (2006): Collaborative ordinal regression",
    "shivaswamy2012": "Shivaswamy & Joachims (2012): Online structured prediction via coactive learning",
}

CSS = """
*{box-sizing:border-box}
body{font-family:system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:0;color:#222;line-height:1.45}
#layout{display:grid;grid-template-columns:17rem minmax(0,1fr);max-width:1500px;margin:0 auto}
#toc{position:sticky;top:0;align-self:start;height:100vh;overflow:auto;padding:1em .8em;border-right:1px solid #ddd;
background:#fafafa;font-size:.85em}
#toc ul{list-style:none;padding-left:.6em;margin:.2em 0}#toc li{margin:.15em 0}#toc a{text-decoration:none;color:#1a4f8b}
#toc .paper-link{font-weight:600;color:#222}#toc .fname{color:#777;font-family:monospace;font-size:.9em}
#toc .filter{display:block;background:#fff4f2;border:1px solid #e7b3ad;border-radius:5px;padding:.4em .5em;margin:.6em 0}
.badge{display:inline-block;border-radius:8px;padding:0 .4em;font-size:.8em;margin-left:.3em;color:#fff;background:#b3261e}
.badge.sub{background:#b58900}.badge.nr{background:#888}
main{padding:0 1.5em 4em;min-width:0}
h1{font-size:1.6em}h2{border-bottom:2px solid #ddd;padding-bottom:.2em;margin-top:2em}h3{margin-top:1.6em}
table{border-collapse:collapse;margin:.6em 0;font-size:.9em}th,td{border:1px solid #ccc;padding:.25em .55em;
text-align:left}th{background:#f3f3f3}td.num{text-align:right;font-variant-numeric:tabular-nums}
td.pv small{display:block;color:#555}
.held,.consistent{color:#176f2c;font-weight:600}.notheld,.differs{color:#b3261e;font-weight:600}
.ne{color:#8a6d00;font-weight:600}.inconclusive{color:#6a4c93;font-weight:600}.reference{color:#555}
.nopub{color:#999;font-style:italic;font-weight:400}
.diag{font-size:.85em;color:#444}.shareddiag{margin:.3em 0 1em;padding:.3em .6em;border-left:3px solid #bbb;font-size:.95em}.diagref{font-size:.85em}.diag b{color:#222}.sub{background:#fff4d6;border:1px solid #e8c66a;padding:.3em .6em;
display:inline-block}.card{display:inline-block;border:1px solid #ccc;border-radius:6px;padding:.6em 1em;
margin:.3em;min-width:11em}.card b{font-size:1.5em;display:block}img{max-width:100%;border:1px solid #eee}
pre{background:#f7f7f7;padding:.6em;overflow:auto;font-size:.8em;max-height:28em}details{margin:.4em 0}
.files{font-size:.85em;color:#444}.files a{margin-right:.8em}.stale{background:#fdecea;border:1px solid #e7b3ad;
padding:.3em .6em}.legend span{margin-right:1.2em}.dotplot{display:block;margin:.4em 0 1em}
.dotplot text{font-size:13px;fill:#222}.dotplot text.tick{font-size:12px;fill:#444}
.dotplot text.axis-label{font-size:13px;font-weight:600}.kept{background:#fff4d6;border:1px solid #e8c66a;padding:.3em .6em}
.not-evidence{background:#fdecea;border:2px solid #b3261e;padding:.5em .8em;font-size:1.05em}[hidden]{display:none!important}
"""


def _e(x) -> str:
    return html.escape("" if x is None else str(x))


def _pm(mean, ci) -> str:
    if mean is None:
        return "–"
    return f"{mean:.3f}" if ci is None else f"{mean:.3f} ± {ci:.3f}"


def _verdict_class(v: str | None) -> str:
    """CSS class of a verdict; no verdict (the paper gives no value) is not 'not evaluable'."""
    return {"held": "held", "consistent": "consistent", "not held": "notheld", "differs": "differs",
            "inconclusive": "inconclusive", "reference": "reference", "not evaluable": "ne",
            None: "nopub", "": "nopub"}.get(v, "ne")


def _verdict_html(v: str | None) -> str:
    return f'<span class="{_verdict_class(v)}">{_e(v) if v else "no published value"}</span>'


#: the verdicts the filter keeps: the disagreements with the paper
DISAGREE = ("differs", "not held")


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


def _diag(d: dict | None) -> str:
    if not d:
        return ""
    ev = f" <i>Evidence: {_e(d['evidence'])}</i>" if d.get("evidence") else ""
    ch = f" ({_e(d['choice'])})" if d.get("choice") else ""
    return f'<span class="diag"><b>{_e(d["kind"])}{ch}</b>: {_e(d["text"])}{ev}</span>'


def _sensitivity_html(sens: list[dict]) -> str:
    """The compact 'what moves the result' table of one artefact."""
    if not sens:
        return ""
    out = ["<h4>What moves the result: open protocol choices</h4><table><tr><th>choice</th><th>value</th>"
           "<th>cells re-run</th><th>mean |difference| to the paper</th><th>published cells consistent</th>"
           "<th>claims held</th><th>verdicts that flip</th></tr>"]
    for s in sens:
        for v in s["values"]:
            held = sum(c["verdict"] == "held" for c in v["claims"])
            mad = "–" if v["mean_abs_difference"] is None else f"{v['mean_abs_difference']:.3f}"
            comp = f"{v['consistent']} / {v['compared']}" if v["compared"] else "–"
            flips = ", ".join(f"{_e(cid)}: {_e(next(c['verdict'] for c in v['claims'] if c['id'] == cid))}"
                              for cid in s["flips"])
            out.append(f"<tr><td>{_e(s['choice'])}</td><td>{_e(v['value'])}{' <b>(main)</b>' if v['main'] else ''}</td>"
                       f"<td class=num>{v['extra_cells']}</td><td class=num>{mad}</td><td class=num>{comp}</td>"
                       f"<td class=num>{held} / {len(v['claims'])}</td><td>{flips or '–'}</td></tr>")
    out.append("</table><ul>")
    for s in sens:
        out.append(f"<li><b>{_e(s['choice'])}</b>: {_e(s['text'])} Main run: <b>{_e(s['main'])}</b>, because "
                   f"{_e(s['why'])}</li>")
    out.append("</ul><details><summary>Headline numbers per value</summary>")
    for s in sens:
        vals = s["values"]
        heads = vals[0]["headline"]
        out.append(f"<table><tr><th>{_e(s['choice'])}: cell</th><th>published</th>"
                   + "".join(f"<th>{_e(v['value'])}</th>" for v in vals) + "</tr>")
        for i, h in enumerate(heads):
            pub = "–" if h["published_mean"] is None else f"{h['published_mean']:.3f}"
            out.append(f"<tr><td>{_e(h['label'])} ({_e(h['metric'])})</td><td class=num>{pub}</td>"
                       + "".join(f"<td class=num>{_pm(v['headline'][i]['mean'], v['headline'][i]['ci'])}</td>"
                                 for v in vals) + "</tr>")
        out.append("</table>")
    out.append("</details>")
    return "".join(out)


def _img(path: str | os.PathLike | None) -> str:
    if not path or not Path(path).is_file():
        return ""
    data = base64.b64encode(Path(path).read_bytes()).decode()
    return f'<img alt="figure" src="data:image/png;base64,{data}">'


def _nice_ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    import math

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


def dot_plot(rows: list[dict]) -> str:
    """Paper against reproduction for one metric's table, as an inline SVG: per cell the
    reproduced mean with its 95% interval (filled dot and bar) and the published value (open
    diamond, with its interval when the paper gives one), coloured by verdict."""
    rows = [r for r in rows if r["mean"] is not None]
    if not any(r["published_mean"] is not None for r in rows):
        return ""
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
    h = axis + 50

    def x(v: float) -> float:
        return left + (v - lo) / (hi - lo) * width

    colour = {"consistent": "#176f2c", "differs": "#b3261e", "reference": "#777"}
    out = [f'<svg class="dotplot" role="img" width="{left + width + 20}" height="{h}" '
           f'viewBox="0 0 {left + width + 20} {h}" xmlns="http://www.w3.org/2000/svg">'
           f'<title>published value (diamond) against the reproduced 95% interval (dot and bar), per cell</title>']
    out.append(f'<line x1="{left}" x2="{left + width}" y1="{axis}" y2="{axis}" stroke="#999"/>')
    for t in _nice_ticks(lo, hi):
        out.append(f'<line x1="{x(t):.1f}" x2="{x(t):.1f}" y1="{top - 4}" y2="{axis + 4}" stroke="#e3e3e3"/>'
                   f'<text class="tick" x="{x(t):.1f}" y="{axis + 18}" text-anchor="middle">{t:g}</text>')
    out.append(f'<text class="axis-label" x="{left + width / 2:.1f}" y="{axis + 40}" text-anchor="middle">'
               f'{_e(axis_label(rows[0]["metric"], rows[0].get("round")))}</text>')
    for i, r in enumerate(rows):
        y = top + rh * i + rh / 2
        c = colour.get(r["verdict"] or "", "#1a4f8b")
        lab = r["label"] if len(r["label"]) <= 36 else r["label"][:35] + "…"
        out.append(f'<g data-verdict="{_e(r["verdict"] or "none")}"><text x="{left - 8}" y="{y + 4:.1f}" '
                   f'text-anchor="end">{_e(lab)}</text>')
        ci = r["ci"] or 0
        out.append(f'<line x1="{x(r["mean"] - ci):.1f}" x2="{x(r["mean"] + ci):.1f}" y1="{y:.1f}" y2="{y:.1f}" '
                   f'stroke="{c}" stroke-width="3" stroke-opacity="0.55"/>'
                   f'<circle cx="{x(r["mean"]):.1f}" cy="{y:.1f}" r="3.5" fill="{c}"/>')
        if r["published_mean"] is not None:
            p, pc = r["published_mean"], r["published_ci"] or 0
            if pc:
                out.append(f'<line x1="{x(p - pc):.1f}" x2="{x(p + pc):.1f}" y1="{y + 4:.1f}" y2="{y + 4:.1f}" '
                           f'stroke="#222" stroke-width="1" stroke-dasharray="2,2"/>')
            out.append(f'<path d="M{x(p):.1f},{y - 5:.1f} l5,5 l-5,5 l-5,-5 z" fill="white" stroke="#222" '
                       f'stroke-width="1.3"/>')
        out.append("</g>")
    out.append("</svg>")
    return "".join(out)


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


def _pivot_html(pv) -> str:
    key, values, models, grid = pv
    out = [f"<table class=pivot><tr><th>{_e(key)}</th>" + "".join(f"<th>{_e(m)}</th>" for m in models) + "</tr>"]
    for v in values:
        rs = [grid[(v, m)] for m in models]
        out.append(f'<tr data-verdict="{_row_verdict(rs)}"><td>{_e(v)}</td>')
        for r in rs:
            pub = (f"<small>paper {_pm(r['published_mean'], r['published_ci'])}{_e(r.get('published_marks') or '')}"
                   f" {_verdict_html(r['verdict'])}</small>") if r["published_mean"] is not None else ""
            out.append(f"<td class='num pv'>{_pm(r['mean'], r['ci'])}{_e(r.get('marks') or '')}{pub}</td>")
        out.append("</tr>")
    out.append("</table>")
    return "".join(out)


def _long_table(rows: list[dict], anchor: str = "") -> str:
    """One row per cell.  A diagnosis that covers several rows is written once, under the
    table, naming the rows it covers; each of those rows points to it."""
    shown = [r for r in rows if r.get("diagnosis") and r["verdict"] not in (None, "consistent")]
    key = {id(r): json.dumps(r["diagnosis"], sort_keys=True) for r in shown}
    covers: dict[str, list[dict]] = {}
    for r in shown:
        covers.setdefault(key[id(r)], []).append(r)
    shared = [k for k, rs in covers.items() if len(rs) > 1]
    out = ["<table><tr><th>algorithm</th><th>reproduced (95% CI)</th><th>published</th><th>difference</th>"
           "<th>verdict</th><th>source</th><th>diagnosis</th></tr>"]
    for r in rows:
        pub = _pm(r["published_mean"], r["published_ci"]) if r["published_mean"] is not None else "–"
        pub += _e(r.get("published_marks") or "")
        diff = f"{r['difference']:+.3f}" if r["difference"] is not None else "–"
        v = r["verdict"]
        k = key.get(id(r))
        diag = "" if k is None else (f'<a class=diagref href="#{_e(anchor)}diag-{shared.index(k) + 1}">see diagnosis '
                                     f'{shared.index(k) + 1} below</a>' if k in shared else _diag(r["diagnosis"]))
        out.append(f'<tr data-verdict="{_e(v or "none")}"><td>{_e(r["label"])}</td>'
                   f"<td class=num>{_pm(r['mean'], r['ci'])}{_e(r.get('marks') or '')}</td>"
                   f"<td class=num>{pub}</td><td class=num>{diff}</td>"
                   f'<td>{_verdict_html(v)}</td><td>{_e(r["source"] or "")}</td><td>{diag}</td></tr>')
    out.append("</table>")
    for i, k in enumerate(shared, start=1):
        rs = covers[k]
        out.append(f'<p class=shareddiag id="{_e(anchor)}diag-{i}">Diagnosis {i}, for the {len(rs)} rows '
                   + ", ".join(_e(r["label"]) for r in rs)
                   + f": {_diag(rs[0]['diagnosis'])}</p>")
    return "".join(out)


def staleness(rec: dict) -> tuple[str, str] | None:
    """None when the code that computes a record's numbers is today's code (the record's
    ``code``: the digests of the modules its cells run and the numeric libraries' versions,
    kept when it was made or verified); else (a sentence naming what changed since, how to
    rerun, as HTML).  A record that is not a reproduction (not run: no numbers) is never stale."""
    if rec.get("status") != "reproduced":
        return None
    how = "<code>make verify</code> recomputes and compares; <code>make reproduce</code> reruns the changed cells"
    code = rec.get("code")
    if not code:
        return ("made by commit " + str(rec.get("git_commit", "unknown"))[:10] + " before records kept the code "
                "they come from", how)
    changed = codeprint.changed(code, codeprint.current(code))
    if not changed:
        return None
    when = "verified" if rec.get("verified") else "made"
    return (f"computed by code that has changed since they were {when}: "
            + ", ".join(changed[:8]) + (f" and {len(changed) - 8} more" if len(changed) > 8 else ""), how)


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


def artefact_section(rec: dict, png: str | None, files: list[tuple[str, str]] = (),
                     stale: tuple[str, str] | None = None, kept: str | None = None) -> str:
    """``kept``: why this reproduced record could not be rerun here (its data are absent) and
    is shown as committed."""
    aid = f"{rec['paper']}-{rec['artefact']}"
    n_dis = _disagreements(rec)
    out = [f'<section class="artefact" id="{_e(aid)}" data-disagreements="{n_dis}"><h3>{_e(rec["title"])}</h3>'
           f'<p class=files>Files <code>{_e(rec["artefact"])}</code>: '
           + ("".join(f'<a href="{_e(href)}">{_e(lab)}</a>' for lab, href in files) or "none yet") + "</p>"]
    if stale:
        out.append(f'<p class=stale>Provenance is stale: these outputs were {_e(stale[0])} ({stale[1]}).</p>')
    if kept:
        out.append(f'<p class="kept">Data absent here: this artefact {_e(kept)}.</p>')
    if rec.get("status") != "reproduced":
        out.append(f'<p class="ne">Not run: {_e(rec.get("reason"))}.</p>'
                   f'<p>How to obtain the data: {_e(rec.get("how_to_obtain"))}</p></section>')
        return "".join(out)
    ds = rec["dataset"]
    out.append(f"<p>{_e(rec['description'])}</p>")
    data = f'<span class="{"" if ds["original"] else "sub"}">{_e(data_used_label(ds))}</span>'
    if not ds["original"]:
        data += (f'<br><small>The protocol as configured for the original data: '
                 f'{_e(ds.get("label", "").split(": ", 1)[-1])}</small>')
    out.append(f'<p>Data: {data}</p>'
               f"<p>Scale <b>{_e(rec['scale'])}</b>: {_e(rec['size'])}, root seed {rec['seed']}.</p>")
    metrics = list(dict.fromkeys(r["metric"] for r in rec["table"]))
    for m in metrics:
        rows = [r for r in rec["table"] if r["metric"] == m]
        at = f" at round {rows[0]['round']}" if rows and rows[0]["round"] is not None else ""
        out.append(f"<h4>{_e(m)}{_e(at)}</h4>")
        pv = pivot(rows)
        if pv is not None:
            out.append(_pivot_html(pv) + "<details><summary>As a list: difference, verdict, diagnosis</summary>"
                       + _long_table(rows, f"{aid}-{m}-") + "</details>")
        else:
            out.append(_long_table(rows, f"{aid}-{m}-"))
        out.append(dot_plot(rows))
    if png:
        out.append(_img(png))
    if rec["claims"]:
        out.append("<h4>Claims</h4><ul>")
        for c in rec["claims"]:
            dep = ""
            for d in c.get("depends_on") or []:
                dep += (f'<br><b>Depends on {_e(d["choice"])}</b>: '
                        + ", ".join(f"{_e(v)} for {_e(k)}" for k, v in d["verdicts"].items()))
            diag = f"<br>Diagnosis: {_diag(c['diagnosis'])}" if c.get("diagnosis") and c["verdict"] != "held" else ""
            out.append(f'<li data-verdict="{_e(c["verdict"])}"><span class="{_verdict_class(c["verdict"])}">'
                       f'{_e(c["verdict"])}</span>: {_e(c["text"])}<br><small>{_e(c["evidence"])}</small>{dep}{diag}</li>')
        out.append("</ul>")
    out.append(_sensitivity_html(rec.get("sensitivity") or []))
    if rec["notes"]:
        out.append("<h4>Notes on the protocol</h4><ul>" + "".join(f"<li>{_e(n)}</li>" for n in rec["notes"]) + "</ul>")
    out.append(f"<details><summary>Provenance: resolved config, cells, software</summary>"
               f"<p>Made by git commit {_e(rec['git_commit'])}"
               + (f"; verified bit for bit by commit {_e(v['commit'])} on {_e(v['date'])}: {_e(v['identical'])} of "
                  f"{_e(v['cells'])} cells recomputed identical (<code>rankrepro verify</code>)"
                  if (v := rec.get("verified")) else "")
               + (f"; code fingerprint {_e(rec['code'].get('fingerprint', ''))} "
                  f"({len(rec['code'].get('modules', {}))} modules)" if rec.get("code") else "")
               + f"</p><pre>{_e(rec['config'])}</pre>"
               f"<pre>{_e(json.dumps(rec['versions'], indent=1))}</pre></details></section>")
    return "".join(out)


LEGEND = ('<p class=legend>Published cells: <span class="consistent">consistent</span>'
          '<span class="differs">differs</span><span class="reference">reference</span> (substitute data: shown, '
          'not judged) <span class="nopub">no published value</span> (the paper prints none for this cell). '
          'Claims: <span class="held">held</span><span class="notheld">not held</span>'
          '<span class="inconclusive">inconclusive</span><span class="ne">not evaluable</span> (the claim is about '
          'something this run does not reach, e.g. round 5,000 of a 400-round smoke run). In the dot plots a '
          'filled dot and bar are the reproduced mean and 95% interval, an open diamond (dashed bar) the published '
          'value (and interval).</p>')

SCRIPT = """
(function(){
  var box = document.getElementById('only-disagreements');
  function apply(on){
    document.querySelectorAll('[data-verdict]').forEach(function(el){
      if (el.tagName.toLowerCase() === 'g') return;  // the dot plots keep every cell
      el.hidden = on && ['differs', 'not held'].indexOf(el.getAttribute('data-verdict')) < 0;
    });
    document.querySelectorAll('[data-disagreements]').forEach(function(el){
      el.hidden = on && el.getAttribute('data-disagreements') === '0';
    });
    document.body.classList.toggle('filtered', on);
  }
  box.addEventListener('change', function(){
    apply(box.checked);
    history.replaceState(null, '', box.checked ? '#only-disagreements' : location.pathname);
  });
  var want = location.hash === '#only-disagreements' || /[?&]only=disagreements/.test(location.search);
  box.checked = want;
  apply(want);
})();
"""


def _order(records):
    order = list(PAPERS)
    return sorted({r["paper"] for r, _ in records}, key=lambda p: (order.index(p) if p in order else len(order), p))


def toc(records: list[tuple[dict, str | None]]) -> str:
    out = ['<nav id="toc"><b>Contents</b>'
           '<label class="filter"><input type="checkbox" id="only-disagreements"> only disagreements '
           '(<span class="differs">differs</span> / <span class="notheld">not held</span>)</label>'
           '<ul><li><a href="#reading">How to read this report</a></li><li><a href="#scorecard">Scorecard</a></li>']
    for paper in _order(records):
        recs = [r for r, _ in records if r["paper"] == paper]
        n = sum(_disagreements(r) for r in recs)
        out.append(f'<li data-disagreements="{n}"><a class="paper-link" href="#{_e(paper)}">'
                   f'{_e(PAPERS.get(paper, paper).split(":")[0])}</a><ul>')
        for r in recs:
            d = _disagreements(r)
            badge = (f'<span class="badge nr">not run</span>' if r.get("status") != "reproduced" else
                     (f'<span class="badge" title="cells that differ, claims not held">{d}</span>' if d else "")
                     + ('' if r["dataset"]["original"] else '<span class="badge sub" title="substitute data">sub</span>'))
            out.append(f'<li data-disagreements="{d}"><a href="#{_e(r["paper"])}-{_e(r["artefact"])}">'
                       f'{_e(display_name(r["title"]))}</a>{badge}<br><span class="fname">{_e(r["artefact"])}</span></li>')
        out.append("</ul></li>")
    out.append("</ul></nav>")
    return "".join(out)


def render(records: list[tuple[dict, str | None]], scale: str, files: dict[str, list[tuple[str, str]]] | None = None,
           head_commit: str | None = None, kept: dict[str, str] | None = None) -> str:
    """The page.  ``files``: per record name, the (label, relative link) of its files;
    ``head_commit``: the commit the report is made from (default: the working tree's);
    ``kept``: the reproduced records whose data are absent here, shown as committed (name -> why)."""
    files = files or {}
    kept = kept or {}
    head_commit = head_commit or provenance.git_commit()
    stale = {r["name"]: staleness(r) for r, _ in records}
    n_art = len(records)
    reproduced = [r for r, _ in records if r.get("status") == "reproduced"]
    not_run = [r for r, _ in records if r.get("status") != "reproduced"]
    sc = scorecard([r for r, _ in records])
    # only published cells on the papers' own data are judged; on a substitute they are references
    cons, n_cells, refs = sc.total("consistent"), sc.total("compared"), sc.total("references")
    n_claims, held, ne, inc = sc.total("claims"), sc.total("held"), sc.total("not_evaluable"), sc.total("inconclusive")
    by_kind = sc.disagreements
    subs = sc.substitutes
    head = (f"<!doctype html><html lang=en><head><meta charset=utf-8><title>rankrepro replication report</title>"
            f"<style>{CSS}</style></head><body><div id=layout>{toc(records)}<main>"
            f"<h1>rankrepro: replication report</h1>"
            f"<p>Scale <b>{_e(scale)}</b>. Generated from git commit {_e(head_commit)}. Every number below "
            "comes from a run of this pipeline; published values are shown beside them, never used as results.</p>")
    caveat = not_evidence(scale)
    if caveat:
        head += f'<p class="not-evidence" id="not-evidence"><b>{_e(caveat.split(". ", 1)[0])}.</b> {_e(caveat.split(". ", 1)[1])}</p>'
    verified = [r["verified"] for r in reproduced if r.get("verified")]
    if verified:
        by = sorted({(v["commit"], v["date"]) for v in verified}, key=lambda cv: cv[1])
        head += (f"<p>{len(verified)} of {len(reproduced)} reproductions verified: their cells recomputed by "
                 "<code>rankrepro verify</code> and found identical bit for bit "
                 f"({sum(v['identical'] for v in verified)} of {sum(v['cells'] for v in verified)} cells; "
                 + "; ".join(f"commit {_e(c[:10])} on {_e(d)}" for c, d in by) + ").</p>")
    n_stale = [r for r, _ in records if stale[r["name"]]]
    if n_stale:
        head += (f'<p class=stale id=stale><b>{len(n_stale)} of {n_art} artefacts have stale provenance</b>: the code '
                 "that computes them has changed since they were made or verified (<code>make verify</code> "
                 "recomputes and compares them; <code>make reproduce</code> reruns the changed cells): "
                 + ", ".join(f'<a href="#{_e(r["paper"])}-{_e(r["artefact"])}">{_e(r["name"])}</a>' for r in n_stale)
                 + ".</p>")
    score = ('<section id="scorecard"><h2>Scorecard' + (f" (scale {_e(scale)}: not evidence)" if caveat else "") + '</h2>'
             + (f'<p class="not-evidence">{_e(caveat)}</p>' if caveat else "") +
             f'<div class=card><b>{len(reproduced)} / {n_art}</b>artefacts reproduced</div>'
             f'<div class=card><b>{cons} / {n_cells}</b>published cells on original data consistent '
             f'(95% intervals overlap; {refs} more on substitute data shown as references)</div>'
             f'<div class=card><b>{held} / {n_claims}</b>claims held'
             + (f", {inc} inconclusive" if inc else "")
             + (f" ({ne} not evaluable at this scale)" if ne else "") + "</div>"
             '<div class=card><b>' + str(sum(by_kind.values())) + '</b>disagreements (cells that differ, claims not held), '
             'by diagnosis: ' + (", ".join(f"{_e(k)} {v}" for k, v in sorted(by_kind.items())) or "none") + "</div>"
             f'<div class=card><b>{subs}</b>artefacts on a substitute data set</div>'
             f'<div class=card><b>{len(not_run)}</b>artefacts not run</div>')
    if kept:
        score += (f'<p class="kept"><b>{len(kept)}</b> reproduced artefact(s) could not be rerun here, their data '
                  "being absent; their committed records are shown: "
                  + ", ".join(f'<a href="#{_e(n.replace("/", "-"))}">{_e(n)}</a>' for n in sorted(kept)) + ".</p>")
    if not_run:
        score += "<ul>" + "".join(f"<li>{_e(r['title'])}: {_e(r.get('reason'))}</li>" for r in not_run) + "</ul>"
    score += "<h3>Artefacts</h3><table><tr><th>paper</th><th>artefact (paper's numbering)</th><th>file name</th><th>data</th>" \
             "<th>cells consistent</th><th>claims held</th></tr>"
    for r, _ in records:
        aid = f"{r['paper']}-{r['artefact']}"
        name = (f"<td><a href='#{_e(aid)}'>{_e(display_name(r['title']))}</a></td>"
                f"<td><code>{_e(r['artefact'])}</code></td>")
        if r.get("status") == "reproduced":
            a = artefact_score(r)
            score += (f"<tr data-disagreements='{_disagreements(r)}'><td>{_e(r['paper'])}</td>{name}"
                      f"<td>{'original' if a.original else 'substitute'}</td>"
                      f"<td class=num>{a.consistent} / {a.compared}</td>"
                      f"<td class=num>{a.held} / {a.claims}</td></tr>")
        else:
            score += f"<tr data-disagreements='0'><td>{_e(r['paper'])}</td>{name}<td colspan=3>not run</td></tr>"
    score += "</table></section>"
    body = []
    for paper in _order(records):
        body.append(f'<section class="paper" id="{_e(paper)}"><h2>{_e(PAPERS.get(paper, paper))}</h2>')
        for r, png in records:
            if r["paper"] == paper:
                body.append(artefact_section(r, png, files.get(r["name"], []), stale[r["name"]], kept.get(r["name"])))
        body.append("</section>")
    how = ("<section id=reading><h2>How to read this report</h2><p>Reproduced values are means over the Monte-Carlo "
           "trials with 95% Student-t intervals. A published value is <i>consistent</i> when its interval (or the value, "
           "when the paper gives none) overlaps the reproduced interval, else it <i>differs</i>. On a substitute data set "
           "a published value is a <i>reference</i>: shown, not judged. A claim is <i>held</i> when its condition is "
           "met at every compared point on the means; <i>not held</i> when it fails with the 95% intervals separated "
           "(or, for a claim of significance, overlapping); <i>inconclusive</i> when it fails only on means whose "
           "intervals overlap. Every disagreement carries a <i>diagnosis</i>: <b>paper</b> (an exact implementation "
           "and an independent check agree and differ from the published value), <b>substitute data</b>, <b>open "
           "protocol choice</b> (the paper leaves a choice open; its measured effect is in the artefact's 'what moves "
           "the result' table) or <b>implementation</b> (a bug of ours, fixed). The 'what moves the result' table "
           "reruns the artefact under each value of each open choice on the same random numbers; a claim whose verdict "
           "changes with a choice says <i>depends on</i>. The main run's value is the reading most faithful to the "
           "paper's text, never the one closest to the published numbers.</p>" + LEGEND +
           "<p>The contents on the left stay in view; its box <i>only disagreements</i> hides every row, claim and "
           "artefact that agrees with the paper (link to that view: <code>index.html#only-disagreements</code>). "
           "Each artefact links to its files (summary table, record, resolved config, figure), relative to this "
           "report in the repository.</p></section>")
    return (head + how + score + "".join(body) + f"</main></div><script>{SCRIPT}</script></body></html>")


def build_report(json_paths: list[str], png_paths: dict[str, str], out_html: str | os.PathLike, scale: str,
                 kept: dict[str, str] | None = None) -> None:
    records, files = [], {}
    out_dir = Path(out_html).parent
    for p in json_paths:
        rec = json.loads(Path(p).read_text())
        png = png_paths.get(f"{rec['paper']}/{rec.get('figure_file') or rec['artefact']}")
        records.append((rec, png))
        files[rec["name"]] = artefact_files(p, png, out_dir)
    records.sort(key=lambda rp: (rp[0]["paper"], rp[0]["artefact"]))
    page = render(records, scale, files, kept=kept)
    atomic_write(out_html, lambda tmp: Path(tmp).write_text(page, encoding="utf-8"))


def rebuild_report(scale: str = "paper", root: str | os.PathLike = ".") -> Path:
    """The report again from the records and figures already on disk (``make report``): no
    job runs, nothing is recomputed."""
    root = Path(root)
    prefix = root / ("" if scale == "paper" else f"runs/{scale}")
    records = sorted(str(p) for p in (prefix / "results").glob("*/*.json"))
    pngs = {f"{p.parent.name}/{p.stem}": str(p) for p in (prefix / "figures").glob("*/*.png")}
    out = prefix / "results" / "report" / "index.html"
    build_report(records, pngs, out, scale)
    return out
