"""The replication report as a researcher uses it (without a browser; the browser test renders
it): the paper's layout for a models x sizes table, a dot plot of paper against reproduction,
"no published value" kept apart from "not evaluable", the data actually used on a substitute,
stale provenance said, links to each artefact's files, Fig. 7's swept curves told apart by
colour, and no absolute path of the machine in what is written."""
import copy
import json
import os
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from markupsafe import escape

from conftest import ROOT
from rankrepro.report import html as rh
from rankrepro.report.templating import TEMPLATES

YU = ROOT / "results/yu2006/tables.json"
TABLE1 = ROOT / "results/harrington2003/table1.json"


def rec(path):
    return json.loads(Path(path).read_text())


def test_yu_tables_are_laid_out_as_the_papers():
    rows = [r for r in rec(YU)["table"] if r["metric"] == "mae"]
    key, values, models, grid = rh.pivot(rows)
    # Yu et al. Tables 1-2: one row per number of training items, one column per model
    assert key == "n_items" and values == ["100", "200", "300", "400"]
    assert models == ["GPR", "CGPR", "GPOR", "CGPOR"]
    assert grid[("300", "CGPOR")]["cell"] == "cgpor-n_items300"
    page = rh.artefact_section(rec(YU), None)
    first = page.index("<table class=pivot>")
    assert re.search(r"<tr><th>n_items</th><th>GPR</th><th>CGPR</th><th>GPOR</th><th>CGPOR</th></tr>", page[first:])


def test_tables_of_other_shapes_keep_one_row_per_cell():
    rows = [r for r in rec(TABLE1)["table"] if r["metric"] == "test_rank_loss"]
    assert rh.pivot(rows) is None  # PRank has no tau: not a models x values grid


def test_dot_plot_has_each_cell_and_each_published_value():
    rows = [r for r in rec(TABLE1)["table"] if r["metric"] == "test_rank_loss"]
    svg = rh.dot_plot(rows)
    assert svg.startswith("<svg") and svg.count("<circle") == len(rows)
    assert svg.count("<path") == sum(r["published_mean"] is not None for r in rows)  # the diamonds
    assert rh.dot_plot([dict(r, published_mean=None) for r in rows]) == ""  # nothing to compare: no plot


def test_no_published_value_is_not_not_evaluable():
    r = dict(rec(TABLE1)["table"][0], published_mean=None, verdict=None)
    html = rh.artefact_section(dict(rec(TABLE1), table=[r]), None)
    row = re.search(r'<tr data-verdict="none">.*?</tr>', html, re.S).group(0)
    assert "no published value" in row and 'class="ne"' not in row
    assert rh.verdict_class(None) != rh.verdict_class("not evaluable")
    legend = re.search(r"<p class=legend>.*?</p>", rh.render([(rec(TABLE1), None)], "paper", head_commit="x"), re.S)
    assert "no published value" in legend.group(0) and "not evaluable" in legend.group(0)


def test_substitute_is_described_by_the_data_used():
    ds = {"name": "letor3_td2003", "original": False, "used": "letor4-mq2008", "substitute_for": "letor3-td2003",
          "label": "SUBSTITUTE letor4-mq2008 for letor3-td2003: LETOR TD2003 topic distillation (5 folds)"}
    label = rh.data_used_label(ds)
    assert "MQ2008" in label and label.index("MQ2008") < label.index("TD2003")
    assert "topic distillation" not in label  # the original's description is not the data used
    assert rh.data_used_label({"original": True, "label": "synthetic"}) == "synthetic"


def test_display_name_is_the_papers_numbering():
    assert rh.display_name("Harrington (2003) Table 2 and Fig. 3(b): cystic fibrosis") == \
        "Table 2 and Fig. 3(b): cystic fibrosis"
    page = rh.render([(rec(ROOT / "results/harrington2003/table2_cystic_fibrosis.json"), None)], "paper",
                     head_commit="unknown")
    assert "Table 2 and Fig. 3(b): cystic fibrosis</a>" in page and "table2_cystic_fibrosis" in page


def _git(*args):
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True).stdout.strip()


