"""Which artefacts each data set would turn into original data (rankrepro.data.uses, read from
the configs alone) is what the composed catalog says; `rankrepro data-status` and docs/data.md
tell it for every original that is not here."""
import shutil
import subprocess
import sys
from pathlib import Path

from conftest import CONFIG_DIR, committed_catalog

from rankrepro.data.registry import DATASETS
from rankrepro.data.uses import artefacts_by_source

ROOT = Path(__file__).resolve().parents[1]


def test_the_configs_read_alone_give_the_catalogs_data_sets():
    want: dict[str, list[str]] = {}
    for exp in committed_catalog("paper").values():
        if exp.cfg.dataset.source is not None:
            want.setdefault(exp.cfg.dataset.source, []).append(f"{exp.paper}/{exp.artefact}")
    assert artefacts_by_source(CONFIG_DIR) == {k: sorted(v) for k, v in sorted(want.items())}
    assert set(want) <= set(DATASETS)


def test_data_status_names_what_each_absent_original_would_switch_and_where_it_goes(tmp_path):
    from rankrepro.data.fetch import Paths
    from rankrepro.data.status import originals_table

    paths = Paths.under(tmp_path / "data")
    text = originals_table(paths, tmp_path / "no-mirror", probe=False, config_dir=CONFIG_DIR)
    block = {line.split()[0]: line for line in text.splitlines() if line.startswith("  ") and not line.startswith("      ")}
    assert "harrington2003/table2_eachmovie" in block["eachmovie"] and "yu2006/tables" in block["eachmovie"]
    # the arena's experiments on those data sets switch with them (their data set is their paper experiment's)
    assert all(f"arena/{a}" in block["eachmovie"] for a in ("online_eachmovie", "online_min100", "collab_gp_n400"))
    assert "arena/letor_mq2008" in block["letor3-td2003"] and "arena/" not in block["ohsumed-judged"]
    assert "now not run" in block["ohsumed-judged"] and "harrington2003/table2_ohsumed" in block["ohsumed-judged"]
    assert "data/raw/letor3-td2003/" in text and "$RANKREPRO_DATA_MIRROR/letor3-td2003/" in text
    assert "mslr-web10k" not in block  # no artefact uses it: nothing to switch
    # the files put in data/raw: that original is no longer listed
    sys.path.insert(0, str(ROOT / "scripts"))
    import make_fixtures

    make_fixtures.make(tmp_path / "fx", ["ohsumed-judged"])
    shutil.copytree(tmp_path / "fx/ohsumed-judged", paths.raw / "ohsumed-judged")
    text = originals_table(paths, tmp_path / "no-mirror", probe=False, config_dir=CONFIG_DIR)
    assert "ohsumed-judged" not in text and "eachmovie" in text


def test_the_command_prints_it(tmp_path):
    r = subprocess.run([str(Path(sys.executable).parent / "rankrepro"), "data-status", "--no-probe"], cwd=ROOT,
                       capture_output=True, text=True, timeout=120,
                       env={"PATH": "/usr/bin:/bin", "RANKREPRO_OFFLINE": "1", "PYTHONPATH": str(ROOT / "src")})
    assert r.returncode == 0, r.stderr
    assert "would turn into original data" in r.stdout


def test_docs_data_md_says_per_data_set_which_artefacts_it_switches():
    page = (ROOT / "docs/data.md").read_text()
    uses = artefacts_by_source(CONFIG_DIR)
    for line in page.splitlines():
        if line.startswith("| `"):
            name = line.split("`")[1]
            last = line.rstrip(" |").rsplit("|", 1)[1]
            for a in uses.get(name, []):
                assert f"`{a}`" in last, (name, a)
            assert ("not run" in last) == (bool(uses.get(name)) and not DATASETS[name].substitutes), name
