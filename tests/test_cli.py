"""The command line as a user meets it: `rankrepro run EXPERIMENT key=value ...` runs one
experiment with Hydra-style overrides, validated as configs are; a mistake prints one line
naming the key, with a "did you mean" for a typo, and no traceback; --help renders cleanly."""
import json
import subprocess
import sys

import pandas as pd
import pytest

from conftest import ROOT
from rankrepro.cli import main


def test_run_one_experiment_at_smoke_scale(tmp_path, monkeypatch):
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
    """Narrowing a grid under a published value: the error names the selector, with no
    made-up 'did you mean' (the key exists; the value is what is wrong)."""
    monkeypatch.chdir(ROOT)
    assert main(["run", "harrington2003/table1", "algorithms.oap_bpm.grid.tau=[0.1,0.3]"]) == 2
    err = capsys.readouterr().err.strip()
    assert "at key 'experiment.published[" in err and "did you mean" not in err


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