def test_stale_provenance_is_said():
    """A record is stale when the code its numbers come from (its ``code``: module digests and
    numeric libraries' versions) differs from today's; the box names what changed and how to
    rerun.  Today's code is never stale, whatever commit made the record."""
    from rankrepro.pipeline import codeprint

    r = rec(TABLE1)
    mods = ["rankrepro.algorithms.prank", "rankrepro.protocols.online"]
    now = {"modules": {m: codeprint.module_digest(m) for m in mods},
           "libraries": {"numpy": codeprint.library_version("numpy")}}
    r_now = dict(r, code=now, git_commit="0" * 40)
    assert rh.staleness(r_now) is None
    edited = dict(r, code={"modules": dict(now["modules"], **{"rankrepro.algorithms.prank": "0" * 16}),
                           "libraries": {"numpy": "1.0"}})
    text = rh.staleness(edited)
    assert "rankrepro.algorithms.prank" in text and "rankrepro.protocols.online" not in text
    assert f"numpy 1.0 -> {codeprint.library_version('numpy')}" in text
    no_code = {k: v for k, v in r.items() if k not in ("code", "verified")}
    assert "before records kept the code" in rh.staleness(no_code)
    assert rh.staleness({"status": "not run"}) is None  # no numbers, nothing stale
    page = rh.render([(edited, None)], "paper", head_commit="abc")
    assert "stale provenance" in page and "Provenance is stale" in page and "rankrepro.algorithms.prank" in page
    assert "<code>make verify</code> recomputes and compares" in page  # and how to rerun
    assert "stale" not in rh.render([(r_now, None)], "paper", head_commit="abc").split("<main>", 1)[1].split(
        "id=reading")[0]


def test_committed_records_are_todays_code():
    """Every committed reproduction was made or verified by the code of this commit: a change
    to the code that computes a record must come with the record regenerated or verified
    (`rankrepro verify --stale --record`), so the committed report has no stale box."""
    stale = {}
    for path in sorted((ROOT / "results").glob("*/*.json")):
        r = rec(path)
        if (s := rh.staleness(r)) is not None:
            stale[r["name"]] = s
    assert not stale, stale


def test_committed_report_is_made_from_a_clean_tree():
    page = (ROOT / "results/report/index.html").read_text()
    m = re.search(r"Generated from the sources of git commit ([^.<]+)\.", page)
    assert m and re.fullmatch(r"[0-9a-f]{40}", m.group(1)), m and m.group(1)


def test_report_names_the_sources_commit_not_head(tmp_path):
    """The report names the last commit of the sources: committing the outputs (the report
    itself) does not move it, so the report rebuilt from the commit that holds it is the same."""
    import subprocess

    from rankrepro import provenance

    def git(*a):
        return subprocess.run(["git", *a], cwd=tmp_path, check=True, capture_output=True, text=True).stdout.strip()

    git("init", "-q")
    git("config", "user.email", "t@t")
    git("config", "user.name", "t")
    (tmp_path / "src.py").write_text("x = 1\n")
    git("add", "src.py")
    git("commit", "-qm", "sources")
    sources = git("rev-parse", "HEAD")
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "index.html").write_text("report\n")
    git("add", "results")
    git("commit", "-qm", "outputs")
    assert git("rev-parse", "HEAD") != sources
    assert provenance.source_commit(tmp_path) == sources
    (tmp_path / "src.py").write_text("x = 2\n")  # a tracked source edited: the report says so
    assert provenance.source_commit(tmp_path) == sources + "+dirty"


