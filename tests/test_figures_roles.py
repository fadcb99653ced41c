"""Every learner drawn (issue 42, item 2): a figure's panels draw the paper's learners (those
their selectors name) and everything added (the experiment's other learners: one's own added
by an override, or one run for a table that the paper's figure leaves out), the added ones in
a style of their own and labelled so in the legend; a figure made at a scale other than the
paper's says so in the figure; a long panel title is wrapped, not clipped (issue 42, item 8).

The figures are drawn from made-up summary tables (no cell runs): what is checked is what the
Figure holds, its lines, legends and texts."""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from matplotlib.colors import to_rgb  # noqa: E402

from conftest import CONFIG_DIR  # noqa: E402
from rankrepro.pipeline.catalog import load_experiment  # noqa: E402
from rankrepro.report.arena import draw_cd  # noqa: E402
from rankrepro.report.figures import ADDED, draw  # noqa: E402

#: the command line or the workflow end to end over minutes: `make test-long` (run by CI), not `make test`
pytestmark = pytest.mark.long

MINE = '+algorithms.mine={estimator: prank, label: "my learner", params: {}}'
NOTE = "not the paper's protocol"


def summary_of(exp, metric=None, rounds=10):
    """A summary table with a curve for every cell of ``exp`` (each its own level)."""
    metric = metric or exp.cfg.experiment.figure.metric
    return pd.DataFrame([{"cell": c.id, "algorithm": c.algorithm, "label": c.label, "metric": metric, "round": r,
                          "n": 2, "mean": 1.0 + 0.01 * i, "ci": 0.1, "low": 0.9 + 0.01 * i, "high": 1.1 + 0.01 * i}
                         for i, c in enumerate(exp.cells) for r in range(1, rounds + 1)])


def legend_labels(ax) -> list[str]:
    return [t.get_text() for t in ax.get_legend().get_texts()]


def texts(fig) -> list[str]:
    return [t.get_text() for t in fig.texts] + [fig._suptitle.get_text() if fig._suptitle else ""]


@pytest.fixture
def closing():
    figs = []
    yield figs.append
    for f in figs:
        plt.close(f)


@pytest.mark.parametrize("name", ["crammer_singer2005/fig6", "arena/online_synthetic"])
def test_a_learner_added_by_an_override_is_drawn_apart_and_in_the_legend(name, closing):
    """fig6 names PRank, Si-PRank, MCP and WH; the arena's panel names its ten learners by
    setting.  A learner added to either is drawn in every panel, dashed, in a colour no
    learner of the paper's has, and its legend entry says it was added."""
    exp = load_experiment(name, "smoke", config_dir=CONFIG_DIR, overrides=[MINE])
    fig = draw(exp, summary_of(exp), None)
    closing(fig)
    for ax in fig.axes:
        labels = legend_labels(ax)
        assert f"my learner{ADDED}" in labels, labels
        lines = {ln.get_label(): ln for ln in ax.get_lines()}
        mine = lines[f"my learner{ADDED}"]
        theirs = [ln for lab, ln in lines.items() if not lab.endswith(ADDED)]
        assert theirs and all(not lab.startswith("my learner") for lab in lines if lab != f"my learner{ADDED}")
        assert mine.get_linestyle() == "--" and mine.get_markerfacecolor() in ("white", "w", (1, 1, 1, 1))
        assert all(np.linalg.norm(np.subtract(to_rgb(mine.get_color()), to_rgb(ln.get_color()))) > 0.1
                   for ln in theirs)
        # the paper's learners are drawn as before the addition
        plain = load_experiment(name, "smoke", config_dir=CONFIG_DIR)
        before = draw(plain, summary_of(plain), None)
        closing(before)
        assert [lab for lab in labels if lab != f"my learner{ADDED}"] == legend_labels(before.axes[0])


