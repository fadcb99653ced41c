"""The replication articles (results/<paper>/article.md, article.html, metadata.yaml): the [Re] /
[¬Re] rule on constructed records, the numbers of a generated article against its records
(recomputed here from the JSON, not through the report's code), the committed articles against
what the records give now, and ReScience C's metadata fields."""
from __future__ import annotations

import json
import math
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
import yaml

from rankrepro.report.article import RULE, TODO, metadata, outputs, papers, render_article, title_mark
from rankrepro.report.scorecard import artefact_score

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "results"
PAPERS = ("crammer_singer2005", "elsas2008", "harrington2003", "shivaswamy2012", "yu2006")


def record(cells=(), claims=(), original=True, status="ran", name="p2000/a"):
    """A minimal record: table rows with these verdicts, claims with these verdicts ("trivial held"
    for a trivial claim)."""
    return {"name": name, "paper": name.split("/")[0], "artefact": name.split("/")[1], "title": "P (2000) Table 1: x",
            "status": status, "dataset": {"original": original},
            "table": [{"verdict": v} for v in cells],
            "claims": [{"verdict": v.replace("trivial ", ""), "trivial": v.startswith("trivial")} for v in claims]}


def mark(*recs):
    return title_mark([artefact_score(r) for r in recs]).mark


def test_rule_at_least_half_of_cells_and_of_decided_claims():
    assert mark(record(["consistent", "differs"], ["held", "not held"])) == "[Re]"  # exactly half each
    assert mark(record(["consistent", "differs", "differs"], ["held"])) == "[¬Re]"  # 1/3 of the cells
    assert mark(record(["consistent"], ["held", "not held", "not held"])) == "[¬Re]"  # 1/3 of the decided claims
    # summed over the paper's artefacts: 2 of 4 cells, 2 of 3 claims
    assert mark(record(["consistent", "consistent"], ["not held"], name="p2000/a"),
                record(["differs", "differs"], ["held", "held"], name="p2000/b")) == "[Re]"


def test_rule_inconclusive_claims_make_an_undecided_part():
    # 1 held, 1 not held, 1 inconclusive: decided 2, half held: supports
    assert mark(record(["consistent"], ["held", "inconclusive", "not held"])) == "[Re]"
    # more inconclusive than decided: the claims are undecided, and so is the mark
    assert mark(record(["consistent"], ["held", "inconclusive", "inconclusive"])) == "[Re?]"
    # a refuting part decides whatever the other part says
    assert mark(record(["differs", "differs"], ["inconclusive", "inconclusive"])) == "[¬Re]"
    assert mark(record([None], ["inconclusive"])) == "[Re?]"


def test_rule_counts_only_what_can_be_counted():
    # substitute data only: published values are references, the claims decide, and the mark says so
    m = title_mark([artefact_score(record(["reference"] * 5, ["held", "held", "not held"], original=False))])
    assert (m.mark, m.other_data, m.label) == ("[Re]", True, "[Re] on other data")
    assert mark(record(["reference"] * 5, ["held", "not held", "not held"], original=False)) == "[¬Re]"
    # with artefacts on the paper's own data, those on other data do not count
    assert mark(record(["consistent"], ["held"]),
                record(["reference"], ["not held", "not held"], original=False, name="p2000/b")) == "[Re]"
    # no claim: the cells decide; no published value: the claims decide
    assert mark(record(["consistent", None, None])) == "[Re]"
    # trivial and not evaluable claims apart
    assert mark(record(["consistent"], ["trivial not held", "not evaluable", "not evaluable", "held"])) == "[Re]"
    # an artefact not run counts for nothing; nothing to count at all is undecided
    assert mark(record(status="not run"), record(["consistent"], name="p2000/b")) == "[Re]"
    assert mark(record(status="not run")) == "[Re?]"
    assert mark(record([None], [])) == "[Re?]"
    m = title_mark([artefact_score(record(["consistent", "differs", "reference"], ["held", "not evaluable", "trivial held"]))])
    assert (m.consistent, m.judged, m.held, m.evaluable) == (1, 2, 1, 1)


def _records(paper: str, root: Path = RESULTS) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted((root / paper).glob("*.json"))]


def test_papers_are_the_five():
    assert tuple(papers(RESULTS)) == PAPERS


