"""Names that become parts of output paths (issue 30, item 1): a paper, an artefact, an
algorithm key, a cell id, a figure file, a sensitivity choice or value must match
``rankrepro.pipeline.names.NAME_PATTERNS`` when the config loads (a ConfigError naming the
key), the Snakefile matches its wildcards with the same patterns, and no output path can
leave its root."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, strategies as st

from rankrepro.pipeline.catalog import load_catalog, load_experiment
from rankrepro.pipeline.config_errors import ConfigError
from rankrepro.pipeline.names import MAX_LENGTH, NAME_PATTERNS, OutsideRoot, name_problem, output_path
from conftest import committed_catalog

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "config"

EXPERIMENT = """\
# @package _global_
defaults:
  - /algorithm@algorithms.prank: prank
  - override /dataset: synthetic_hgo

experiment:
  paper: {paper}
  artefact: {artefact}
  title: "a names test"
  kind: figure
  features: poly2
  n_trials: 2
  n_train: 60
  seed: 1
  metrics: [online_rank_loss]
  curve_points: 5
{experiment_extra}  figure: {{{figure_file}panels: [{{title: x}}]}}
{extra}"""


def experiment_text(paper: str, artefact: str, extra: str = "", experiment_extra: str = "",
                    figure_file: str | None = None) -> str:
    """A small experiment; ``extra``: top-level text, ``experiment_extra``: text under
    ``experiment:``."""
    return EXPERIMENT.format(paper=paper, artefact=artefact, extra=extra, experiment_extra=experiment_extra,
                             figure_file=f"file: {figure_file}, " if figure_file else "")


@pytest.fixture(scope="module")
def config_copy(tmp_path_factory):
    """A copy of config/ whose experiment files the tests add and remove."""
    dst = tmp_path_factory.mktemp("names") / "config"
    shutil.copytree(CONFIG, dst)
    return dst


def _add(config_dir: Path, rel: str, text: str) -> Path:
    f = config_dir / "experiment" / rel
    f.parent.mkdir(parents=True, exist_ok=True)
    f.write_text(text, encoding="utf-8")
    return f


LONG = "t" * 240

# (file under config/experiment/, the key the error names)
BAD_FILES = [
    ("harrington2003/table1.v2.yaml", "experiment.artefact"),
    ("harrington2003/table 1.yaml", "experiment.artefact"),
    ("harrington2003/table-1.yaml", "experiment.artefact"),
    ("harrington2003/tablé1.yaml", "experiment.artefact"),
    (f"harrington2003/{LONG}.yaml", "experiment.artefact"),
    ("report/index.yaml", "experiment.paper"),
    ("harrington 2003/table1.yaml", "experiment.paper"),
    ("harrington2003/deeper/table1.yaml", "experiment"),
]


@pytest.mark.parametrize("rel,key", BAD_FILES, ids=[k for k, _ in BAD_FILES])
def test_a_file_name_that_cannot_be_a_path_is_a_config_error(config_copy, rel, key):
    name = rel[:-len(".yaml")]
    paper, _, artefact = name.partition("/")
    f = _add(config_copy, rel, experiment_text(paper, artefact))
    try:
        with pytest.raises(ConfigError) as err:
            load_experiment(name, "smoke", config_dir=config_copy)
    finally:
        f.unlink()
    assert err.value.key == key, str(err.value)
    assert name in str(err.value)


def test_a_case_twin_is_a_config_error(config_copy):
    """config/experiment/harrington2003/Table1.yaml beside table1.yaml: one set of files on a
    case-insensitive file system.  Both names are refused, each naming the other."""
    f = _add(config_copy, "harrington2003/Table1.yaml",
             (config_copy / "experiment/harrington2003/table1.yaml").read_text().replace("artefact: table1",
                                                                                         "artefact: Table1"))
    try:
        for name, other in (("harrington2003/Table1", "table1"), ("harrington2003/table1", "Table1")):
            with pytest.raises(ConfigError) as err:
                load_experiment(name, "smoke", config_dir=config_copy)
            assert err.value.key == "experiment.artefact" and f"harrington2003/{other}.yaml" in str(err.value)
    finally:
        f.unlink()


# (text added to the test experiment, the key the error names)
BAD_KEYS = [
    ('algorithms:\n  "../../../some/where/EVIL_CELL": {estimator: prank, label: evil}\n',
     "algorithms.../../../some/where/EVIL_CELL"),
    ("algorithms:\n  pränk: {estimator: prank, label: umlaut}\n", "algorithms.pränk"),
    ("algorithms:\n  p-rank: {estimator: prank, label: dash}\n", "algorithms.p-rank"),
    ("algorithms:\n  " + "a" * 65 + ": {estimator: prank, label: long}\n", "algorithms." + "a" * 65),
    ("algorithms:\n  PRank: {estimator: prank, label: twin}\n", "algorithms.PRank"),
    ("algorithms:\n  wh: {estimator: widrow_hoff, label: WH, grid: {eta: [0.1, 1.0e+20]}}\n",
     "algorithms.wh.grid.eta[1]"),
    ("", "experiment.figure.file"),  # figure.file set below
    ("  sensitivity:\n    - {choice: '..', main: a, why: w, values: {a: {}, b: {experiment.n_train: 50}}}\n",
     "experiment.sensitivity[0].choice"),
    ("  sensitivity:\n    - {choice: c, main: a, why: w, values: {a: {}, 'b/..': {experiment.n_train: 50}}}\n",
     "experiment.sensitivity[0].values.b/.."),
    ("  sensitivity:\n    - {choice: c, main: a, why: w, values: {a: {}, B: {experiment.n_train: 50}, "
     "b: {experiment.n_train: 40}}}\n", "experiment.sensitivity[0].values.b"),
]


@pytest.mark.parametrize("extra,key", BAD_KEYS, ids=[k[:40] for _, k in BAD_KEYS])
def test_a_name_in_a_config_that_cannot_be_a_path_is_a_config_error(config_copy, extra, key):
    if key == "experiment.figure.file":
        text = experiment_text("harrington2003", "names", figure_file="../../../some/where/EVIL_FIG")
    elif "sensitivity" in extra:
        text = experiment_text("harrington2003", "names", experiment_extra=extra)
    else:
        text = experiment_text("harrington2003", "names", extra)
    f = _add(config_copy, "harrington2003/names.yaml", text)
    try:
        with pytest.raises(ConfigError) as err:
            load_experiment("harrington2003/names", "smoke", config_dir=config_copy)
    finally:
        f.unlink()
    assert err.value.key == key, str(err.value)


def test_the_test_experiment_itself_loads(config_copy):
    f = _add(config_copy, "harrington2003/names.yaml", experiment_text("harrington2003", "names"))
    try:
        exp = load_experiment("harrington2003/names", "smoke", config_dir=config_copy)
    finally:
        f.unlink()
    assert [c.id for c in exp.cells] == ["prank"] and exp.figure_file == "names"


def test_rankrepro_run_writes_nothing_outside_its_folder(tmp_path, monkeypatch):
    """The run of an experiment whose algorithm key and figure file climb out of runs/ stops
    at the config, before writing anything (today: files outside runs/)."""
    from rankrepro.cli import main

    cfg = tmp_path / "config"
    shutil.copytree(CONFIG, cfg, ignore=shutil.ignore_patterns("experiment", "diagnoses"))
    up = "../" * 8
    _add(cfg, "harrington2003/evil.yaml", experiment_text(
        "harrington2003", "evil", f'algorithms:\n  "{up}some/where/EVIL_CELL": {{estimator: prank, label: evil}}\n',
        figure_file=f"{up}some/where/EVIL_FIG"))
    work = tmp_path / "a" / "b" / "c" / "d" / "e" / "f"
    work.mkdir(parents=True)
    monkeypatch.chdir(work)
    monkeypatch.setenv("RANKREPRO_CONFIG_DIR", str(cfg))
    rc = main(["run", "harrington2003/evil"])
    assert rc == 2
    written = [p for p in tmp_path.rglob("*") if p.is_file() and cfg not in p.parents]
    outside = [p for p in written if (work / "runs") not in p.parents]
    assert not outside, outside
    assert not list(tmp_path.rglob("EVIL_*"))


def test_every_committed_name_matches_its_pattern():
    cat = committed_catalog("smoke")
    for name, exp in cat.items():
        assert name_problem("paper", exp.paper) is None and name_problem("artefact", exp.artefact) is None
        assert exp.figure_file is None or name_problem("figure", exp.figure_file) is None
        for c in exp.all_cells:
            assert name_problem("cell", c.id) is None, c.id
            assert name_problem("algorithm", c.algorithm) is None


def test_the_snakefile_uses_the_same_patterns():
    text = (ROOT / "rules" / "common.smk").read_text()
    block = text[text.index("wildcard_constraints:"):].split("\n\n")[0]
    for wildcard in ("paper", "artefact", "cell", "figure", "dataset"):
        assert f'{wildcard}=NAME_PATTERNS["{wildcard}"]' in block


# ---------------------------------------------------------------------------------------
# every output path stays under its root
# ---------------------------------------------------------------------------------------
#: every output the workflow and `rankrepro run` write, relative to their root (see
#: rules/*.smk, cli.run_experiment, report), by the kinds of the names in them
LAYOUT = [
    "results/{paper}/{artefact}.config.yaml", "results/{paper}/{artefact}.csv", "results/{paper}/{artefact}.md",
    "results/{paper}/{artefact}.json", "results/{paper}/{artefact}/cells/{cell}.parquet",
    "results/{paper}/{artefact}/cells/{cell}.fingerprint", "results/{paper}/{artefact}/all_cells.parquet",
    "figures/{paper}/{figure}.png", "figures/{paper}/{figure}.pdf", "logs/{paper}/{artefact}/{cell}.log",
    "logs/{paper}/{artefact}.cells.log", "logs/{paper}/{artefact}.aggregate.log", "logs/{paper}/{figure}.figure.log",
]


def _names(kind):
    return st.from_regex(re.compile(NAME_PATTERNS[kind], re.ASCII), fullmatch=True).filter(
        lambda s: len(s) <= MAX_LENGTH[kind] and name_problem(kind, s) is None)


@given(paper=_names("paper"), artefact=_names("artefact"), cell=_names("cell"), figure=_names("figure"),
       scale=_names("scale"))
def test_valid_names_keep_every_output_under_its_root(tmp_path_factory, paper, artefact, cell, figure, scale):
    root = tmp_path_factory.getbasetemp() / "root"
    for template in LAYOUT:
        rel = f"runs/{scale}/" + template.format(paper=paper, artefact=artefact, cell=cell, figure=figure)
        p = output_path(root, *rel.split("/"))
        assert os.path.normpath(p).startswith(str(root) + os.sep)
        # every file name, with the hidden temporary of an atomic write, fits a file system's 255 bytes
        assert all(len(f".{part}.abcdefgh.tmp".encode()) <= 255 for part in rel.split("/"))


def test_the_longest_names_fit():
    longest = {k: "a" * n for k, n in MAX_LENGTH.items()}
    for template in LAYOUT:
        rel = template.format(**longest)
        assert all(len(f".{part}.abcdefgh.tmp") <= 255 for part in rel.split("/")), rel


@pytest.mark.parametrize("bad", ["", ".", "..", "../x", "a/b", "a b", "é", "a+b", "a\n"])
def test_names_that_could_leave_a_folder_are_refused(bad):
    for kind in ("paper", "artefact", "algorithm", "figure", "label", "scale"):
        assert name_problem(kind, bad) is not None, (kind, bad)


def test_output_path_refuses_to_leave_its_root(tmp_path):
    assert output_path(tmp_path, "results", "p", "a.json") == tmp_path / "results" / "p" / "a.json"
    for parts in (("..", "x"), ("results", "../../x"), ("/etc", "x"), ("results", ""), ("a/./b",)):
        with pytest.raises(OutsideRoot):
            output_path(tmp_path, *parts)
    (tmp_path / "link").symlink_to(tmp_path.parent)
    with pytest.raises(OutsideRoot):
        output_path(tmp_path, "link", "x")


# ---------------------------------------------------------------------------------------
# the workflow: a name Snakemake would reject is a config error when it parses
# ---------------------------------------------------------------------------------------
SNAKEMAKE = Path(sys.executable).parent / "snakemake"


def scratch_workflow(tmp_path: Path) -> Path:
    w = tmp_path / "wf"
    w.mkdir()
    for item in ("Snakefile", "rules", "scripts", "environment.yml", "profiles"):
        src = ROOT / item
        (shutil.copytree if src.is_dir() else shutil.copy)(src, w / item)
    shutil.copytree(CONFIG, w / "config", ignore=shutil.ignore_patterns("experiment", "diagnoses"))
    return w


def dry_run(w: Path, tmp_path: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "RANKREPRO_DATA_MIRROR"}
    env.update(RANKREPRO_OFFLINE="1", RANKREPRO_CACHE_DIR=str(tmp_path / "cache"))
    return subprocess.run([str(SNAKEMAKE), "-n", "--cores", "1", "--config", "scale=smoke"], cwd=w, env=env,
                          capture_output=True, text=True, timeout=600)


def test_a_long_artefact_name_stops_the_workflow_as_a_config_error(tmp_path):
    w = scratch_workflow(tmp_path)
    _add(w / "config", f"harrington2003/{LONG}.yaml", experiment_text("harrington2003", LONG))
    r = dry_run(w, tmp_path)
    text = r.stdout + r.stderr
    assert r.returncode != 0
    assert "File name too long" not in text
    assert "config error in experiment" in text and "at key 'experiment.artefact'" in text, text[-2000:]
