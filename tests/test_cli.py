"""The command line as a user meets it: `rankrepro run EXPERIMENT key=value ...` runs one
experiment with Hydra-style overrides, validated as configs are; a mistake prints one line
naming the key, with a "did you mean" for a typo, and no traceback; --help renders cleanly."""
import json
import os
import subprocess
import sys

import pandas as pd
import pytest

from conftest import ROOT
from rankrepro.cli import main


def test_run_one_experiment_at_smoke_scale(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(ROOT)
    rc = main(["run", "crammer_singer2005/fig6", "experiment.seed=7", "--out", str(tmp_path)])
    assert rc == 0
    res = tmp_path / "results/crammer_singer2005"
    rec = json.loads((res / "fig6.json").read_text())
    # the override and the smoke scale (2 trials) are what ran
    assert rec["scale"] == "smoke" and rec["seed"] == 7 and rec["n_trials"] == 2 and rec["n_train"] == 400
    assert "seed: 7" in (res / "fig6.config.yaml").read_text()
    for p in ("fig6.csv", "fig6.md", "fig6/cells/prank.parquet"):
        assert (res / p).is_file(), p
    assert (tmp_path / "figures/crammer_singer2005/fig6.png").stat().st_size > 10_000
    assert "fig6" in (tmp_path / "results/report/index.html").read_text()
    # the same numbers as the pipeline's own function on the same overridden config
    from rankrepro.pipeline.catalog import load_experiment
    from rankrepro.pipeline.runner import run_cell

    exp = load_experiment("crammer_singer2005/fig6", "smoke", overrides=["experiment.seed=7"])
    pd.testing.assert_frame_equal(pd.read_parquet(res / "fig6/cells/prank.parquet"), run_cell(exp, "prank"))
    curve = pd.read_csv(res / "fig6.csv")
    assert curve["round"].max() == 400
    # --cfg job --resolve prints, without running, the very file the run wrote
    capsys.readouterr()
    assert main(["run", "crammer_singer2005/fig6", "experiment.seed=7", "--cfg", "job", "--resolve"]) == 0
    assert capsys.readouterr().out == (res / "fig6.config.yaml").read_text()


@pytest.mark.parametrize("args, key, hint", [
    (["harrington2003/table1", "experiment.n_trails=3"], "experiment.n_trails", "experiment.n_trials"),
    (["harrington2003/table1", "n_trails=3"], "n_trails", "experiment.n_trials"),
    (["harrington2003/table1", "algorithms.oap_bmp.params.N=10"], "algorithms.oap_bmp", "algorithms.oap_bpm"),
    (["harrington2003/table1", "algorithms.oap_bpm.grid.tua=[0.1]"], "algorithms.oap_bpm.grid.tua",
     "algorithms.oap_bpm.grid.tau"),
    (["harrington2003/table1", "algorithms.prank.estimator=prnk"], "algorithms.prank.estimator", "prank"),
    (["harrington2003/tabel1"], "experiment", "harrington2003/table1"),
    (["harrington2003/table1", "dataset=synthetic_hgoo"], "defaults", "dataset=synthetic_hgo"),
])
def test_typo_is_one_line_with_did_you_mean(args, key, hint, capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    assert main(["run", *args]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert err.startswith("rankrepro: error: ") and f"at key '{key}'" in err
    assert err.endswith(f"did you mean '{hint}'?"), err


def test_bad_value_names_the_key_without_a_guess(capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    assert main(["run", "harrington2003/table1", "experiment.n_trials=0"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == ("rankrepro: error: config error in experiment 'harrington2003/table1' at key "
                   "'experiment.n_trials': must be >= 1, got 0")


def test_the_installed_command_prints_no_traceback():
    r = subprocess.run([sys.executable, "-m", "rankrepro.cli", "run", "harrington2003/table1", "experiment.n_trails=3"],
                       cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.strip().splitlines() == [
        "rankrepro: error: config error in experiment 'harrington2003/table1' at key 'experiment.n_trails': "
        "Key 'n_trails' not in 'ExperimentCfg'; did you mean 'experiment.n_trials'?"]


def test_a_reader_that_goes_away_stops_the_command_quietly():
    """`rankrepro data-status | head -1`: the pipe closed before the command writes ends it with
    the shell's code for SIGPIPE (141) and no traceback."""
    r, w = os.pipe()
    os.close(r)  # the reader is gone before anything is written
    try:
        p = subprocess.run([sys.executable, "-m", "rankrepro.cli", "data-status", "--no-probe"], cwd=ROOT,
                           stdout=w, stderr=subprocess.PIPE, text=True, timeout=120)
    finally:
        os.close(w)
    assert p.returncode == 141 and "Traceback" not in p.stderr and "Broken pipe" not in p.stderr


def test_help_renders_cleanly(capsys):
    for argv in (["--help"], ["run", "--help"]):
        with pytest.raises(SystemExit) as e:
            main(argv)
        assert e.value.code == 0
        out = capsys.readouterr().out
        assert "``" not in out and "usage: rankrepro" in out
        assert max(len(line) for line in out.splitlines()) <= 100
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    for cmd in ("run", "experiments", "data-status", "fetch", "preprocess"):
        assert f"\n    {cmd}" in out
    assert "rankrepro run harrington2003/table1 algorithms.oap_bpm.params.N=50" in out


def test_no_guess_for_a_key_that_exists(capsys, monkeypatch):
    """Narrowing a grid under a published value: the published rows of the values gone are
    dropped, said in one line (issue 57, item 3; before, an error at the selector), with no
    made-up 'did you mean' (the key exists)."""
    monkeypatch.chdir(ROOT)
    assert main(["run", "harrington2003/table1", "algorithms.oap_bpm.grid.tau=[0.1,0.3]", "--cfg", "job"]) == 0
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "did you mean" not in err
    assert "dropped published rows oap_bpm tau=0.6, oap_bpm tau=0.9" in err and "tau=0.3," not in err, err


@pytest.mark.parametrize("args, message", [
    (["harrington2003/tabel1"], "at key 'experiment': no file config/experiment/harrington2003/tabel1.yaml"),
    (["harrington2003/table1", "--scale", "smok"], "at key 'scale': unknown scale 'smok' (known: paper, smoke); "
                                                   "did you mean 'smoke'?"),
    (["harrington2003/table1", "experiment.n_trials"], "override 'experiment.n_trials' is not key=value"),
    (["harrington2003/table1", "=3"], "override '=3' is not key=value"),
])
def test_config_errors_found_without_the_config_come_before_the_heavy_imports(args, message):
    """An unknown experiment or scale and a malformed override are reported before Hydra, the
    learners or numba are imported (seconds on a loaded machine): in a fresh interpreter none of
    them is loaded when the error is printed."""
    code = ("import sys\nfrom rankrepro.cli import main\nrc = main(['run', *sys.argv[1:]])\n"
            "heavy = [m for m in ('hydra', 'omegaconf', 'numba', 'numpy', 'rankrepro.pipeline.catalog') if m in sys.modules]\n"
            "print(rc, heavy)")
    r = subprocess.run([sys.executable, "-c", code, *args], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert r.stdout.strip() == "2 []", r.stdout + r.stderr
    assert r.stderr.startswith("rankrepro: error: ") and message in r.stderr and len(r.stderr.splitlines()) == 1


# ------------------------------------------------------------------------------------
# Hydra's conventions: --cfg job [--resolve], -m/--multirun, ~key, --version
# ------------------------------------------------------------------------------------
def test_version(capsys):
    import rankrepro

    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0 and capsys.readouterr().out == f"rankrepro {rankrepro.__version__}\n"


def test_cfg_job_prints_the_composed_config_and_runs_nothing(tmp_path, capsys, monkeypatch):
    """`--cfg job` is Hydra's composed config (interpolations as written): the same as Hydra's
    own compose API gives for the experiment, scale and overrides, with the experiment's
    diagnoses from their file; nothing is written."""
    import yaml
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra
    from omegaconf import OmegaConf

    monkeypatch.chdir(ROOT)
    args = ["run", "harrington2003/table1", "experiment.n_trials=3", "--out", str(tmp_path)]
    assert main([*args, "--cfg", "job"]) == 0
    printed = yaml.safe_load(capsys.readouterr().out)
    assert list(tmp_path.iterdir()) == []
    GlobalHydra.instance().clear()
    try:
        with initialize_config_dir(config_dir=str(ROOT / "config"), version_base="1.3"):
            hydra_cfg = compose("config", overrides=["experiment=harrington2003/table1", "scale=smoke",
                                                     "experiment.n_trials=3"])
    finally:
        GlobalHydra.instance().clear()
    # the diagnoses (config/diagnoses/harrington2003/table1.yaml, which Hydra does not compose)
    # are on their published values, as in the resolved config the workflow writes
    committed = yaml.safe_load((ROOT / "results/harrington2003/table1.config.yaml").read_text())["experiment"]
    assert [p["diagnosis"] for p in printed["experiment"]["published"]] == \
        [p["diagnosis"] for p in committed["published"]]
    for p in printed["experiment"]["published"]:
        p["diagnosis"] = None  # the schema's default, as Hydra composes it
    assert printed == OmegaConf.to_container(hydra_cfg, resolve=False)
    assert printed["experiment"]["n_trials"] == 3
    # a mistake is the run's one line, and --resolve alone is refused
    assert main(["run", "harrington2003/table1", "experiment.n_trails=3", "--cfg", "job"]) == 2
    assert "did you mean 'experiment.n_trials'?" in capsys.readouterr().err
    assert main(["run", "harrington2003/table1", "--resolve"]) == 2
    assert "--resolve goes with --cfg job" in capsys.readouterr().err


def test_unknown_option_shows_the_commands_usage(capsys):
    with pytest.raises(SystemExit) as e:
        main(["run", "harrington2003/table1", "--info"])
    err = capsys.readouterr().err
    assert e.value.code == 2 and "usage: rankrepro run" in err and "unrecognized arguments: --info" in err


@pytest.mark.parametrize("value", ["50,100", "[50,100]", "{a: 1, b: 2}", "'a,b'", "a\\\\,b", "choice(1,2)",
                                   "range(1,4)", "0.5", "[a,[b,c]],d", "abc"])
def test_sweep_detection_agrees_with_hydra(value):
    """The standard-library check that runs before Hydra is imported says 'sweep' exactly when
    Hydra's own parser does."""
    from hydra.core.override_parser.overrides_parser import OverridesParser

    from rankrepro.cli import is_sweep

    assert is_sweep(value) == OverridesParser.create().parse_override(f"k={value}").is_sweep_override()


@pytest.mark.parametrize("args, says", [
    (["harrington2003/table1", "algorithms.oap_bpm.params.N=50,100"],
     "is a sweep (Hydra's multirun syntax): add -m to run its values as cells of this experiment, or give the "
     "grid itself, '++algorithms.oap_bpm.grid.N=[50,100]'"),
    (["harrington2003/table1", "experiment.seed=1,2"], "'experiment.seed' takes one value per experiment"),
    (["harrington2003/table1", "-m", "experiment.seed=1,2"], "'experiment.seed' takes one value per experiment"),
    (["harrington2003/table1", "dataset=synthetic_hgo,cystic_fibrosis", "-m"], "'dataset' takes one value"),
])
def test_a_sweep_is_refused_in_one_line_pointing_to_the_grid(args, says, capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    assert main(["run", *args]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Ambiguous value" not in err and says in err, err
    if "-m" in args:
        assert "grid" in err


def test_multirun_of_a_param_is_its_grid(capsys, monkeypatch):
    """-m key=a,b of an algorithm's hyperparameter is the grid written by hand, config for config."""
    monkeypatch.chdir(ROOT)
    assert main(["run", "harrington2003/table1", "-m", "algorithms.oap_bpm.params.tau=0.05,0.3,0.6,0.9",
                 "--cfg", "job", "--resolve"]) == 0
    swept = capsys.readouterr().out
    assert main(["run", "harrington2003/table1", "algorithms.oap_bpm.grid.tau=[0.05,0.3,0.6,0.9]",
                 "--cfg", "job", "--resolve"]) == 0
    assert swept == capsys.readouterr().out
    assert main(["run", "harrington2003/table1", "-m", "algorithms.oap_bpm.params.tau=range(1,3)",
                 "--cfg", "job", "--resolve"]) == 2
    assert "algorithms.oap_bpm.grid.tau" in capsys.readouterr().err


def test_multirun_runs_the_sweep_as_cells_of_one_experiment(tmp_path, monkeypatch):
    """A learner of one's own added key by key and its margin swept with -m: each value is a
    cell of fig6 (a row of its table); at margin 0 MarginPRank is PRank (its docstring), so
    that cell's numbers are PRank's cell's, trial for trial and round for round."""
    monkeypatch.chdir(ROOT)
    monkeypatch.syspath_prepend(str(ROOT / "examples" / "own_learner"))
    rc = main(["run", "crammer_singer2005/fig6", "-m", "+algorithms.mine._target_=margin_prank.MarginPRank",
               "+algorithms.mine.label=Mine", "+algorithms.mine.params.margin=0.0,0.5", "--out", str(tmp_path)])
    assert rc == 0
    res = tmp_path / "results/crammer_singer2005"
    cells = {p.stem for p in (res / "fig6/cells").glob("*.parquet")}
    assert {"mine-margin0.0", "mine-margin0.5", "prank"} <= cells
    cols = ["trial", "metric", "round", "value"]
    zero = pd.read_parquet(res / "fig6/cells/mine-margin0.0.parquet")[cols]
    pd.testing.assert_frame_equal(zero, pd.read_parquet(res / "fig6/cells/prank.parquet")[cols])
    half = pd.read_parquet(res / "fig6/cells/mine-margin0.5.parquet")[cols]
    assert not half["value"].equals(zero["value"])
    md = (res / "fig6.md").read_text()
    assert "| Mine (margin=0.0) |" in md and "| Mine (margin=0.5) |" in md


def test_tilde_removes_a_key(capsys, monkeypatch):
    """`~algorithms.<key>` (Hydra's deletion) drops that learner's cells and leaves every other
    cell as it was (same id, same fingerprint); a key of the schema cannot go, in one line."""
    import yaml

    from rankrepro.pipeline.catalog import load_experiment
    from rankrepro.pipeline.cells import cell_fingerprint

    monkeypatch.chdir(ROOT)
    name = "arena/online_synthetic"
    full = load_experiment(name, "smoke")
    less = load_experiment(name, "smoke", overrides=["~algorithms.oap_bpm"])
    kept = {c.id: cell_fingerprint(*full.variant_of(c)) for c in full.all_cells if c.algorithm != "oap_bpm"}
    assert len(kept) < len(full.all_cells)
    assert {c.id: cell_fingerprint(*less.variant_of(c)) for c in less.all_cells} == kept
    assert main(["run", name, "~algorithms.oap_bpm", "--cfg", "job"]) == 0
    printed = yaml.safe_load(capsys.readouterr().out)
    assert "oap_bpm" not in printed["algorithms"] and "prank" in printed["algorithms"]
    assert main(["run", "crammer_singer2005/fig6", "~experiment.figure", "--cfg", "job"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "at key 'experiment.figure'" in err and "experiment.figure=null" in err


# ------------------------------------------------------------------------------------
# the help: every command described, the arena's families, every example run
# ------------------------------------------------------------------------------------
def _helps() -> dict[str, str]:
    from rankrepro.cli import _parser

    ap = _parser()
    cmds = ap.get_default("_commands")
    return {"": ap.format_help(), **{c: p.format_help() for c, p in cmds.items()}}


def test_every_command_is_described():
    from rankrepro.cli import _parser

    ap = _parser()
    top = ap.format_help()
    for cmd, p in ap.get_default("_commands").items():
        assert p.description and len(p.description) > 40, f"`rankrepro {cmd} --help` has no description"
        line = next(ln for ln in top.splitlines() if ln.strip().startswith(cmd))
        assert len(line.split()) > 1 or cmd == "check-learner", f"`rankrepro --help` lists {cmd} without a word"


def test_arena_help_lists_every_family():
    families = sorted(p.stem for p in (ROOT / "config" / "arena").glob("*.yaml"))
    text = " ".join(_helps()["arena"].split())
    assert len(families) == 11 and f"The families: {', '.join(families)}." in text
    assert f"config/arena/<family>.yaml ({', '.join(families)})" in text


def _examples() -> list[tuple[str, str]]:
    """Every example command of every help text, continuation lines joined: (command, line); a
    command shown in two helps is run once."""
    import shlex

    out, seen = [], set()
    for cmd, text in _helps().items():
        lines = text.splitlines()
        i = 0
        while i < len(lines):
            ln = lines[i].strip()
            if ln.startswith(("rankrepro ", "PYTHONPATH=")):
                while ln.endswith("\\"):
                    i += 1
                    ln = ln[:-1] + " " + lines[i].strip()
                if tuple(shlex.split(ln, comments=True)) not in seen:
                    seen.add(tuple(shlex.split(ln, comments=True)))
                    out.append((cmd or "top", ln))
            i += 1
    return out


def test_the_help_has_examples_of_every_command():
    seen = {ln.split("rankrepro ", 1)[1].split()[0] for _, ln in _examples()}
    assert {"run", "arena", "experiments", "data-status", "check-learner", "verify"} <= seen
    assert any("-m " in ln for _, ln in _examples()) and any("'~" in ln for _, ln in _examples())


@pytest.mark.parametrize("where, line", _examples())
def test_the_help_examples_run(where, line, capsys, monkeypatch):
    """Each example of the help, run as written: `run` and `arena` with --cfg job appended (the
    whole config composed and checked, a learner of one's own imported, nothing run); the
    others for real, except `verify` (minutes of paper-scale cells), whose examples must parse
    and name experiments that exist, `report`, which would rewrite the committed report
    (tests/test_report_html.py renders it from records in a scratch folder), and `runfiles` and
    `export` (minutes of work; their own tests run them on small selections)."""
    import shlex

    from rankrepro.cli import parse_args
    from rankrepro.config_files import list_experiments

    monkeypatch.chdir(ROOT)
    words = shlex.split(line, comments=True)
    while "=" in words[0] and words[0] != "rankrepro":
        var, value = words.pop(0).split("=", 1)
        assert var == "PYTHONPATH", line
        for folder in value.split(":"):
            assert (ROOT / folder).is_dir(), f"{line}: no folder {folder}"
            monkeypatch.syspath_prepend(str(ROOT / folder))
    assert words[0] == "rankrepro", line
    argv = words[1:]
    if argv[0] == "verify":
        args = parse_args(argv)
        assert set(args.experiments) <= set(list_experiments())
        return
    if argv[0] == "report":
        assert parse_args(argv).scale == "paper"
        return
    if argv[0] == "compare":  # two runs of the reader's own: parsed (tests/test_compare_runs.py runs it)
        assert parse_args(argv).run_b
        return
    if argv[0] in ("runfiles", "export"):
        # minutes of reruns or a 75 MB export: parsed here; tests/test_runfiles.py and
        # tests/test_export.py run both on small selections
        args = parse_args(argv)
        assert set(getattr(args, "experiments", None) or []) <= set(list_experiments())
        return
    if argv[0] in ("run", "arena"):
        argv = [*argv, "--cfg", "job"]
    rc = main(argv)
    out, err = capsys.readouterr()
    assert rc == 0, f"`{line}`: {err}"
    assert out.strip(), line


def test_verify_record_refuses_a_modified_tree_before_any_work(monkeypatch, capsys):
    """A verification stamp must name a clean commit: `verify --record` from a tree whose tracked
    sources differ from HEAD stops in one line, before the catalog is loaded or a cell recomputed."""
    from rankrepro import cli, provenance
    from rankrepro.pipeline import catalog

    monkeypatch.setattr(provenance, "git_commit", lambda path=".": "f" * 40 + "+dirty")

    def no_catalog(*a, **k):
        raise AssertionError("the catalog was loaded")

    monkeypatch.setattr(catalog, "load_catalog", no_catalog)
    assert cli.main(["verify", "--record", "harrington2003/table1"]) == 2
    err = capsys.readouterr().err
    assert "commit or stash" in err and err.count("\n") == 1


def test_a_sensitivity_cells_progress_line_gives_its_own_size():
    """The cell job's first log line gives what the cell runs: the 5,000-round variant of a
    50,000-round experiment says 5000 training rounds."""
    from rankrepro.jobs import _load, cell_size_text

    exp = _load("harrington2003/table1", "paper", "config", sensitivity=("training_rounds", "5000"))
    assert "50000 training rounds" in cell_size_text(exp, "prank")
    assert "5000 training rounds" in cell_size_text(exp, "prank~training_rounds=5000")
    assert "50000" not in cell_size_text(exp, "prank~training_rounds=5000")


# -- the command line never writes the committed outputs (issue "Reliability IV", item 2) -----------------
# Before: `rankrepro run harrington2003/table1 --scale paper --out .` replaced the committed
# results/report/index.html, rewrote results/harrington2003/table1.* and left a lock in the checkout's
# root; export and runfiles wrote wherever --out said.  Each command line below ends in a mistake the old
# code stops at before writing (a typo, an unknown name), so that a regression fails here without
# touching the checkout; the new code refuses the --out first.
@pytest.mark.parametrize("argv, where", [
    (["run", "harrington2003/table1", "--scale", "paper", "--out", ".", "experiment.n_trails=3"], "the checkout itself"),
    (["run", "harrington2003/table1", "--out", "results", "experiment.n_trails=3"], "inside the committed results/"),
    (["run", "harrington2003/table1", "--out", "results/../results/x", "experiment.n_trails=3"],
     "inside the committed results/"),
    (["run", "harrington2003/table1", "--out", "figures/mine", "experiment.n_trails=3"], "inside the committed figures/"),
    (["arena", "nosuch_family", "--out", "."], "the checkout itself"),
    (["export", "nosuch", "--out", "results/export"], "inside the committed results/"),
    (["export", "nosuch", "--out", "."], "the checkout itself"),
    (["runfiles", "nosuch/exp", "--out", "figures"], "inside the committed figures/"),
])
def test_out_into_the_checkout_or_its_committed_outputs_is_refused(argv, where, capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    before = (ROOT / "results/report/index.html").stat().st_mtime_ns
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and err.startswith(f"rankrepro: error: {argv[0]} --out "), err
    assert where in err and "never writes into the checkout's root, results/ or figures/" in err
    assert "e.g. the default runs/" in err
    assert (ROOT / "results/report/index.html").stat().st_mtime_ns == before
    assert not (ROOT / ".rankrepro.lock").exists()


def test_out_through_a_link_into_results_is_refused(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    (tmp_path / "out").symlink_to(ROOT / "results" / "harrington2003")
    assert main(["run", "harrington2003/table1", "--out", str(tmp_path / "out"), "experiment.n_trails=3"]) == 2
    assert "inside the committed results/" in capsys.readouterr().err


@pytest.mark.parametrize("cmd", ["export", "runfiles", "run"])
def test_an_empty_out_is_refused(cmd, capsys, monkeypatch):
    """Before: `export --out ''` wrote DATA_DICTIONARY.md and the tables into the working folder."""
    monkeypatch.chdir(ROOT)
    what = {"export": ["export", "nosuch"], "runfiles": ["runfiles", "nosuch/exp"],
            "run": ["run", "harrington2003/table1", "experiment.n_trails=3"]}[cmd]
    assert main([*what, "--out", ""]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"rankrepro: error: {cmd} --out '': names no folder") and "\n" not in err, err
