"""The replication report opens offline in a real browser: headless Chromium renders the
committed one non-blank, with the scorecard and one section for every paper and artefact
record under results/; and the report rendered now from the committed records has contents
that stay in view, a filter that really hides the rows agreeing with the paper, and links
that resolve to files next to the report (`make test` installs Debian's chromium when missing)."""
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
REPORT = ROOT / "results" / "report" / "index.html"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
# no network here: keep Chromium from reaching for Google's services at start
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars"]


@pytest.fixture(scope="module")
def chromium():
    if CHROMIUM is None:
        if os.environ.get("CI"):
            pytest.fail("headless Chromium is required in CI (`make test` installs Debian's chromium: make browser)")
        pytest.skip("chromium is not installed (Debian: apt-get install chromium)")
    return CHROMIUM


def run(chromium, tmp_path, *args, url: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([chromium, *FLAGS, f"--user-data-dir={tmp_path / 'profile'}", *args, url or REPORT.as_uri()],
                          capture_output=True, text=True, timeout=180, check=True)


@pytest.fixture(scope="module")
def fresh(tmp_path_factory):
    """The report rendered now, by the code the workflow runs, from the committed records and
    figures (what `make reproduce` writes to results/report/index.html)."""
    from rankrepro.report.html import build_report

    out = tmp_path_factory.mktemp("report") / "index.html"
    records = sorted(str(p) for p in (ROOT / "results").glob("*/*.json"))
    pngs = {f"{p.parent.name}/{p.stem}": str(p) for p in (ROOT / "figures").glob("*/*.png")}
    build_report(records, pngs, out, "paper")
    return out


@pytest.fixture(scope="module")
def fresh_dom(chromium, fresh, tmp_path_factory):
    return run(chromium, tmp_path_factory.mktemp("chromium"), "--dump-dom", url=fresh.as_uri()).stdout


def _elements(dom: str, attr: str):
    """(tag, attributes text) of every element carrying ``attr``."""
    return re.findall(rf"<(\w+)([^>]*\s{attr}=[^>]*)>", dom)


def test_filter_shows_only_disagreements(chromium, tmp_path, fresh, fresh_dom):
    """The box 'only disagreements' (or the link index.html#only-disagreements) really hides
    every row and claim that agrees with the paper, and every artefact without a disagreement."""
    plain = fresh_dom
    assert 'id="toc"' in plain and 'id="only-disagreements"' in plain
    assert not any(" hidden" in a for _, a in _elements(plain, "data-verdict"))  # all shown by default
    dom = run(chromium, tmp_path, "--dump-dom", url=fresh.as_uri() + "?only=disagreements").stdout
    shown, hidden = [], []
    for tag, attrs in _elements(dom, "data-verdict"):
        if tag == "g":
            continue  # the dot plots keep every cell
        v = re.search(r'data-verdict="([^"]*)"', attrs).group(1)
        (hidden if re.search(r"\shidden(=|\s|$)", attrs) else shown).append(v)
    assert shown and hidden, "the filter hid nothing, or everything"
    assert set(shown) <= {"differs", "not held"}, set(shown)
    assert {"consistent", "held"} & set(hidden)
    sections = _elements(dom, "data-disagreements")
    assert all(re.search(r"\shidden", a) for _, a in sections if 'data-disagreements="0"' in a)
    assert not any(re.search(r"\shidden", a) for _, a in sections if 'data-disagreements="0"' not in a)


def test_links_resolve(fresh, fresh_dom):
    """Every link of the rendered page: an anchor of the page, or a file (CSV, record, resolved
    config, figure) that exists relative to the report; none is absolute."""
    dom = fresh_dom
    ids = set(re.findall(r'\sid="([^"]+)"', dom))
    hrefs = re.findall(r'href="([^"]+)"', dom)
    files = [h for h in hrefs if not h.startswith("#")]
    assert files and any(h.endswith(".csv") for h in files) and any(h.endswith(".png") for h in files)
    for h in hrefs:
        if h.startswith("#"):
            assert h[1:] in ids or h == "#only-disagreements", h
        else:
            assert not h.startswith(("/", "file:", "http")) and (fresh.parent / h).is_file(), h


def _ink(png):
    import matplotlib.image as mpimg

    img = mpimg.imread(png)[..., :3]
    return img, img.mean(axis=2) < 0.85


def test_navigation_stays_in_view(chromium, tmp_path, fresh, fresh_dom):
    """The contents column: drawn on the left of the first screen beside the page, and pinned
    to the window (sticky, the window's height, scrolling on its own) so it stays in view."""
    png = tmp_path / "nav.png"
    run(chromium, tmp_path, "--window-size=1280,900", f"--screenshot={png}", url=fresh.as_uri())
    img, ink = _ink(png)
    assert img.shape[:2] == (900, 1280)
    assert ink[:, :250].mean() > 0.01, "no contents on the left"
    assert ink[:, 300:].mean() > 0.01, "the page beside the contents is blank"
    dom = fresh_dom
    style = re.search(r"#toc\{([^}]*)\}", dom).group(1)
    assert "position:sticky" in style and "top:0" in style and "height:100vh" in style and "overflow:auto" in style
    toc = dom[dom.index('<nav id="toc"'):dom.index("</nav>")]
    for p in (ROOT / "results").glob("*/*.json"):
        rec = json.loads(p.read_text())
        assert f'href="#{rec["paper"]}-{rec["artefact"]}"' in toc, p  # every artefact is in the contents


def test_committed_report_has_navigation(chromium, tmp_path):
    dom = run(chromium, tmp_path, "--dump-dom").stdout
    assert 'id="toc"' in dom and 'id="only-disagreements"' in dom and ".config.yaml" in dom


def test_report_screenshot_is_not_blank(chromium, tmp_path):
    import matplotlib.image as mpimg

    png = tmp_path / "report.png"
    run(chromium, tmp_path, "--window-size=1280,3000", f"--screenshot={png}")
    img = mpimg.imread(png)[..., :3]
    assert img.shape[:2] == (3000, 1280)
    ink = img.mean(axis=2) < 0.85
    assert ink.mean() > 0.02, "the page is (nearly) blank"
    # text and figures, not one flat colour: ink on most bands of the page
    bands = ink.reshape(30, 100, 1280).mean(axis=(1, 2))
    assert (bands > 0.005).mean() > 0.5
    assert np.unique((img * 255).astype(np.uint8).reshape(-1, 3), axis=0).shape[0] > 100


def test_report_has_every_section(chromium, tmp_path):
    dom = run(chromium, tmp_path, "--dump-dom").stdout
    assert 'id="scorecard"' in dom and 'id="reading"' in dom
    records = sorted(p for p in (ROOT / "results").glob("*/*.json"))
    assert records, "no artefact records under results/"
    figures = 0
    for p in records:
        rec = json.loads(p.read_text())
        assert f'id="{rec["paper"]}"' in dom, rec["paper"]
        assert f'id="{rec["paper"]}-{rec["artefact"]}"' in dom, p
        figures += (ROOT / "figures" / rec["paper"] / f"{rec['artefact']}.png").exists()
    # figures are embedded (the report is self-contained): one image per drawn figure at least
    assert dom.count("data:image/png;base64,") >= figures
    assert "http://" not in dom.split("<body", 1)[1].replace("http://www.w3.org", "")  # nothing fetched
