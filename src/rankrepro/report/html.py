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
.ne{color:#8a6d00;font-weight:600}.sub{background:#fff4d6;border:1px solid #e8c66a;padding:.3em .6em;
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
    return {"held": "held", "consistent": "consistent", "not held": "notheld", "differs": "differs"}.get(v or "", "ne")


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
                   "<th>published</th><th>difference</th><th>verdict</th><th>source</th></tr>")
        for r in rows:
            pub = _pm(r["published_mean"], r["published_ci"]) if r["published_mean"] is not None else "–"
            pub += _e(r.get("published_marks") or "")
            diff = f"{r['difference']:+.3f}" if r["difference"] is not None else "–"
            v = r["verdict"]
            out.append(f"<tr><td>{_e(r['label'])}</td><td class=num>{_pm(r['mean'], r['ci'])}{_e(r.get('marks') or '')}</td>"
                       f"<td class=num>{pub}</td><td class=num>{diff}</td>"
                       f'<td class="{_verdict_class(v)}">{_e(v or "–")}</td><td>{_e(r["source"] or "")}</td></tr>')
        out.append("</table>")
    if png:
        out.append(_img(png))
    if rec["claims"]:
        out.append("<h4>Claims</h4><ul>")
        for c in rec["claims"]:
            out.append(f'<li><span class="{_verdict_class(c["verdict"])}">{_e(c["verdict"])}</span>: '
                       f'{_e(c["text"])}<br><small>{_e(c["evidence"])}</small></li>')
        out.append("</ul>")
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
    cells = [t for r in reproduced for t in r["table"] if t["verdict"] is not None]
    cons = sum(t["verdict"] == "consistent" for t in cells)
    claims = [c for r in reproduced for c in r["claims"]]
    held = sum(c["verdict"] == "held" for c in claims)
    ne = sum(c["verdict"] == "not evaluable" for c in claims)
    subs = sum(not r["dataset"]["original"] for r in reproduced)
    head = (f"<!doctype html><html lang=en><head><meta charset=utf-8><title>rankrepro replication report</title>"
            f"<style>{CSS}</style></head><body><h1>rankrepro: replication report</h1>"
            f"<p>Scale <b>{_e(scale)}</b>. Generated from git commit {_e(provenance.git_commit())}. Every number below "
            "comes from a run of this pipeline; published values are shown beside them, never used as results.</p>")
    score = ('<section id="scorecard"><h2>Scorecard</h2>'
             f'<div class=card><b>{len(reproduced)} / {n_art}</b>artefacts reproduced</div>'
             f'<div class=card><b>{cons} / {len(cells)}</b>published cells consistent (95% intervals overlap)</div>'
             f'<div class=card><b>{held} / {len(claims)}</b>claims held'
             + (f" ({ne} not evaluable at this scale)" if ne else "") + "</div>"
             f'<div class=card><b>{subs}</b>artefacts on a substitute data set</div>'
             f'<div class=card><b>{len(not_run)}</b>artefacts not run</div>')
    if not_run:
        score += "<ul>" + "".join(f"<li>{_e(r['title'])}: {_e(r.get('reason'))}</li>" for r in not_run) + "</ul>"
    score += "<h3>Artefacts</h3><table><tr><th>paper</th><th>artefact</th><th>data</th><th>cells consistent</th>" \
             "<th>claims held</th></tr>"
    for r, _ in records:
        aid = f"{r['paper']}-{r['artefact']}"
        if r.get("status") == "reproduced":
            cc = [t for t in r["table"] if t["verdict"] is not None]
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
           "when the paper gives none) overlaps the reproduced interval. A claim is <i>held</i> when its condition is met "
           "at every compared point; the evidence line gives the numbers. Results on a substitute data set are marked "
           "as such.</p></section>")
    return head + score + "".join(body) + how + "</body></html>"


def build_report(json_paths: list[str], png_paths: dict[str, str], out_html: str | os.PathLike, scale: str) -> None:
    records = []
    for p in json_paths:
        rec = json.loads(Path(p).read_text())
        records.append((rec, png_paths.get(rec["name"])))
    records.sort(key=lambda rp: (rp[0]["paper"], rp[0]["artefact"]))
    page = render(records, scale)
    atomic_write(out_html, lambda tmp: Path(tmp).write_text(page, encoding="utf-8"))