@pytest.mark.parametrize("paper", PAPERS)
def test_title_and_counts_from_the_records(paper):
    """The title's mark and the abstract's counts, recomputed from the JSON by hand (the rule of
    docs/reproducibility.md: the paper's own data where any artefact ran on it, else other data)."""
    ran = [r for r in _records(paper) if r["status"] == "ran"]
    own = [r for r in ran if r["dataset"]["original"]]
    recs = own or ran
    cells = [t["verdict"] for r in recs for t in r["table"]]
    claims = [c["verdict"] for r in recs for c in r["claims"] if not c.get("trivial")]
    judged = cells.count("consistent") + cells.count("differs")
    evaluable = len(claims) - claims.count("not evaluable")
    held, not_held, inconclusive = claims.count("held"), claims.count("not held"), claims.count("inconclusive")
    parts = []
    if judged:
        parts.append("s" if 2 * cells.count("consistent") >= judged else "r")
    if evaluable:
        parts.append("u" if inconclusive > held + not_held else "s" if 2 * held >= held + not_held else "r")
    mark = "[¬Re]" if "r" in parts else "[Re]" if parts and set(parts) == {"s"} else "[Re?]"
    text = render_article(paper)
    assert text.startswith(f"# {mark} ")
    assert text.splitlines()[0].endswith("(on other data)") == (not own)
    if judged:
        assert f"{cells.count('consistent')} of {judged} published cells judged" in text
    if evaluable:
        assert f"{held} held, {not_held} did not and {inconclusive} {'was' if inconclusive == 1 else 'were'} " \
            "inconclusive" in text
    assert RULE in text


ROW = re.compile(r"^\| (?P<label>[^|]+) \| (?P<mean>[-\d.]+) ± (?P<ci>[-\d.]+) \| (?P<pub>[^|]+) \| (?P<diff>[^|]+) \| "
                 r"(?P<verdict>[^|]+) \| (?P<eq>[^|]+) \|$")


@pytest.mark.parametrize("paper", PAPERS)
def test_every_table_number_is_in_the_record(paper):
    """Each row of the Results tables: its reproduced mean and interval, published value and
    difference are the record's row's (to the three decimals printed)."""
    recs = {r["title"]: r for r in _records(paper)}
    text = render_article(paper)
    results = text[text.index("\n## Results"):text.index("\n## Discussion")]
    rec, metric, seen = None, None, 0
    for line in results.splitlines():
        if line.startswith("### "):
            rec = next((r for t, r in recs.items() if t.endswith(line[4:])), None)
        elif line.startswith("**") and line.endswith(("**", ")")) and rec is not None:
            metric = line[2:].split("**")[0]
        elif (m := ROW.match(line)) and rec is not None:
            rows = [t for t in rec["table"] if t["metric"] == metric and t["label"] == m["label"]]
            assert len(rows) == 1, line
            t = rows[0]
            assert abs(float(m["mean"]) - t["mean"]) <= 5e-4 + 1e-12 and abs(float(m["ci"]) - t["ci"]) <= 5e-4 + 1e-12, line
            nums = [float(x) for x in re.findall(r"[-+]?\d+\.\d+", m["pub"] + " " + m["diff"])]
            want = [v for v in (t["published_mean"], t["published_ci"], t["difference"]) if v is not None]
            if t.get("difference_ci"):
                want += [t["difference_low"], t["difference_high"]]
            assert len(nums) == len(want) and all(abs(a - b) <= 5e-4 + 1e-12 for a, b in zip(nums, want)), line
            assert m["verdict"] == (t["verdict"] or "-") and m["eq"] == (t.get("equivalence") or "-"), line
            seen += 1
    assert seen >= sum(1 for r in recs.values() if r["status"] == "ran")