def test_links_to_each_artefacts_files_resolve(tmp_path):
    """As the workflow calls it (relative paths from the repository's root): every link is
    relative and names a file that exists next to the report."""
    import os

    out = tmp_path / "results/report/index.html"
    for sub in ("results/harrington2003", "figures/harrington2003"):
        (tmp_path / sub).mkdir(parents=True)
    for name in ("table2_cystic_fibrosis.json", "table2_cystic_fibrosis.csv", "table2_cystic_fibrosis.md"):
        (tmp_path / "results/harrington2003" / name).write_bytes((ROOT / "results/harrington2003" / name).read_bytes())
    (tmp_path / "results/harrington2003/table2_cystic_fibrosis.config.yaml").write_text("experiment: {}\n")
    # its cells: the report checks them against the hashes the record names
    shutil.copytree(ROOT / "results/harrington2003/table2_cystic_fibrosis/cells",
                    tmp_path / "results/harrington2003/table2_cystic_fibrosis/cells")
    for ext in ("png", "pdf"):
        (tmp_path / f"figures/harrington2003/fig3b.{ext}").write_bytes(
            (ROOT / f"figures/harrington2003/fig3b.{ext}").read_bytes())
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        rh.build_report(["results/harrington2003/table2_cystic_fibrosis.json"],
                        {"harrington2003/fig3b": "figures/harrington2003/fig3b.png"},
                        "results/report/index.html", "paper")
    finally:
        os.chdir(cwd)
    page = out.read_text()
    hrefs = [h for h in re.findall(r'href="([^"#][^"]*)"', page)]
    assert {"../harrington2003/table2_cystic_fibrosis.csv", "../harrington2003/table2_cystic_fibrosis.config.yaml",
            "../../figures/harrington2003/fig3b.png",
            "../../figures/harrington2003/fig3b.pdf"} <= set(hrefs)
    for h in hrefs:
        assert not h.startswith("/") and (out.parent / h).is_file(), h
    assert str(tmp_path) not in page  # no absolute path of this machine
    assert page.count("data:image/png;base64,") == 1  # and the figure is still embedded


def test_committed_outputs_carry_no_absolute_path():
    """No path of the machine that built them (a not-run reason named the data mirror's)."""
    bad = re.compile(r"(?<![\w.:/])/(?:home|work|tmp|root|Users|mnt|srv|opt|scratch|data)/[\w.\-]+")
    found = []
    for p in [*ROOT.glob("results/**/*"), *ROOT.glob("figures/**/*")]:
        if p.suffix in (".json", ".md", ".csv", ".yaml", ".html") and p.is_file():
            found += [f"{p.relative_to(ROOT)}: {m}" for m in set(bad.findall(p.read_text(errors="replace")))]
    assert not found, found[:10]


def test_swept_curves_differ_by_colour():
    """Fig. 7's four Mu-PRank curves: one hue, four clearly different shades."""
    from matplotlib.colors import to_rgb

    from rankrepro.pipeline.catalog import load_experiment
    from rankrepro.report.figures import draw

    exp = load_experiment("crammer_singer2005/fig7_min100", "smoke")
    rounds = np.arange(1, 11)
    summary = pd.DataFrame([{"cell": c.id, "algorithm": c.algorithm, "label": c.label, "metric": "online_rank_loss",
                             "round": r, "n": 2, "mean": 1.0 + 0.01 * i, "ci": 0.1, "low": 0.9, "high": 1.1}
                            for i, c in enumerate(exp.cells) for r in rounds])
    fig = draw(exp, summary, None)
    lines = [ln for ln in fig.axes[1].get_lines() if ln.get_label().startswith("Mu-PRank")]
    assert len(lines) == 4
    cols = np.array([to_rgb(ln.get_color()) for ln in lines])
    d = np.sqrt(((cols[:, None] - cols[None]) ** 2).sum(-1))
    assert d[np.triu_indices(4, 1)].min() > 0.1, d
    import matplotlib.pyplot as plt

    plt.close(fig)


def test_substitute_label_names_the_data_actually_used():
    """A substitute artefact's label starts with the registry title of the data it ran on,
    then the original it stands in for; the configured description comes last, as the
    paper's (it describes TD2003, not MQ2008)."""
    from rankrepro.data.registry import DATASETS
    from rankrepro.report.artefact import substitute_label

    lab = substitute_label("letor4-mq2008", "letor3-td2003", "LETOR TD2003 topic distillation (5 folds)")
    assert lab.startswith(f"SUBSTITUTE {DATASETS['letor4-mq2008'].title} (letor4-mq2008) in place of "
                          f"{DATASETS['letor3-td2003'].title} (letor3-td2003)")
    assert lab.endswith("the paper's data and protocol: LETOR TD2003 topic distillation (5 folds)")


