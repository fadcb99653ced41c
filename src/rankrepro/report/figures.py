"""Figures drawn as in the papers: a metric against training rounds, one curve per
algorithm, the mean over trials with its 95% interval as a band (no band below
:data:`MIN_BAND_TRIALS` trials, as the caption says; a curve equal to another drawn dotted on
top of it and named so; a long legend beside the panel)."""

from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
from omegaconf import OmegaConf  # noqa: E402

from ..files import read_json
from ..pipeline.cells import Experiment  # noqa: E402
from ..files import atomic_write  # noqa: E402
from ..protocols import PROTOCOLS  # noqa: E402
from .aggregate import resolve  # noqa: E402
from .artefact import dataset_label  # noqa: E402
from .html import data_used_label  # noqa: E402
from .scale_mark import mark_scale  # noqa: E402

_LINESTYLES = ["-", "--", "-.", ":"]


def shades(color: str, n: int) -> list[tuple[float, float, float]]:
    """``n`` colours of one hue, from dark to light: the cells of one swept algorithm (Fig. 7's
    four Mu-PRank step sizes) stay one family and are still told apart by colour, not only by
    marker and line style.  One cell keeps the algorithm's own colour."""
    import colorsys

    from matplotlib.colors import to_rgb

    if n <= 1:
        return [to_rgb(color)]
    h, l, s = colorsys.rgb_to_hls(*to_rgb(color))
    s = max(s, 0.45)
    return [colorsys.hls_to_rgb(h, 0.22 + 0.5 * i / (n - 1), s) for i in range(n)]
_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "h")
#: characters of a panel title per line at fontsize 10 across one 6.4-inch panel
_PANEL_TITLE_CHARS = 62


#: what a learner the paper's figure does not draw looks like beside the paper's learners: a
#: colour and marker of its own (unless its entry gives them, :func:`added_style`), a dashed
#: line and hollow markers, and ``ADDED`` after its label in the legend
ADDED = " (added)"
#: the added learners' colours: hues the paper learners' colours (config/algorithm/, the tab10
#: palette) leave free, at least 24 degrees from each (lime 85, jade 153, indigo 240), none grey
_ADDED_COLORS = ("#5da000", "#00a058", "#2828c8")
#: the added learners' markers: shapes no paper learner's marker has (pentagon, triangles left
#: and right; not "8" or "H", which read as the papers' "o" and "h")
_ADDED_MARKERS = ("p", "<", ">")
#: a paper learner whose config gives no colour
_PAPER_FALLBACK_COLOR = "#444444"


