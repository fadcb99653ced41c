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
from pathlib import Path

from .. import provenance
from ..pipeline.runner import atomic_write

PAPERS = {
    "harrington2003": "Harrington (2003): Online ranking / collaborative filtering using the perceptron algorithm",
    "crammer_singer2005": "Crammer & Singer (2005): Online ranking by projecting",
    "elsas2008": "Elsas, Carvalho & Carbonell (2008): Fast learning of document ranking functions with the committee perceptron",
    "yu2006": "Yu, Yu & Tresp (2006): Collaborative ordinal regression",
    "shivaswamy2012": "Shivaswamy & Joachims (2012): Online structured prediction via coactive learning",
}

CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;max-width:1100px;margin:2em auto;
padding:0 1em;color:#222;line-height:1.45}
h1{font-size:1.6em}h2{border-bottom:2px solid #ddd;padding-bottom:.2em;margin-top:2em}h3{margin-top:1.6em}
table{border-collapse:collapse;margin:.6em 0;font-size:.9em}th,td{border:1px solid #ccc;padding:.25em .55em;
text-align:left}th{background:#f3f3f3}td.num{text-align:right;font-variant-numeric:tabular-nums}
.held,.consistent{color:#176f2c;font-weight:600}.notheld,.differs{color:#b3261e;font-weight:600}
.ne{color:#8a6d00;font-weight:600}.inconclusive{color:#6a4c93;font-weight:600}.reference{color:#555}
.diag{font-size:.85em;color:#444}.diag b{color:#222}.sub{background:#fff4d6;border:1px solid #e8c66a;padding:.3em .6em;
display:inline-block}.card{display:inline-block;border:1px solid #ccc;border-radius:6px;padding:.6em 1em;
margin:.3em;min-width:11em}.card b{font-size:1.5em;display:block}img{max-width:100%;border:1px solid #eee}
pre{background:#f7f7f7;padding:.6em;overflow:auto;font-size:.8em;max-height:28em}details{margin:.4em 0}
"""


def _e(x) -> str:
    return html.escape("" if x is None else str(x))


def _pm(mean, ci) -> str:
    if mean is None:
        return "–"
    return f"{mean:.3f}" if ci is None else f"{mean:.3f} ± {ci:.3f}"


def _verdict_class(v: str | None) -> str:
    return {"held": "held", "consistent": "consistent", "not held": "notheld", "differs": "differs",
            "inconclusive": "inconclusive", "reference": "reference"}.get(v or "", "ne")


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


def artefact_section(rec: dict, png: str | None) -> str:
    aid = f"{rec['paper']}-{rec['artefact']}"
    out = [f'<section class="artefact" id="{_e(aid)}"><h3>{_e(rec["title"])}</h3>']
    if rec.get("status") != "reproduced":
        out.append(f'<p class="ne">Not run: {_e(rec.get("reason"))}.</p>'
                   f'<p>How to obtain the data: {_e(rec.get("how_to_obtain"))}</p></section>')
        return "".join(out)
    ds = rec["dataset"]
    data = _e(ds["label"])
    out.append(f"<p>{_e(rec['description'])}</p>")
    out.append(f'<p>Data: <span class="{"" if ds["original"] else "sub"}">{data}</span></p>'
               f"<p>Scale <b>{_e(rec['scale'])}</b>: {_e(rec['size'])}, root seed {rec['seed']}.</p>")
    metrics = list(dict.fromkeys(r["metric"] for r in rec["table"]))
    for m in metrics:
        rows = [r for r in rec["table"] if r["metric"] == m]
        at = f" at round {rows[0]['round']}" if rows and rows[0]["round"] is not None else ""
        out.append(f"<h4>{_e(m)}{_e(at)}</h4><table><tr><th>algorithm</th><th>reproduced (95% CI)</th>"
                   "<th>published</th><th>difference</th><th>verdict</th><th>source</th><th>diagnosis</th></tr>")
        for r in rows:
            pub = _pm(r["published_mean"], r["published_ci"]) if r["published_mean"] is not None else "–"
            pub += _e(r.get("published_marks") or "")
            diff = f"{r['difference']:+.3f}" if r["difference"] is not None else "–"
            v = r["verdict"]
            out.append(f"<tr><td>{_e(r['label'])}</td><td class=num>{_pm(r['mean'], r['ci'])}{_e(r.get('marks') or '')}</td>"
                       f"<td class=num>{pub}</td><td class=num>{diff}</td>"
                       f'<td class="{_verdict_class(v)}">{_e(v or "–")}</td><td>{_e(r["source"] or "")}</td>'
                       f'<td>{_diag(r.get("diagnosis")) if v not in (None, "consistent") else ""}</td></tr>')
        out.append("</table>")
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
            out.append(f'<li><span class="{_verdict_class(c["verdict"])}">{_e(c["verdict"])}</span>: '
                       f'{_e(c["text"])}<br><small>{_e(c["evidence"])}</small>{dep}{diag}</li>')
        out.append("</ul>")
    out.append(_sensitivity_html(rec.get("sensitivity") or []))
    if rec["notes"]:
        out.append("<h4>Notes on the protocol</h4><ul>" + "".join(f"<li>{_e(n)}</li>" for n in rec["notes"]) + "</ul>")
    out.append(f"<details><summary>Provenance: resolved config, cells, software</summary>"
               f"<p>git commit {_e(rec['git_commit'])}</p><pre>{_e(rec['config'])}</pre>"
               f"<pre>{_e(json.dumps(rec['versions'], indent=1))}</pre></details></section>")
    return "".join(out)


def render(records: list[tuple[dict, str | None]], scale: str) -> str:
    n_art = len(records)
    reproduced = [r for r, _ in records if r.get("status") == "reproduced"]
    not_run = [r for r, _ in records if r.get("status") != "reproduced"]
    # only published cells on the papers' own data are judged; on a substitute they are references
    cells = [t for r in reproduced for t in r["table"] if t["verdict"] in ("consistent", "differs")]
    refs = sum(t["verdict"] == "reference" for r in reproduced for t in r["table"])
    cons = sum(t["verdict"] == "consistent" for t in cells)
    claims = [c for r in reproduced for c in r["claims"]]
    held = sum(c["verdict"] == "held" for c in claims)
    ne = sum(c["verdict"] == "not evaluable" for c in claims)
    inc = sum(c["verdict"] == "inconclusive" for c in claims)
    disagreements = [t.get("diagnosis") for t in cells if t["verdict"] == "differs"] + \
                    [c.get("diagnosis") for c in claims if c["verdict"] == "not held"]
    by_kind: dict[str, int] = {}
    for d in disagreements:
        k = d["kind"] if d else "undiagnosed"
        by_kind[k] = by_kind.get(k, 0) + 1
    subs = sum(not r["dataset"]["original"] for r in reproduced)
    head = (f"<!doctype html><html lang=en><head><meta charset=utf-8><title>rankrepro replication report</title>"
            f"<style>{CSS}</style></head><body><h1>rankrepro: replication report</h1>"
            f"<p>Scale <b>{_e(scale)}</b>. Generated from git commit {_e(provenance.git_commit())}. Every number below "
            "comes from a run of this pipeline; published values are shown beside them, never used as results.</p>")
    score = ('<section id="scorecard"><h2>Scorecard</h2>'
             f'<div class=card><b>{len(reproduced)} / {n_art}</b>artefacts reproduced</div>'
             f'<div class=card><b>{cons} / {len(cells)}</b>published cells on original data consistent '
             f'(95% intervals overlap; {refs} more on substitute data shown as references)</div>'
             f'<div class=card><b>{held} / {len(claims)}</b>claims held'
             + (f", {inc} inconclusive" if inc else "")
             + (f" ({ne} not evaluable at this scale)" if ne else "") + "</div>"
             '<div class=card><b>' + str(len(disagreements)) + '</b>disagreements (cells that differ, claims not held), '
             'by diagnosis: ' + (", ".join(f"{_e(k)} {v}" for k, v in sorted(by_kind.items())) or "none") + "</div>"
             f'<div class=card><b>{subs}</b>artefacts on a substitute data set</div>'
             f'<div class=card><b>{len(not_run)}</b>artefacts not run</div>')
    if not_run:
        score += "<ul>" + "".join(f"<li>{_e(r['title'])}: {_e(r.get('reason'))}</li>" for r in not_run) + "</ul>"
    score += "<h3>Artefacts</h3><table><tr><th>paper</th><th>artefact</th><th>data</th><th>cells consistent</th>" \
             "<th>claims held</th></tr>"
    for r, _ in records:
        aid = f"{r['paper']}-{r['artefact']}"
        if r.get("status") == "reproduced":
            cc = [t for t in r["table"] if t["verdict"] in ("consistent", "differs")]
            score += (f"<tr><td>{_e(r['paper'])}</td><td><a href='#{_e(aid)}'>{_e(r['artefact'])}</a></td>"
                      f"<td>{'original' if r['dataset']['original'] else 'substitute'}</td>"
                      f"<td class=num>{sum(t['verdict'] == 'consistent' for t in cc)} / {len(cc)}</td>"
                      f"<td class=num>{sum(c['verdict'] == 'held' for c in r['claims'])} / {len(r['claims'])}</td></tr>")
        else:
            score += f"<tr><td>{_e(r['paper'])}</td><td>{_e(r['artefact'])}</td><td colspan=3>not run</td></tr>"
    score += "</table></section>"
    body = []
    order = list(PAPERS)
    for paper in sorted({r["paper"] for r, _ in records}, key=lambda p: (order.index(p) if p in order else len(order), p)):
        body.append(f'<section class="paper" id="{_e(paper)}"><h2>{_e(PAPERS.get(paper, paper))}</h2>')
        for r, png in records:
            if r["paper"] == paper:
                body.append(artefact_section(r, png))
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
           "paper's text, never the one closest to the published numbers.</p></section>")
    return head + how + score + "".join(body) + "</body></html>"


def build_report(json_paths: list[str], png_paths: dict[str, str], out_html: str | os.PathLike, scale: str) -> None:
    records = []
    for p in json_paths:
        rec = json.loads(Path(p).read_text())
        records.append((rec, png_paths.get(rec["name"])))
    records.sort(key=lambda rp: (rp[0]["paper"], rp[0]["artefact"]))
    page = render(records, scale)
    atomic_write(out_html, lambda tmp: Path(tmp).write_text(page, encoding="utf-8"))