def test_a_diagnosis_shared_by_rows_is_written_once():
    """Harrington Table 1: nine rows share one diagnosis (the training-rounds choice); it is
    written once under the table, naming the rows, and each row points to it."""
    r = rec(TABLE1)
    rows = [t for t in r["table"] if t["metric"] == "test_rank_loss" and t.get("diagnosis")
            and t["verdict"] not in (None, "consistent")]
    text = rows[0]["diagnosis"]["text"]
    assert len(rows) >= 2 and all(t["diagnosis"] == rows[0]["diagnosis"] for t in rows)
    page = rh.artefact_section(r, None)
    assert page.count(escape(text)) == 1
    note = re.search(r'<p class=shareddiag id="([^"]+)">Diagnosis 1, for the (\d+) rows ([^:]+):', page)
    assert note and int(note.group(2)) == len(rows)
    assert all(escape(t["label"]) in note.group(3) for t in rows)
    assert page.count(f'href="#{note.group(1)}"') == len(rows)


def test_header_says_what_was_verified():
    r = dict(rec(TABLE1), verified={"commit": "a" * 40, "date": "2026-11-25", "cells": 37, "identical": 37})
    page = rh.render([(r, None)], "paper", head_commit="b" * 40)
    assert "1 of 1 reproductions verified" in page and "37 of 37 cells" in page and "commit aaaaaaaaaa on 2026-11-25" in page
    unverified = {k: v for k, v in r.items() if k != "verified"}
    assert "reproductions verified" not in rh.render([(unverified, None)], "paper", head_commit="b" * 40)


def _page(scale):
    recs = [(rec(p), None) for p in sorted((ROOT / "results").glob("*/*.json"))]
    return rh.render(recs, scale, head_commit="0" * 40)


def test_a_report_not_at_paper_scale_says_its_verdicts_are_not_evidence():
    page = _page("smoke")
    top = page.index("<main>")
    # at the top, before anything else of the page, and in the scorecard's heading and text
    assert page.index('id="not-evidence"') - top < 400
    assert "Scale smoke: these verdicts are not evidence" in page[:page.index("id=reading")]
    score = page[page.index('<section id="scorecard">'):]
    assert score.startswith('<section id="scorecard"><h2>Scorecard (scale smoke: not evidence)</h2>')
    assert "not evidence" in score[:score.index("class=card")]
    paper = _page("paper")
    assert "not evidence" not in paper and "<h2>Scorecard</h2>" in paper


def test_dot_plot_axis_is_labelled_with_the_metric_and_its_unit_in_readable_text():
    rows = [r for r in rec(TABLE1)["table"] if r["metric"] == "test_rank_loss"]
    svg = rh.dot_plot(rows)
    label = re.search(r'<text class="axis-label"[^>]*>([^<]+)</text>', svg)
    assert label and label.group(1) == "test_rank_loss (ranks, mean |predicted - true|)"
    yu = [r for r in rec(YU)["table"] if r["metric"] == "mae"]
    assert "mae (ranks" in rh.dot_plot(yu)
    assert rh.axis_label("test_ndcg@10") == "test_ndcg@10 (score from 0 to 1)"
    assert rh.axis_label("online_rank_loss", 5000).startswith("online_rank_loss at round 5000 (ranks")
    # the plot's text sizes in the page's style: none below 12px
    sizes = [int(m) for m in re.findall(r"\.dotplot text[^{]*\{font-size:(\d+)px", (TEMPLATES / "report.css").read_text())]
    assert sizes and min(sizes) >= 12
    # the axis label lies inside the drawing, below the tick labels
    h = int(re.search(r'height="(\d+)"', svg).group(1))
    ticks_y = max(float(y) for y in re.findall(r'<text class="tick" x="[^"]+" y="([^"]+)"', svg))
    assert ticks_y < float(re.search(r'class="axis-label" x="[^"]+" y="([^"]+)"', svg).group(1)) < h