def added_style(j: int) -> tuple[str, str]:
    """(colour, marker) of the ``j``-th added learner of a figure: the nine pairs of the three
    added colours and three added markers, each differing from the paper learners' in both
    colour family and marker, in an order that changes both from one learner to the next.

    >>> added_style(0), added_style(1), added_style(3)
    (('#5da000', 'p'), ('#00a058', '<'), ('#5da000', '<'))
    """
    n = len(_ADDED_COLORS)
    return _ADDED_COLORS[j % n], _ADDED_MARKERS[(j + j // n) % len(_ADDED_MARKERS)]


def named_algorithms(exp: Experiment) -> set[str]:
    """The paper's learners: the algorithms the figure's panels name in their selectors.  A
    panel without selectors draws every cell and names none."""
    named: set[str] = set()
    for panel in exp.cfg.experiment.figure.panels or []:
        for sel in panel.select or []:
            a = sel.get("algorithm")
            if a is not None:
                named.update([a] if isinstance(a, str) else [str(x) for x in a])
    return named


def added_algorithms(exp: Experiment) -> list[str]:
    """Everything added: the experiment's algorithms that no panel names (a learner of one's
    own added with ``+algorithms.<key>=...``, or one the experiment runs for a table that the
    paper's figure does not draw), in the config's order.  Each is drawn in every panel that
    names algorithms, in the style of :data:`ADDED`.  Empty when no panel names any algorithm
    (every panel then draws every cell)."""
    named = named_algorithms(exp)
    if not named:
        return []
    return [str(a) for a in exp.cfg.algorithms if str(a) not in named]


#: below this many trials no interval band is drawn: with 2 trials the 95% Student-t half-width is
#: 12.7 standard errors (t with 1 degree of freedom), a band that swamps the axis (the caption says so)
MIN_BAND_TRIALS = 3
#: more legend entries than this go beside the panel, not over the curves
_LEGEND_INSIDE = 6


def same_curve(x, y, drawn: list[tuple[str, object, object]]) -> str | None:
    """The label of a curve already drawn in the panel that this one coincides with (same rounds,
    means equal to 1e-12): PRank and voted PRank's online losses are one curve (voted PRank
    predicts online as PRank does), and the second would hide the first."""
    import numpy as np

    for label, x0, y0 in drawn:
        if len(x0) == len(x) and np.array_equal(x0, x) and np.allclose(y0, y, rtol=0, atol=1e-12):
            return label
    return None


def draw(exp: Experiment, summary: pd.DataFrame, data: dict | None = None):
    """The figure of ``exp`` from its summary table (the aggregated curves).  Each panel draws
    the cells its selectors pick (the paper's learners, in their configured style), then every
    cell of each learner no panel names (:func:`added_algorithms`: drawn dashed, with hollow
    markers and a colour of its own, labelled ``(added)``).  At a scale other than the paper's
    the figure is marked so (:func:`mark_scale`).  ``data``: the artefact record's dataset
    entry (says whether a substitute was used).  Returns the matplotlib Figure."""
    fig_cfg = exp.cfg.experiment.figure
    panels = list(fig_cfg.panels) or [OmegaConf.create({"title": "", "select": []})]
    added = added_algorithms(exp)
    band = exp.n_trials >= MIN_BAND_TRIALS
    fig, axes = plt.subplots(1, len(panels), figsize=(6.4 * len(panels), 4.6), squeeze=False)
    outside = False
    for ax, panel in zip(axes[0], panels):
        metric = panel.get("metric") or fig_cfg.metric
        sels = [OmegaConf.to_container(s) for s in panel.select] or [{}]
        cells = []
        for sel in sels:
            for c in resolve(exp.cells, sel, summary, metric):
                if c not in cells:
                    cells.append(c)
        if panel.select:  # everything added, beside the paper's learners
            cells += [c for c in exp.cells if c.algorithm in added and c not in cells]
        per_alg: dict[str, int] = {}
        n_alg = {a: sum(c.algorithm == a for c in cells) for a in {c.algorithm for c in cells}}
        drawn: list[tuple[str, object, object]] = []
        for c in cells:
            s = summary[(summary["cell"] == c.id) & (summary["metric"] == metric)].sort_values("round")
            if s.empty:
                continue
            a = exp.cfg.algorithms[c.algorithm]
            i = per_alg.get(c.algorithm, 0)
            per_alg[c.algorithm] = i + 1
            x = s["round"].astype(float).to_numpy()
            y = s["mean"].to_numpy(dtype=float)
            step = max(1, len(x) // 10)
            # a curve equal to one drawn before: on top, thinner and dotted, its markers between the
            # other's, and said in its label, so that both stay visible
            twin = same_curve(x, y, drawn)
            over = dict(linestyle=":", linewidth=1.4, markevery=(step // 2, step), zorder=3) if twin else {}
            note = f", same curve as {twin}" if twin else ""
            if c.algorithm in added:
                color, base = added_style(added.index(c.algorithm))
                color, base = a.get("color") or color, a.get("marker") or base
                marker = base if not i else [m for m in _MARKERS if m != base][(i - 1) % (len(_MARKERS) - 1)]
                style = dict(linestyle=(0, (6, 2, 1, 2)) if i else "--", markevery=step, linewidth=2.0)
                line, = ax.plot(x, y, label=c.label + (ADDED[:-1] + note + ")" if note else ADDED),
                                color=shades(color, n_alg[c.algorithm])[i], marker=marker, markerfacecolor="white",
                                markersize=6, gid=f"added:{c.id}", **{**style, **over})
            else:
                # the cells of one algorithm (a swept value each) share its colour; line style and
                # marker tell them apart
                marker = a.marker if not i else [m for m in _MARKERS if m != a.marker][(i - 1) % (len(_MARKERS) - 1)]
                style = dict(linestyle=_LINESTYLES[i % len(_LINESTYLES)] if i else a.linestyle, markevery=step,
                             linewidth=1.6)
                line, = ax.plot(x, y, label=c.label + (f" ({note[2:]})" if note else ""),
                                color=shades(a.color or _PAPER_FALLBACK_COLOR, n_alg[c.algorithm])[i],
                                marker=marker, markersize=5, **{**style, **over})
            drawn.append((c.label, x, y))
            if band:  # below MIN_BAND_TRIALS trials the band is omitted, and the caption says so
                ax.fill_between(x, s["low"], s["high"], color=line.get_color(), alpha=0.18, linewidth=0)
        ax.set_xscale(fig_cfg.xscale)
        ax.set_xlabel(fig_cfg.xlabel)
        ax.set_ylabel(panel.get("ylabel") or fig_cfg.ylabel)
        if fig_cfg.ylim is not None:
            ax.set_ylim(*fig_cfg.ylim)
        elif metric.endswith("rank_loss"):
            ax.set_ylim(bottom=0)  # a loss is never negative; a wide band must not suggest it
        ax.grid(True, which="major", alpha=0.3)
        # wrapped to the panel's width (a long title was clipped at the figure's edges)
        ax.set_title(textwrap.fill(panel.title, _PANEL_TITLE_CHARS), fontsize=10)
        if len(ax.get_legend_handles_labels()[1]) > _LEGEND_INSIDE:  # beside the panel, off the curves
            ax.legend(fontsize=8, frameon=False, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
            outside = True
        else:
            ax.legend(fontsize=8, frameon=False)
    original = exp.cfg.dataset.original if data is None else data["original"]
    # a substitute is named by the data actually used, not by the original's description
    label = dataset_label(exp) if data is None else data_used_label(data)
    sub = "" if original else f"\n{label}"
    unit = PROTOCOLS[exp.cfg.experiment.protocol].unit
    if band:
        shown = "mean and 95% interval"
    elif exp.n_trials < 2:  # one run: no interval to draw
        shown = "one run, no interval"
    else:
        shown = (f"mean; no 95% band below {MIN_BAND_TRIALS} {unit} (with {exp.n_trials}, t = "
                 f"{_t975(exp.n_trials):.3g} half-widths would swamp the axis)")
    title = (f"{exp.cfg.experiment.title}{sub}\n{exp.n_trials} {unit}, {shown}"
             + ("" if exp.scale == "paper" else f" [scale: {exp.scale}]"))
    width = 75 * len(panels)  # characters that fit across the figure at this font size
    title = "\n".join(textwrap.fill(line, width) for line in title.split("\n"))
    fig.suptitle(title, fontsize=10)
    if outside:  # room for the legends beside the panels
        fig.set_size_inches(fig.get_size_inches()[0] + 2.4 * len(panels), fig.get_size_inches()[1])
    fig.tight_layout()
    mark_scale(fig, exp.scale)
    return fig


def _t975(n: int) -> float:
    """The 95% Student-t quantile a band of ``n`` trials would use (inf for one trial)."""
    from scipy import stats

    return float(stats.t.ppf(0.975, n - 1)) if n >= 2 else float("inf")


def build_figure(exp: Experiment, summary_csv: str | os.PathLike, out_png: str | os.PathLike,
                 out_pdf: str | os.PathLike, record_json: str | os.PathLike | None = None) -> None:
    summary = pd.read_csv(summary_csv)
    summary["round"] = summary["round"].astype("Int64")
    data = read_json(record_json, "record")["dataset"] if record_json else None
    fig = draw(exp, summary, data)
    try:
        atomic_write(out_png, lambda tmp: fig.savefig(tmp, format="png", dpi=150, metadata={"Software": None}))
        atomic_write(out_pdf, lambda tmp: fig.savefig(tmp, format="pdf",
                                                      metadata={"CreationDate": None, "Creator": None,
                                                                "Producer": None}))
    finally:
        plt.close(fig)
    if record_json:  # the record names the figure's files by their hashes (issue 58): a swapped one is refused
        from ..pipeline.integrity import record_figures

        record_figures(record_json, [out_png, out_pdf])