@pytest.mark.parametrize("paper", PAPERS)
def test_pooled_rmse_is_the_records(paper):
    """The paper's pooled RMSE lines: sqrt of the cell-weighted mean of the artefacts' squared RMSEs."""
    text = render_article(paper)
    pooled: dict[tuple[bool, str], list] = {}
    for r in _records(paper):
        rep = r.get("reproducibility") if r["status"] == "ran" else None
        if rep and (rep["rmse"] or rep["effects"] or rep["kendall_tau"]):
            for x in rep["rmse"]:
                pooled.setdefault((r["dataset"]["original"], x["metric"]), []).append((x["rmse"], x["cells"]))
    for (orig, metric), parts in pooled.items():
        n = sum(c for _, c in parts)
        rmse = math.sqrt(sum(e * e * c for e, c in parts) / n)
        kind = "own data" if orig else "substitute data"
        line = next(ln for ln in text.splitlines() if ln.startswith(f"- {kind}: "))
        assert f"RMSE {metric} {rmse:.4f} over {n} cells" in line


@pytest.mark.parametrize("paper", PAPERS)
def test_every_disagreement_is_discussed(paper):
    text = render_article(paper)
    disc = text[text.index("\n## Discussion"):]
    for r in _records(paper):
        for t in r["table"]:
            if t["verdict"] == "differs":
                assert f", {t['label']} ({t['metric']}): reproduced {t['mean']:.3f}, published {t['published_mean']:.3f}" in disc
        for c in r["claims"]:
            if c["verdict"] == "not held":
                assert f"claim *{c['text']}*: not held" in disc.replace("&lt;", "<")
    for part in ("### What was easy", "### What was difficult", "### Communication with the original authors"):
        assert part in disc


def test_committed_articles_are_what_the_records_give():
    """Byte for byte: python scripts/results_doc.py (make report) writes them."""
    out = outputs(RESULTS)
    assert {p.relative_to(RESULTS).as_posix() for p in out} == {
        f"{p}/{f}" for p in PAPERS for f in ("article.md", "article.html", "metadata.yaml")}
    for path, text in out.items():
        assert path.is_file(), f"{path} missing: run python scripts/results_doc.py"
        assert path.read_text() == text, f"{path} differs from the records: run python scripts/results_doc.py"


@pytest.mark.parametrize("paper", PAPERS)
def test_metadata_has_rescience_fields(paper):
    meta = yaml.safe_load((RESULTS / paper / "metadata.yaml").read_text())
    for key in ("title", "authors", "affiliations", "contact", "keywords", "code", "data", "replication",
                "abstract", "type", "domain", "language"):
        assert meta.get(key), key
    assert meta["type"] == "Replication" and meta["language"] == "Python"
    assert meta["title"] == (RESULTS / paper / "article.md").read_text().splitlines()[0][2:]
    assert re.match(r"\[(Re|¬Re|Re\?)\] ", meta["title"])
    # what only a person can fill is marked, never invented
    assert all(v.startswith(TODO) for a in meta["authors"] for v in (a["name"], a["orcid"], a["email"]))
    assert meta["code"][0]["url"].startswith(TODO) and meta["code"][1]["doi"].startswith(TODO)
    cite = meta["replication"][0]["cite"]
    first = (RESULTS / paper / "article.md").read_text().split("**Original article**: ")[1].splitlines()[0]
    assert cite == first.replace("*", "")
    assert meta == metadata(paper)


class _Page(HTMLParser):
    def __init__(self):
        super().__init__()
        self.imgs, self.links, self.title, self._in_title, self.h1 = [], [], "", False, ""
        self._in_h1 = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "img":
            self.imgs.append(a["src"])
        self._in_title |= tag == "title"
        self._in_h1 |= tag == "h1"

    def handle_endtag(self, tag):
        self._in_title &= tag != "title"
        self._in_h1 &= tag != "h1"

    def handle_data(self, data):
        if self._in_title:
            self.title += data
        if self._in_h1:
            self.h1 += data


@pytest.mark.parametrize("paper", PAPERS)
def test_html_is_self_contained(paper):
    page = _Page()
    page.feed((RESULTS / paper / "article.html").read_text())
    md = (RESULTS / paper / "article.md").read_text()
    assert page.title == page.h1 == md.splitlines()[0][2:]
    assert len(page.imgs) == md.count("![")
    assert all(src.startswith("data:image/png;base64,") for src in page.imgs)


