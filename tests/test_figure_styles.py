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
    summary = pd.DataFrame([{"cell": c.id, "algorithm": c.algorithm, "label": c.label, "metric": metric, "round": r,
                             "n": 2, "mean": 1.0, "ci": 0.1, "low": 0.9, "high": 1.1}
                            for c in exp.cells for r in range(1, 11)])
    fig = draw(exp, summary, None)
    try:
        lines = {ln.get_label(): ln for ln in fig.axes[0].get_lines()}
        for j, label in enumerate(("mine", "yours")):
            ln = lines[label + ADDED]
            color, marker = added_style(j)
            assert to_rgb(ln.get_color()) == to_rgb(color) and ln.get_marker() == marker
    finally:
        plt.close(fig)
