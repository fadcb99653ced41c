"""The workflow's own config (`snakemake --config ...`) is checked against
rules/schemas/config.schema.yaml before anything slow: an unknown key or value stops the run at
once, naming it and the closest known one."""
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
SNAKEMAKE = Path(sys.executable).parent / "snakemake"
SCHEMA = yaml.safe_load((ROOT / "rules/schemas/config.schema.yaml").read_text())


def test_schema_lists_exactly_the_keys_the_workflow_reads():
    read = set()
    for p in [*ROOT.glob("rules/*.smk"), ROOT / "Snakefile", *ROOT.glob("scripts/*.py")]:
        read |= set(re.findall(r"\bconfig\.get\(\s*[\"'](\w+)[\"']", p.read_text()))
        read |= set(re.findall(r"\bconfig\[\s*[\"'](\w+)[\"']\s*\]", p.read_text()))
    assert read, "no config key found: the pattern is out of date"
    assert read == set(SCHEMA["properties"]), read ^ set(SCHEMA["properties"])
    assert SCHEMA["additionalProperties"] is False


def test_schema_enums_follow_the_code():
    from rankrepro.jobs import BACKENDS

    assert set(SCHEMA["properties"]["scale"]["enum"]) == {p.stem for p in (ROOT / "config/scale").glob("*.yaml")}
    assert tuple(SCHEMA["properties"]["backend"]["enum"]) == BACKENDS


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    """The workflow's files without its configs: a config error must stop it before it reads them."""
    w = tmp_path_factory.mktemp("cfg")
    for item in ("Snakefile", "rules", "scripts", "profiles"):
        src = ROOT / item
        (shutil.copytree if src.is_dir() else shutil.copy)(src, w / item)
    return w


def dry_run(w, *config):
    env = {k: v for k, v in os.environ.items() if k != "RANKREPRO_DATA_MIRROR"}
    t = time.monotonic()
    r = subprocess.run([str(SNAKEMAKE), "--cores", "1", "--dry-run", "--config", *config], cwd=w, env=env,
                       capture_output=True, text=True, timeout=120)
    return r, time.monotonic() - t


@pytest.mark.parametrize("entry, message", [
    ("scael=smoke", "unknown config key 'scael': did you mean 'scale'?"),
    ("batch_cell=true", "unknown config key 'batch_cell': did you mean 'batch_cells'?"),
    ("scale=smok", "config key 'scale': unknown value 'smok': did you mean 'smoke'?"),
    ("backend=dsk", "config key 'backend': unknown value 'dsk': did you mean 'dask'?"),
    ("download=maybe", "'maybe' is not valid"),
])
def test_a_config_typo_stops_at_once_naming_it(workdir, entry, message):
    r, seconds = dry_run(workdir, entry)
    out = r.stdout + r.stderr
    assert r.returncode != 0 and message in out, out[-2000:]
    # at once: before the experiment catalog is read (this scratch copy has no config/ at all)
    assert "Building DAG" not in out and "experiment" not in out.lower()
    assert seconds < 15, seconds