def test_a_changed_record_changes_the_title(tmp_path):
    """Turn every judged cell of a paper consistent and every claim held: the mark follows."""
    paper = "harrington2003"
    (tmp_path / "results" / paper).mkdir(parents=True)
    for p in (RESULTS / paper).glob("*.json"):
        r = json.loads(p.read_text())
        for t in r.get("table", []):
            if t["verdict"] == "differs":
                t["verdict"] = "consistent"
        for c in r.get("claims", []):
            if c["verdict"] in ("not held", "inconclusive"):
                c["verdict"] = "held"
        (tmp_path / "results" / paper / p.name).write_text(json.dumps(r))
    before = render_article(paper)
    after = render_article(paper, tmp_path / "results")
    assert after.startswith("# [Re] ")
    assert before.startswith("# [¬Re] ")  # the committed records: fewer than half of the cells consistent


def test_free_text_cannot_make_blocks_images_or_fetches(tmp_path):
    """Issue 58, item 4: a Markdown image in a note or description (an absolute path, ``../``
    out of figures/, a URL) is never inlined nor kept as an image; a blank line and ``## ...``
    in a note make no heading (nor a fake verdict line); a CITATION.cff title reaches
    article.md escaped.  Only the pipeline's figures (figures/<paper>/*.png) are inlined."""
    from rankrepro.report.article import to_html

    paper = "harrington2003"
    res = tmp_path / "checkout" / "results" / paper
    res.mkdir(parents=True)
    figs = tmp_path / "checkout" / "figures" / paper
    figs.mkdir(parents=True)
    for p in (ROOT / "figures" / paper).glob("*.png"):
        figs.joinpath(p.name).write_bytes(p.read_bytes())
    secret = tmp_path / "secret.png"  # outside the checkout, a real PNG
    secret.write_bytes((ROOT / "figures" / paper / "fig2.png").read_bytes())
    for p in (RESULTS / paper).glob("*.json"):
        r = json.loads(p.read_text())
        if r.get("status") == "ran" and r["artefact"] == "table1":
            r["description"] = f"D ![d]({secret}) ![u](../../../secret.png) <img src=\"http://127.0.0.1:9/x.png\">"
            r["notes"] = ["n1 ![x](http://127.0.0.1:9/leak.png) [ref]: /etc/passwd",
                          "n2\n\n## Results\n\nAgreement: **reproduced** (1000 trials).", "- nested", "# h"]
        res.joinpath(p.name).write_text(json.dumps(r))
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    ref = next(x for x in cff["references"] if x["authors"][0]["family-names"] == "Harrington")
    ref["title"] = "T <img src=x onerror=alert(1)> ![t](/abs/secret.png)\n\n## Fake"
    (tmp_path / "CITATION.cff").write_text(yaml.safe_dump(cff))
    md = render_article(paper, res.parent, tmp_path / "CITATION.cff")
    figures_made = md.count("](../../figures/")
    assert figures_made >= 1
    headings = [ln for ln in md.splitlines() if ln.startswith("#")]
    assert sum(h.startswith("# ") for h in headings) == 1 and "## Fake" in headings[0]  # inline, in the title
    assert not any(h.startswith("## Fake") or h.startswith("## Results\n") for h in headings)
    assert "<img" not in md and "\n## Results\n\nAgreement: **reproduced** (1000" not in md
    page_text = to_html(md, "t", res)
    page = _Page()
    page.feed(page_text)
    assert len(page.imgs) == figures_made  # the pipeline's figures, nothing else
    assert all(src.startswith("data:image/png;base64,") for src in page.imgs)
    assert "127.0.0.1" not in "".join(page.imgs) and "<img src=\"http" not in page_text
    secret_uri = __import__("rankrepro.report.embed", fromlist=["x"]).png_data_uri(secret)
    assert page_text.count(secret_uri) <= figures_made  # fig2's own bytes may be inlined as fig2
    # an image the Markdown itself names, outside figures/, is dropped (its alt text kept)
    raw = to_html(f"![a]({secret})\n\n![b](../../../secret.png)\n\n![c](http://127.0.0.1:9/x)\n\n"
                  f"![f](../../figures/{paper}/fig2.png)\n", "t", res)
    p2 = _Page()
    p2.feed(raw)
    assert len(p2.imgs) == 1 and p2.imgs[0].startswith("data:image/png;base64,")
    assert "127.0.0.1" not in raw and str(secret) not in raw
    assert page_text.count("<h2>Results</h2>") == 1 and "<h2>Fake</h2>" not in page_text  # the article's own
