"""The specification curve of an artefact's multiverse (Simonsohn, Simmons & Nelson 2020; the
form of specr): the readings sorted by their distance to the paper, each as a point with the
range of its cells' |difference| as a bar (or, without published cells, by the claims held), the
paper as the line at 0, readings whose table agrees with the paper's marked; below, a grid with
a row per open choice marking each reading's value where it is off the main one.  Drawn from the
record's ``multiverse`` section as an inline SVG for the report (:func:`svg`); the articles give
the same readings as a table (report.artefact.multiverse_markdown)."""

from __future__ import annotations

from html import escape

#: the plot's geometry (px)
LEFT, WIDTH, TOP, PLOT_H, ROW_H = 150, 520, 16, 150, 15
AGREES, DIFFERS, NOTABLE = "#2ca02c", "#d62728", "#555"


def _order(rows: list[dict]) -> list[dict]:
    return sorted(rows, key=lambda r: (r["mean_abs_difference"] is None, r["mean_abs_difference"] or 0.0,
                                       -sum(x == "held" for x in r["claims"].values()), r["key"]))


def svg(mvs: dict | None) -> str:
    """The curve as an inline SVG ("" without a multiverse)."""
    if not mvs or not mvs.get("list"):
        return ""
    rows = _order(mvs["list"])
    choices = list(dict.fromkeys(c for r in rows for c in r["reading"]))
    n = len(rows)
    step = WIDTH / max(n, 1)
    by_distance = any(r["mean_abs_difference"] is not None for r in rows)
    if by_distance:
        ys = [abs(d) for r in rows for d in _diffs(r)] or [r["mean_abs_difference"] or 0.0 for r in rows]
        top = max(ys + [1e-9]) * 1.08
        label = "mean |reproduced - published| (bar: the cells' range)"
    else:
        top = max(len(r["claims"]) for r in rows) or 1
        label = "claims held"
    grid_top = TOP + PLOT_H + 34
    height = grid_top + ROW_H * len(choices) + 44
    width = LEFT + WIDTH + 20

    def y(v: float) -> float:
        return TOP + PLOT_H - PLOT_H * (v / top)

    out = [f'<svg class="speccurve" role="img" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
           'xmlns="http://www.w3.org/2000/svg"><title>specification curve: every reading of the open choices, '
           'sorted by its distance to the paper, and the choices behind each</title>',
           f'<line x1="{LEFT}" x2="{LEFT + WIDTH}" y1="{y(0):.1f}" y2="{y(0):.1f}" stroke="#222"/>',
           f'<text class="tick" x="{LEFT - 6}" y="{y(0) + 4:.1f}" text-anchor="end">'
           f'{"the paper" if by_distance else "0"}</text>',
           f'<text class="tick" x="{LEFT - 6}" y="{y(top) + 4:.1f}" text-anchor="end">{top:.3g}</text>',
           f'<text class="axis-label" x="{LEFT + WIDTH / 2:.1f}" y="{TOP + PLOT_H + 18}" text-anchor="middle">'
           f'{escape(label)}; {n} readings, the main one ringed</text>']
    for i, r in enumerate(rows):
        x = LEFT + step * (i + 0.5)
        colour = NOTABLE if r["table_agrees"] is None else AGREES if r["table_agrees"] else DIFFERS
        if by_distance:
            d = [abs(v) for v in _diffs(r)]
            if d:
                out.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{y(min(d)):.1f}" y2="{y(max(d)):.1f}" '
                           f'stroke="{colour}" stroke-opacity="0.5" stroke-width="3"/>')
            v = r["mean_abs_difference"] or 0.0
        else:
            v = sum(x_ == "held" for x_ in r["claims"].values())
        tip = escape(f"{r['key']}: {r['word']}" + ("" if r["table_p"] is None else f", table p = {r['table_p']:.2g}"))
        ring = ' stroke="#000" stroke-width="2"' if r["key"] == "main" else ""
        out.append(f'<circle cx="{x:.1f}" cy="{y(v):.1f}" r="4" fill="{colour}"{ring}><title>{tip}</title></circle>')
    for j, c in enumerate(choices):
        yy = grid_top + ROW_H * j
        out.append(f'<text x="{LEFT - 6}" y="{yy + 4}" text-anchor="end">{escape(c)}</text>')
        for i, r in enumerate(rows):
            x = LEFT + step * (i + 0.5)
            if c in r["reading"]:
                out.append(f'<rect x="{x - 3.5:.1f}" y="{yy - 3.5}" width="7" height="7" fill="#333">'
                           f'<title>{escape(c)} = {escape(str(r["reading"][c]))}</title></rect>')
            else:
                out.append(f'<circle cx="{x:.1f}" cy="{yy}" r="1.5" fill="#bbb"/>')
    if mvs.get("table"):
        out.append(f'<text x="{LEFT}" y="{height - 24}">green: the reading\'s table agrees with the paper\'s '
                   '(joint test); red: it differs</text>')
    out.append(f'<text x="{LEFT}" y="{height - 8}">a filled square: the choice off its main value in that '
               'reading</text>')
    out.append("</svg>")
    return "\n".join(out)


def _diffs(r: dict) -> list[float]:
    return [float(d) for d in r.get("differences", {}).values() if d is not None]
