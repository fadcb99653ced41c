"""The committed replication report opens offline in a real browser: headless Chromium
renders a non-blank page, and the DOM has the scorecard and one section for every paper and
every artefact record under results/ (`make test` installs Debian's chromium when missing)."""
import json
import os
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


def run(chromium, tmp_path, *args) -> subprocess.CompletedProcess:
    return subprocess.run([chromium, *FLAGS, f"--user-data-dir={tmp_path / 'profile'}", *args, REPORT.as_uri()],
                          capture_output=True, text=True, timeout=180, check=True)


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
