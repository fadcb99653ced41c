"""An added learner's look (issue "A researcher's first hour", item 3): the first learner a user
added was drawn #e6194b with marker "*" beside OAP-BPM's #d62728 "*" (two red stars).  Every
added learner's (colour, marker) now differs from every paper learner's in both colour family
(hue) and marker shape."""
import colorsys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import yaml  # noqa: E402
from matplotlib.colors import to_rgb  # noqa: E402

from conftest import CONFIG_DIR  # noqa: E402
from rankrepro.pipeline.catalog import load_experiment  # noqa: E402
from rankrepro.report.figures import ADDED, added_style, draw  # noqa: E402

#: marker shapes that read as one: a circle and an octagon, the two hexagons, ...
SHAPES = [{"o", "8", "."}, {"h", "H"}, {"d", "D"}, {"x", "X"}, {"+", "P"}, {"s"}, {"*"}, {"^"}, {"v"},
          {"<"}, {">"}, {"p"}]
#: the least hue difference (degrees) that makes two colours two families
MIN_HUE = 24.0


def _shape(m: str) -> frozenset:
    return frozenset(next((s for s in SHAPES if m in s), {m}))


def _walk(node):
    if isinstance(node, dict):
        yield node
        for v in node.values():
            yield from _walk(v)
    elif isinstance(node, list):
        for v in node:
            yield from _walk(v)


def paper_styles() -> tuple[set[str], set[str]]:
    """Every colour and marker a config gives a learner (config/algorithm/, and any an
    experiment sets on its entries)."""
    colors, markers = set(), set()
    for f in list((CONFIG_DIR / "algorithm").glob("*.yaml")) + list((CONFIG_DIR / "experiment").rglob("*.yaml")):
        for d in _walk(yaml.safe_load(f.read_text()) or {}):
            if isinstance(d.get("color"), str):
                colors.add(d["color"])
            if isinstance(d.get("marker"), str):
                markers.add(d["marker"])
    return colors, markers


def _hue(c: str) -> tuple[float, float]:
    h, _, s = colorsys.rgb_to_hls(*to_rgb(c))
    return h * 360.0, s


def _same_family(a: str, b: str) -> bool:
    (ha, sa), (hb, sb) = _hue(a), _hue(b)
    if sa < 0.15 or sb < 0.15:  # a grey is of the greys' family only
        return sa < 0.15 and sb < 0.15
    d = abs(ha - hb) % 360.0
    return min(d, 360.0 - d) < MIN_HUE


def test_every_added_style_differs_from_every_paper_learner_in_colour_family_and_marker():
    colors, markers = paper_styles()
    assert {"#d62728", "#1f77b4"} <= colors and "*" in markers  # OAP-BPM's red star is among them
    pairs = [added_style(j) for j in range(9)]
    assert len(set(pairs)) == 9  # nine learners added to one figure, nine looks
    for color, marker in pairs:
        assert not any(_same_family(color, c) for c in colors), (color, [c for c in colors if _same_family(color, c)])
        assert _shape(marker) not in {_shape(m) for m in markers}, marker
    assert added_style(0) != ("#e6194b", "*")


def test_added_learners_are_drawn_in_those_styles():
    """Two learners added to Crammer & Singer's Fig. 6: each line of theirs has its own style."""
    mine = ['+algorithms.mine={estimator: prank, label: "mine", params: {}}',
            '+algorithms.yours={estimator: mcp, label: "yours", params: {}}']
    exp = load_experiment("crammer_singer2005/fig6", "smoke", config_dir=CONFIG_DIR, overrides=mine)
    import pandas as pd

    metric = exp.cfg.experiment.figure.metric
    # (each cell its own curve: a curve equal to one drawn before is drawn as its twin, figures.same_curve)
    summary = pd.DataFrame([{"cell": c.id, "algorithm": c.algorithm, "label": c.label, "metric": metric, "round": r,
                             "n": 2, "mean": 1.0 + 0.01 * k, "ci": 0.1, "low": 0.9, "high": 1.1}
                            for k, c in enumerate(exp.cells) for r in range(1, 11)])
    fig = draw(exp, summary, None)
    try:
        lines = {ln.get_label(): ln for ln in fig.axes[0].get_lines()}
        for j, label in enumerate(("mine", "yours")):
            ln = lines[label + ADDED]
            color, marker = added_style(j)
            assert to_rgb(ln.get_color()) == to_rgb(color) and ln.get_marker() == marker
    finally:
        plt.close(fig)


