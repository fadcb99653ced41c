"""Hydra's overrides on the papers' own experiments (issue 57, item 3): a learner removed or
swept by the user takes with it the published values, claims and choices that compare it, said
in one line; the committed configs stay strictly checked; hydra.run.dir is the output folder,
other hydra.* settings are refused in one line; --cfg job says the scale's caps in effect."""
import shutil

import pytest

from conftest import ROOT
from rankrepro.cli import main


@pytest.mark.parametrize("argv, says", [
    (["harrington2003/table1", "~algorithms.oap_bpm"],
     "dropped published rows oap_bpm tau=0.3, oap_bpm tau=0.6, oap_bpm tau=0.9 and claims bpm_lowest_each_tau"),
    (["crammer_singer2005/fig6", "~algorithms.mcp"], "claims mcp_worst"),
    (["harrington2003/table1", "-m", "algorithms.oap_bpm.params.N=50,100"],
     "they need oap_bpm, swept by your override"),
])
def test_removing_or_sweeping_a_learner_drops_what_needs_it_in_one_line(argv, says, capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    assert main(["run", *argv, "--cfg", "job", "--resolve"]) == 0
    out, err = capsys.readouterr()
    assert len(err.strip().splitlines()) == 1 and says in err, err
    assert "config error" not in err and "experiment:" in out


def test_a_dropped_entry_is_gone_from_the_resolved_config(monkeypatch):
    from rankrepro.pipeline.catalog import load_experiment

    monkeypatch.chdir(ROOT)
    exp = load_experiment("harrington2003/table1", "smoke", overrides=["~algorithms.oap_bpm"])
    assert not any(p.select.get("algorithm") == "oap_bpm" for p in exp.cfg.experiment.published)
    assert {c.id for c in exp.cfg.experiment.claims}.isdisjoint({"bpm_lowest_each_tau", "bpm_beats_wh"})
    assert len(exp.cfg.experiment.published) == 9  # the other learners' published rows stay
    # the experiment without overrides keeps every entry and says nothing
    assert load_experiment("harrington2003/table1", "smoke").override_note == ""


def test_a_committed_typo_still_fails_under_an_override(tmp_path):
    """Dropping is for what the user's override took away: a selector wrong in the committed
    config itself still stops, at its key, even when the user's override touches that learner."""
    from rankrepro.pipeline.catalog import load_experiment
    from rankrepro.pipeline.config_errors import ConfigError

    cfg = tmp_path / "config"
    shutil.copytree(ROOT / "config", cfg)
    p = cfg / "experiment/harrington2003/table1.yaml"
    p.write_text(p.read_text().replace("{algorithm: oap_bpm, tau: 0.3}", "{algorithm: oap_bpm, tau: 0.33}", 1))
    with pytest.raises(ConfigError, match=r"published\[6\]\.select"):
        load_experiment("harrington2003/table1", "smoke", overrides=["~algorithms.oap_bpm"], config_dir=cfg)
    with pytest.raises(ConfigError, match=r"published\[6\]\.select"):
        load_experiment("harrington2003/table1", "smoke", overrides=["experiment.n_trials=3"], config_dir=cfg)


def test_hydra_run_dir_is_the_output_folder_and_other_hydra_keys_are_refused(capsys, monkeypatch, tmp_path):
    from rankrepro.cli.overrides import hydra_settings

    assert hydra_settings(["experiment.seed=1", f"hydra.run.dir={tmp_path}"], None) == (["experiment.seed=1"], str(tmp_path))
    monkeypatch.chdir(ROOT)
    for o in ("hydra.job.chdir=true", "hydra.run.dir=a"):
        extra = ["--out", str(tmp_path)] if o == "hydra.run.dir=a" else []
        assert main(["run", "harrington2003/table1", o, *extra, "--cfg", "job"]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and o in err, err


def test_cfg_job_says_the_scale_caps_in_effect(capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    assert main(["run", "crammer_singer2005/fig6", "--cfg", "job"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith("# scale smoke, in effect: n_trials 2 (written 100), n_train 400 (written 8000)"), first


def test_cfg_job_prints_the_config_without_what_was_dropped(capsys, monkeypatch):
    import yaml

    monkeypatch.chdir(ROOT)
    assert main(["run", "crammer_singer2005/fig6", "~algorithms.mcp", "--cfg", "job"]) == 0
    printed = yaml.safe_load(capsys.readouterr().out)["experiment"]
    assert "mcp_worst" not in [c["id"] for c in printed["claims"]]
    assert "mcp_ties" not in [s["choice"] for s in printed["sensitivity"]]
    assert {"algorithm": "mcp"} not in printed["figure"]["panels"][0]["select"]