#: markup that would run, break out of a double- or single-quoted attribute, or format, if written unescaped
PAYLOAD = "<script>alert(1)</script>\"><img src=x onerror=alert(2)>'><b>bold</b> "


def _poisoned(x):
    """Every text of a record (every string value, keys apart) prefixed with markup."""
    if isinstance(x, dict):
        return {k: _poisoned(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_poisoned(v) for v in x]
    return PAYLOAD + x if isinstance(x, str) else x


class _Page(HTMLParser):
    """The elements (tag, attributes) and the text of a page, as a browser's parser sees them."""

    def __init__(self, page):
        super().__init__(convert_charrefs=True)
        self.elements, self.texts = [], []
        self.feed(page)

    def handle_starttag(self, tag, attrs):
        self.elements.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.texts.append(data)


def test_markup_in_every_text_of_a_record_is_written_as_text():
    """Records whose every text field (titles, labels, verdicts, diagnoses, claims, notes,
    sensitivity, config, versions, provenance; a not-run reason; file links; the scale and
    commit) holds markup: none of it becomes an element or an attribute of the page; it is
    all shown as text."""
    recs = [_poisoned(rec(p)) for p in (TABLE1, YU, ROOT / "results/harrington2003/table2_ohsumed.json",
                                        ROOT / "results/elsas2008/table4_td2003.json")]
    for r, status in zip(recs, ("ran", "ran", "not run", "ran")):
        r["status"] = status  # the status decides which section is written: kept as recorded
    assert rh.pivot([t for t in recs[1]["table"] if t["metric"] == PAYLOAD + "mae"])  # the models x sizes layout too
    files = {r["name"]: [(PAYLOAD + "record", PAYLOAD + "x.json")] for r in recs}
    page = rh.render([(r, None) for r in recs], PAYLOAD + "smoke", files, head_commit=PAYLOAD,
                     kept={recs[0]["name"]: PAYLOAD})
    parsed = _Page(page)
    tags = [t for t, _ in parsed.elements]
    assert tags.count("script") == 1 and "img" not in tags  # the filter's own script; no figure was given
    assert not [(t, a) for t, a in parsed.elements if any(k.startswith("on") or k == "src" for k in a)]
    assert "bold" not in parsed.texts  # no <b>bold</b> made bold
    text = "".join(parsed.texts)
    assert text.count(PAYLOAD) > 200
    r, yu = recs[0], recs[1]
    shown = [r["title"], r["description"], r["notes"][0], r["claims"][0]["text"], r["claims"][0]["evidence"],
             r["table"][0]["label"], r["config"], r["dataset"]["label"], r["sensitivity"][0]["text"],
             next(t["diagnosis"]["text"] for t in r["table"] if t.get("diagnosis")), recs[2]["reason"],
             recs[2]["how_to_obtain"], yu["claims"][0]["text"], PAYLOAD + "record", PAYLOAD + "smoke: "]
    assert all(s in text for s in shown), [s for s in shown if s not in text]
    hrefs = [a["href"] for t, a in parsed.elements if t == "a"]
    assert PAYLOAD + "x.json" in hrefs and f"#{PAYLOAD}harrington2003-{PAYLOAD}table1" in hrefs
    svg = _Page(rh.dot_plot([t for t in r["table"] if t["metric"] == PAYLOAD + "test_rank_loss"]))
    assert {t for t, _ in svg.elements} == {"svg", "title", "line", "text", "g", "circle", "path"}
    assert any(t.startswith(PAYLOAD + "test_rank_loss (ranks") for t in svg.texts) and not any(k.startswith("on") for _, a in svg.elements for k in a)


def test_the_templates_ship_with_the_package():
    """Every file under report/templates/ is package data (pyproject.toml), so that an
    installed package renders the report."""
    import fnmatch
    import tomllib

    globs = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["rankrepro.report"]
    files = [p.relative_to(TEMPLATES.parent).as_posix() for p in TEMPLATES.rglob("*") if p.is_file()]
    assert {"templates/report.html", "templates/artefact.html"} <= set(files)
    assert all(any(fnmatch.fnmatch(f, g) for g in globs) for f in files), files


def test_make_report_rebuilds_the_committed_report_byte_for_byte():
    """`make report` (rankrepro report) on a clean checkout writes exactly the committed report:
    the header names the sources' commit (not HEAD, which committing the report moves), the
    verifications are listed in a fixed order, nothing depends on the machine or the time."""
    from rankrepro import provenance

    if provenance.git_commit(ROOT).endswith("+dirty"):
        pytest.skip("tracked sources are modified: the committed report names a clean commit")
    out = ROOT / "results" / "report" / f".rebuilt-{os.getpid()}.html"  # beside it: the same relative links
    records = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "results").glob("*/*.json"))
    records += sorted(str(p.relative_to(ROOT)) for p in (ROOT / "results").glob("*/comparison/*.json"))
    pngs = {f"{p.parent.name}/{p.stem}": str(p.relative_to(ROOT))
            for p in [*(ROOT / "figures").glob("*/*.png"), *(ROOT / "figures").glob("*/comparison/*.png")]}
    cwd = os.getcwd()
    try:
        os.chdir(ROOT)
        rh.build_report(records, pngs, out.relative_to(ROOT), "paper")
        assert out.read_bytes() == (ROOT / "results/report/index.html").read_bytes()
    finally:
        os.chdir(cwd)
        out.unlink(missing_ok=True)