def test_the_experiments_own_learner_the_paper_does_not_draw_is_drawn_as_added(closing):
    """Harrington's Table 2 runs voted PRank; his Fig. 3 draws PRank, WH and the three OAP
    ensembles only.  The figure draws voted PRank too, marked as added (it was left out before)."""
    exp = load_experiment("harrington2003/table2_cystic_fibrosis", "smoke", config_dir=CONFIG_DIR)
    fig = draw(exp, summary_of(exp), None)
    closing(fig)
    labels = legend_labels(fig.axes[0])
    voted = [c.label for c in exp.cells if c.algorithm == "voted_prank"]
    assert voted and all(f"{lab}{ADDED}" in labels for lab in voted)
    assert sum(lab.endswith(ADDED) for lab in labels) == len(voted)


def test_a_smoke_figure_is_marked_and_a_paper_figure_is_not(closing):
    smoke = load_experiment("crammer_singer2005/fig6", "smoke", config_dir=CONFIG_DIR)
    paper = load_experiment("crammer_singer2005/fig6", "paper", config_dir=CONFIG_DIR)
    f_smoke, f_paper = draw(smoke, summary_of(smoke), None), draw(paper, summary_of(paper), None)
    closing(f_smoke)
    closing(f_paper)
    marks = [t for t in f_smoke.texts if t.get_gid() == "scale-note"]
    assert len(marks) == 1 and marks[0].get_text().startswith("smoke scale") and NOTE in marks[0].get_text()
    assert marks[0].get_visible() and marks[0].get_color() != "white"
    assert not any(NOTE in t for t in texts(f_paper))
    # the note lies inside the figure and below every axes (nothing drawn over it)
    f_smoke.canvas.draw()
    box = marks[0].get_window_extent()
    fb = f_smoke.bbox
    assert fb.x0 <= box.x0 and box.x1 <= fb.x1 and fb.y0 <= box.y0
    assert all(box.y1 <= ax.get_tightbbox().y0 + 1 for ax in f_smoke.axes)


def _cd_record(scale):
    """A comparison record of three learners on four data sets, as compare() writes it."""
    labels = ["A", "B", "C"]
    return {"title": "a family", "blocks": "dataset", "metric": "online_rank_loss", "scale": scale,
            "learners": [{"label": lab, "avg_rank": r} for lab, r in zip(labels, (1.25, 2.0, 2.75))],
            "nemenyi": {"cd": 1.66}, "groups": [["A", "B"], ["B", "C"]],
            "friedman": {"n": 4, "p_chi2": 0.2, "p_F": 0.2}}


def test_the_smoke_critical_difference_diagram_is_marked(closing):
    smoke, paper = draw_cd(_cd_record("smoke")), draw_cd(_cd_record("paper"))
    closing(smoke)
    closing(paper)
    assert [t.get_text() for t in smoke.texts if t.get_gid() == "scale-note"] == [f"smoke scale \u2014 {NOTE}"]
    assert not any(NOTE in t.get_text() for t in paper.texts)


def test_a_long_panel_title_fits_in_the_figure(closing):
    """Shivaswamy & Joachims Figs. 2-3: the panel titles (89 and 110 characters) ran past both edges."""
    for name in ("shivaswamy2012/fig2", "shivaswamy2012/fig3"):
        exp = load_experiment(name, "paper", config_dir=CONFIG_DIR)
        fig = draw(exp, summary_of(exp), None)
        closing(fig)
        fig.canvas.draw()
        for ax, panel in zip(fig.axes, exp.cfg.experiment.figure.panels):
            title = ax.title
            assert title.get_text().replace("\n", " ") == panel.title  # the whole title, wrapped
            box = title.get_window_extent()
            assert fig.bbox.x0 <= box.x0 and box.x1 <= fig.bbox.x1, (name, box, fig.bbox)
            sup = fig._suptitle.get_window_extent()
            assert box.y1 <= sup.y0 + 1  # under the figure's title, not over it