def _summary(exp, means):
    import pandas as pd

    metric = exp.cfg.experiment.figure.metric
    return pd.DataFrame([{"cell": c.id, "algorithm": c.algorithm, "label": c.label, "metric": metric, "round": r,
                          "n": exp.n_trials, "mean": means(k, r), "ci": 5.0, "low": means(k, r) - 5.0,
                          "high": means(k, r) + 5.0} for k, c in enumerate(exp.cells) for r in range(1, 11)])


def test_no_band_below_three_trials_and_the_caption_says_so():
    """Smoke scale, 2 trials: t(1) = 12.7 made the bands push a loss near 1 to an axis of 10-14
    (issue 57, item 6); no band is drawn and the title says why. At 3 trials or more, bands."""
    from matplotlib.collections import PolyCollection

    for trials, bands in ((2, False), (3, True)):
        exp = load_experiment("crammer_singer2005/fig6", "smoke", config_dir=CONFIG_DIR,
                              overrides=[f"experiment.n_trials={trials}"])
        exp.n_trials = trials  # (smoke caps trials at 2; the figure reads the count from the experiment)
        fig = draw(exp, _summary(exp, lambda k, r: 1.0 + 0.01 * k), None)
        try:
            polys = [c for c in fig.axes[0].collections if isinstance(c, PolyCollection)]
            assert bool(polys) == bands
            title = fig._suptitle.get_text()
            assert ("no 95% band below 3" in title) != bands, title
            if not bands:
                assert fig.axes[0].get_ylim()[1] < 2
        finally:
            plt.close(fig)


def test_a_curve_equal_to_another_stays_visible_and_is_named():
    """Harrington's Fig. 3(b): voted PRank's online loss is PRank's, and its line hid PRank's."""
    exp = load_experiment("harrington2003/table2_cystic_fibrosis", "smoke", config_dir=CONFIG_DIR)
    exp.n_trials = 5
    prank = next(k for k, c in enumerate(exp.cells) if c.algorithm == "prank")
    voted = next(k for k, c in enumerate(exp.cells) if c.algorithm == "voted_prank")
    fig = draw(exp, _summary(exp, lambda k, r: (1.0 if k in (prank, voted) else 0.5 + 0.01 * k) / r), None)
    try:
        lines = {ln.get_label(): ln for ln in fig.axes[0].get_lines()}
        twin = next(ln for lab, ln in lines.items() if lab.startswith("voted PRank"))
        assert "same curve as PRank" in twin.get_label()
        first = lines["PRank"]
        assert twin.get_zorder() > first.get_zorder() and twin.get_linestyle() == ":"
        assert twin.get_linewidth() < first.get_linewidth() and twin.get_markevery() != first.get_markevery()
    finally:
        plt.close(fig)


def test_a_long_legend_goes_beside_the_panel():
    """figures/arena/online_eachmovie.png: ten learners' legend covered the curves."""
    exp = load_experiment("arena/online_eachmovie", "smoke", config_dir=CONFIG_DIR)
    fig = draw(exp, _summary(exp, lambda k, r: 1.0 + 0.05 * k), None)
    try:
        ax = fig.axes[0]
        assert len(ax.get_legend_handles_labels()[1]) > 6
        fig.canvas.draw()
        leg, box = ax.get_legend().get_window_extent(), ax.get_window_extent()
        assert leg.x0 >= box.x1  # entirely right of the axes
    finally:
        plt.close(fig)