def test_the_report_uses_the_acm_terms_where_the_reader_meets_the_word():
    """ACM 1.1: on the paper's own data a *replication*; on a substitute, a replication on other
    data: said once at the top, and per artefact by what its data are."""
    recs = [rec(p) for p in sorted((ROOT / "results").glob("*/*.json"))]
    ran = [r for r in recs if r.get("status") == "ran" and r.get("kind") != "comparison" and "dataset" in r]
    page = rh.render([(r, None) for r in ran], "paper", head_commit="0" * 40)
    top = page.split('id="terms"', 1)[1].split("</p>", 1)[0]
    assert "ACM" in top and "version 1.1" in top and "replication on other data" in top
    subs = sum(not r["dataset"]["original"] for r in ran)
    assert subs and page.count("(a replication on other data, ") == subs
    assert page.count("(a replication, ") == len(ran) - subs


def test_headline_counts_over_what_could_be_judged():
    """The report opens with the artefacts reproduced out of those run on the papers' own data
    (the only ones that can earn the word), the others in their own words (issue 59, item 1)."""
    from rankrepro.report.scorecard import is_replication, scorecard

    recs = [json.loads(p.read_text()) for p in sorted((ROOT / "results").glob("*/*.json"))]
    sc = scorecard([r for r in recs if is_replication(r)])
    own, sub = sc.by_data(True), sc.by_data(False)
    page = re.sub(r"<[^>]+>", "", (ROOT / "results/report/index.html").read_text())
    k = sum(a.agreement == "reproduced" for a in own)
    assert f"{k} of {len(own)}artefacts on the papers' own data reproduced" in page
    assert f"{len(sub)} ran on substitute data, where only the claims are judged" in page
    assert f"{len(sc.artefacts) - len(sc.ran)} could not run" in page
    for word in {a.agreement for a in own} - {"reproduced"}:
        assert f"{sum(a.agreement == word for a in own)} {word}" in page


def test_the_papers_own_comparison_comes_first():
    """Harrington's Table 1 (issue 57, item 6): its section opened with 15 rows of the online loss,
    a metric the paper prints no value of, before the test loss the paper's table compares."""
    page = rh.artefact_section(rec(TABLE1), None)
    heads = re.findall(r"<h4>(.*?)</h4>", page)
    metrics = [h.split()[0] for h in heads if h.split()[0] in ("test_rank_loss", "online_rank_loss")]
    assert metrics == ["test_rank_loss", "online_rank_loss"], heads
    online = next(h for h in heads if h.startswith("online_rank_loss"))
    assert "not in the paper" in online and "not in the paper" not in next(h for h in heads if h.startswith("test_"))
