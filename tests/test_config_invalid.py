"""Table-driven: every invalid config stops at load, naming the real key, before any job.

Two paths, both through the loader's own code:

* ``DIRECT`` cases change one value of an experiment as composed at smoke scale (composed
  once per experiment and cached) and run the loader's validation (``validate.validate``)
  on the copy: the value passes the structured schema (its type is right) and must be
  refused by a range or cross-field check.  ``test_direct_cases_agree_with_overrides``
  checks on a sample that a Hydra override of the same value gives the same key;
* ``COMPOSED`` cases go through :func:`load_experiment` itself: wrong types, YAML syntax
  errors and duplicate keys in an edited file, unresolvable interpolations.
"""
from __future__ import annotations

import copy
import functools
import math
import shutil
from pathlib import Path

import pytest
from omegaconf import OmegaConf, open_dict

from rankrepro.pipeline.catalog import load_experiment
from rankrepro.pipeline.config_errors import ConfigError
from rankrepro.pipeline.validate import validate

CONFIG = Path(__file__).resolve().parents[1] / "config"

T1 = "harrington2003/table1"
F2 = "harrington2003/fig2"
CF = "harrington2003/table2_cystic_fibrosis"
EM = "harrington2003/table2_eachmovie"
C6 = "crammer_singer2005/fig6"
C7 = "crammer_singer2005/fig7_min100"
E4 = "elsas2008/table4_ohsumed"
S2 = "shivaswamy2012/fig2"
S3 = "shivaswamy2012/fig3"
S4 = "shivaswamy2012/fig4"


@functools.lru_cache(maxsize=None)
def _composed(name: str):
    return load_experiment(name, "smoke", config_dir=CONFIG).cfg


def _dup_claim(cfg):
    claims = list(cfg.experiment.claims)
    cfg.experiment.claims = claims + [claims[0]]


NAN, INF = math.nan, math.inf

# (experiment, {dotted key: new value} or a function of the config, the key the error must name)
DIRECT = [
    # experiment sizes and identity
    (T1, {"experiment.n_trials": 0}, "experiment.n_trials"),
    (T1, {"experiment.n_train": 0}, "experiment.n_train"),
    (T1, {"experiment.n_test": -1}, "experiment.n_test"),
    (T1, {"experiment.seed": -1}, "experiment.seed"),
    (T1, {"experiment.seed": 2**64}, "experiment.seed"),
    (T1, {"experiment.curve_points": 0}, "experiment.curve_points"),
    (T1, {"experiment.kind": "chart"}, "experiment.kind"),
    (T1, {"experiment.paper": "harrington2004"}, "experiment.paper"),
    (T1, {"experiment.artefact": "table9"}, "experiment.artefact"),
    (T1, {"experiment.protocol": "batch"}, "experiment.protocol"),
    (T1, {"experiment.features": "poly3"}, "experiment.features"),
    (T1, {"experiment.metrics": []}, "experiment.metrics"),
    (T1, {"experiment.metrics": ["test_rank_loss", "rank_los"]}, "experiment.metrics[1]"),
    # a registered metric its protocol never computes (it would give no rows)
    (T1, {"experiment.metrics": ["test_rank_loss", "qwk"]}, "experiment.metrics[1]"),
    (E4, {"experiment.metrics": ["test_map", "test_qwk"]}, "experiment.metrics[1]"),
    # the by-fold LETOR protocol (the arena's; Elsas et al.'s configs replicate over seeds: letor_seeds)
    ("arena/letor_ohsumed", {"experiment.n_trials": 6}, "experiment.n_trials"),
    (E4, {"experiment.metrics": ["test_map", "fold_test_map"]}, "experiment.metrics[1]"),
    # sizes against the data set's size (registry statistics)
    (CF, {"experiment.n_test": 100_000}, "experiment.n_test"),
    (CF, {"experiment.n_train": 5_000}, "experiment.n_train"),
    (EM, {"experiment.n_train": 400}, "experiment.n_train"),
    (EM, {"experiment.n_test": 200}, "experiment.n_test"),
    (C7, {"experiment.n_train": 5_000}, "experiment.n_train"),
    # data set and generator
    (T1, {"dataset.n_ranks": 1}, "dataset.n_ranks"),
    (T1, {"dataset.n_ranks": 4}, "dataset.n_ranks"),
    (T1, {"dataset.params.noise_sd": -0.1}, "dataset.params.noise_sd"),
    (T1, {"dataset.params.noise_sd": "loud"}, "dataset.params.noise_sd"),
    (T1, {"dataset.params.noise_sd": NAN}, "dataset.params.noise_sd"),
    (T1, {"dataset.params.noise_sd": True}, "dataset.params.noise_sd"),
    (T1, {"dataset.params.scale": 0.0}, "dataset.params.scale"),
    (T1, {"dataset.params.thresholds": [-1.0, 0.5, 0.25, 1.0]}, "dataset.params.thresholds"),
    (T1, {"dataset.params.thresholds": [-1.0, -1.0, 0.25, 1.0]}, "dataset.params.thresholds"),
    (T1, {"dataset.params.thresholds": [-1.0, "x", 0.25, 1.0]}, "dataset.params.thresholds"),
    (T1, {"dataset.params.thresholds": [-1.0, 0.25, 1.0]}, "dataset.n_ranks"),
    (T1, {"dataset.builder": "synthetic_hgx"}, "dataset.builder"),
    (T1, {"dataset.source": "cystic-fibrosis"}, "dataset.source"),
    (T1, {"dataset.params.bogus": 1}, "dataset.params.bogus"),
    (CF, {"dataset.source": "cystic-fibrosys"}, "dataset.source"),
    (CF, {"dataset.params.min_judged": 5}, "dataset.params.min_judged"),
    (CF, {"dataset.params.min_judged": 1.5}, "dataset.params.min_judged"),
    (CF, {"dataset.params.instance_values": "raw"}, "dataset.params.instance_values"),
    (CF, {"dataset.n_ranks": 5}, "dataset.n_ranks"),
    (EM, {"dataset.params.strict": "yes"}, "dataset.params.strict"),
    (EM, {"dataset.params.first": -3}, "dataset.params.first"),
    # scale caps
    (T1, {"scale.max_trials": 0}, "scale.max_trials"),
    (T1, {"scale.max_train": 0}, "scale.max_train"),
    (T1, {"scale.max_test": -1}, "scale.max_test"),
    (T1, {"scale.curve_points": 0}, "scale.curve_points"),
    (T1, {"scale.max_steps": 0}, "scale.max_steps"),
    (T1, {"scale.max_users": 0}, "scale.max_users"),
    # algorithms, their hyperparameters and their line styles
    (T1, {"algorithms.oap_bpm.grid.tau": [0.0, 0.5]}, "algorithms.oap_bpm.grid.tau[0]"),
    (T1, {"algorithms.oap_bpm.grid.tau": [0.5, 1.5]}, "algorithms.oap_bpm.grid.tau[1]"),
    (T1, {"algorithms.oap_bpm.grid.tau": []}, "algorithms.oap_bpm.grid.tau"),
    (T1, {"algorithms.oap_bpm.params.N": 0}, "algorithms.oap_bpm.params.N"),
    (T1, {"algorithms.widrow_hoff.grid.eta": [-0.1]}, "algorithms.widrow_hoff.grid.eta[0]"),
    (T1, {"algorithms.prank.estimator": "prankk"}, "algorithms.prank.estimator"),
    (T1, {"algorithms.oap_bpm.params.taux": 0.3}, "algorithms.oap_bpm.params.taux"),
    (T1, {"algorithms.oap_bpm.color": "notacolour"}, "algorithms.oap_bpm.color"),
    (T1, {"algorithms.oap_bpm.color": "#12345"}, "algorithms.oap_bpm.color"),
    (T1, {"algorithms.prank.marker": "zz"}, "algorithms.prank.marker"),
    (T1, {"algorithms.prank.linestyle": "~~"}, "algorithms.prank.linestyle"),
    (T1, {"algorithms.prank.linestyle": "dotdash"}, "algorithms.prank.linestyle"),
    (E4, {"algorithms.com_a.params.committee": 0}, "algorithms.com_a.params.committee"),
    # published values
    (T1, {"experiment.published.0.mean": NAN}, "experiment.published[0].mean"),
    (T1, {"experiment.published.0.mean": INF}, "experiment.published[0].mean"),
    (T1, {"experiment.published.0.ci": -0.01}, "experiment.published[0].ci"),
    (T1, {"experiment.published.0.ci": NAN}, "experiment.published[0].ci"),
    (T1, {"experiment.published.0.metric": "online_rank_loss_x"}, "experiment.published[0].metric"),
    (T1, {"experiment.published.0.select": {"algorithm": "oap_vp", "tau": 0.4}}, "experiment.published[0].select"),
    (T1, {"experiment.published.0.select": {"algorithm": "oap_vp"}}, "experiment.published[0].select"),
    (T1, {"experiment.published.0.select": {"algorithm": ["oap_vp", "ghost"], "tau": 0.3}},
     "experiment.published[0].select.algorithm"),
    (T1, {"experiment.published.0.select": {"algorithm": "oap_vp", "tau": 0.3, "gamma": 1}},
     "experiment.published[0].select.gamma"),
    (T1, {"experiment.published.0.round": 10}, "experiment.published[0].round"),
    # claims
    (T1, _dup_claim, "experiment.claims[3].id"),
    (T1, {"experiment.claims.0.kind": "bigger"}, "experiment.claims[0].kind"),
    (T1, {"experiment.claims.0.metric": "online_rank_loss_x"}, "experiment.claims[0].metric"),
    (T1, {"experiment.claims.0.lhs": {"algorithm": "ghost"}}, "experiment.claims[0].lhs"),
    (T1, {"experiment.claims.0.lhs": {"algorithm": ["oap_bpm", "ghost"]}}, "experiment.claims[0].lhs.algorithm"),
    (T1, {"experiment.claims.0.lhs": {"algorithm": "oap_bpm", "tau": [0.3, 0.45]}}, "experiment.claims[0].lhs.tau"),
    (T1, {"experiment.claims.0.lhs": {"algorithm": "oap_bpm", "best": "yes"}}, "experiment.claims[0].lhs.best"),
    (T1, {"experiment.claims.0.rhs": {"cell": "prank-x"}}, "experiment.claims[0].rhs"),
    (T1, {"experiment.claims.0.rhs": {"estimator": ["prank", "oap_bpn"]}}, "experiment.claims[0].rhs.estimator"),
    (T1, {"experiment.claims.0.match": ["tau", "gamma"]}, "experiment.claims[0].match[1]"),
    (T1, {"experiment.claims.1.rhs": {"algorithm": "oap_bpm"}, "experiment.claims.1.match": ["tau"]},
     "experiment.claims[1]"),
    (T1, {"experiment.claims.0.rounds": [10, None]}, "experiment.claims[0].rounds"),
    (T1, {"experiment.claims.0.factor": -2.0}, "experiment.claims[0].factor"),
    (T1, {"experiment.claims.0.factor": 0.0}, "experiment.claims[0].factor"),
    # another solver's timing decides only a claim about time, from a record under results/
    (T1, {"experiment.claims.0.timed_solver": {"name": "S", "record": "results/x.json", "runs": [0]}},
     "experiment.claims[0].timed_solver"),
    ("elsas2008/table5", {"experiment.claims.0.timed_solver": {"name": "S", "record": "/etc/x.json", "runs": [0]}},
     "experiment.claims[0].timed_solver.record"),
    ("elsas2008/table5", {"experiment.claims.0.timed_solver": {"name": "S", "record": "results/a.json", "runs": []}},
     "experiment.claims[0].timed_solver.runs"),
    (T1, {"experiment.claims.2.over": "gamma"}, "experiment.claims[2].over"),
    (T1, {"experiment.claims.2.over": "N"}, "experiment.claims[2].over"),
    (T1, {"experiment.claims.2.stat": "median"}, "experiment.claims[2].stat"),
    (T1, {"experiment.claims.2.direction": "up"}, "experiment.claims[2].direction"),
    (T1, {"experiment.claims.2.over": None}, "experiment.claims[2].over"),
    (T1, {"experiment.claims.2.match": ["tau"]}, "experiment.claims[2].match"),
    (F2, {"experiment.claims.0.rounds": [5000, 100]}, "experiment.claims[0].rounds"),
    (F2, {"experiment.claims.0.rounds": [0, None]}, "experiment.claims[0].rounds"),
    (F2, {"experiment.claims.0.rounds": [10]}, "experiment.claims[0].rounds"),
    (F2, {"experiment.claims.0.rounds": [10, 60000]}, "experiment.claims[0].rounds"),
    (F2, {"experiment.claims.0.rounds": [50000, None]}, "experiment.claims[0].rounds"),
    (C7, {"experiment.claims.4.over": "tau"}, "experiment.claims[4].over"),
    (C7, {"experiment.claims.4.expect": 3.0}, "experiment.claims[4].expect"),
    (C7, {"experiment.claims.4.lhs": {"algorithm": "mu_prank", "eta": 0.5}}, "experiment.claims[4].lhs"),
    (C7, {"experiment.claims.4.lhs": {"algorithm": ["mu_prank", "prank"]}}, "experiment.claims[4].over"),
    (C7, {"experiment.claims.3.lhs": {"algorithm": "prank"}}, "experiment.claims[3].lhs"),
    (S2, {"experiment.claims.0.expect": NAN}, "experiment.claims[0].expect"),
    (S2, {"experiment.claims.0.expect": -1.0}, "experiment.claims[0].expect"),
    (S3, {"experiment.claims.0.expect": 2.0}, "experiment.claims[0].expect"),
    (T1, {"experiment.claims.1.kind": "falls", "experiment.claims.1.expect": 0.5}, "experiment.claims[1].metric"),
    (S4, {"experiment.claims.1.over": "beta"}, "experiment.claims[1].over"),
    # significance
    (E4, {"experiment.significance.0.against": {"algorithm": "ghost"}}, "experiment.significance[0].against"),
    (E4, {"experiment.significance.0.level": 1.5}, "experiment.significance[0].level"),
    # figures, as matplotlib would take them
    (F2, {"experiment.figure.xscale": "loglog"}, "experiment.figure.xscale"),
    (F2, {"experiment.figure.ylim": [1.0, 0.0]}, "experiment.figure.ylim"),
    (F2, {"experiment.figure.ylim": [0.0, NAN]}, "experiment.figure.ylim"),
    (F2, {"experiment.figure.ylim": [0.0]}, "experiment.figure.ylim"),
    (F2, {"experiment.figure.metric": "test_rank_loss"}, "experiment.figure.metric"),
    (F2, {"experiment.figure.panels.0.metric": "mae"}, "experiment.figure.panels[0].metric"),
    (F2, {"experiment.figure.panels.0.select": [{"algorithm": "ghost"}]}, "experiment.figure.panels[0].select[0]"),
    (C6, {"experiment.figure": None}, "experiment.figure"),
    # builder parameters whose type alone does not say what they may be (the builders' declared tables)
    (EM, {"dataset.params.instance_norm": "l2"}, "dataset.params.instance_norm"),
    (EM, {"dataset.params.first": 0}, "dataset.params.first"),
    (C7, {"dataset.params.min_ratings": 0}, "dataset.params.min_ratings"),
    (C7, {"dataset.params.instance_norm": "unit-ish"}, "dataset.params.instance_norm"),
    ("yu2006/tables", {"dataset.params.n_tasks": 0}, "dataset.params.n_tasks"),
    ("yu2006/tables", {"dataset.params.min_item": 0}, "dataset.params.min_item"),
    (S4, {"dataset.params.dims": [5, 0]}, "dataset.params.dims"),
    (S4, {"dataset.params.dims": []}, "dataset.params.dims"),
    (S4, {"dataset.params.regs": [0.1, -1.0]}, "dataset.params.regs"),
    (S4, {"dataset.params.sweeps": 0}, "dataset.params.sweeps"),
    # a factor is read by 'less' claims only
    (C7, {"experiment.claims.3.factor": 2.0}, "experiment.claims[3].factor"),
]


def _apply(cfg, change):
    if callable(change):
        change(cfg)
        return
    with open_dict(cfg):  # a key the schema allows (a hyperparameter, a builder parameter) may be new
        for k, v in change.items():
            OmegaConf.update(cfg, k, v, merge=False)


@pytest.mark.parametrize("experiment,change,key", DIRECT,
                         ids=[f"{e.split('/')[1]}:{k}:{i}" for i, (e, _, k) in enumerate(DIRECT)])
def test_invalid_value_names_its_key(experiment, change, key):
    cfg = copy.deepcopy(_composed(experiment))
    _apply(cfg, change)
    with pytest.raises(ConfigError) as err:
        validate(experiment, "smoke", cfg)
    assert err.value.key == key, str(err.value)
    assert f"at key '{key}'" in str(err.value)


SAMPLE_OVERRIDES = [
    (CF, "experiment.n_test=100000", "experiment.n_test"),
    (T1, "experiment.seed=18446744073709551616", "experiment.seed"),
    (T1, "experiment.published.0.mean=nan", "experiment.published[0].mean"),
    (F2, "experiment.claims.0.rounds=[5000,100]", "experiment.claims[0].rounds"),
    (T1, "algorithms.prank.marker=zz", "algorithms.prank.marker"),
    (T1, "dataset.params.noise_sd=-1", "dataset.params.noise_sd"),
]


@pytest.mark.parametrize("experiment,override,key", SAMPLE_OVERRIDES)
def test_direct_cases_agree_with_overrides(experiment, override, key):
    with pytest.raises(ConfigError) as err:
        load_experiment(experiment, "smoke", overrides=[override], config_dir=CONFIG)
    assert err.value.key == key, str(err.value)


@pytest.fixture(scope="module")
def edited_config(tmp_path_factory):
    """A copy of config/ whose files the tests edit and restore."""
    dst = tmp_path_factory.mktemp("cfg") / "config"
    shutil.copytree(CONFIG, dst)
    return dst


# (file, edit: text -> text, key named); each is composed with load_experiment(T1) on the copy
EDITS = [
    ("algorithm/oap_bpm.yaml", lambda t: t + "label: again\n", "algorithms.oap_bpm.label"),
    ("algorithm/oap_bpm.yaml", lambda t: t + "params: {N: [1, }\n", "algorithms.oap_bpm.params"),
    ("algorithm/oap_bpm.yaml", lambda t: t + "colour: red\n", "algorithms.oap_bpm.colour"),
    ("experiment/harrington2003/table1.yaml", lambda t: t.replace("  n_trials: 20\n", "  n_trials: [20\n"),
     "experiment.n_trials"),
    ("experiment/harrington2003/table1.yaml", lambda t: t.replace("  seed: 2003\n", "  seed: 2003\n  seed: 7\n"),
     "experiment.seed"),
    ("experiment/harrington2003/table1.yaml", lambda t: t.replace("mean: 0.32, ci: 0.01", "mean: 0.3x2, ci: 0.01", 1),
     "experiment.published[0].mean"),
    ("experiment/harrington2003/table1.yaml", lambda t: t.replace('title: "', 'title: "${oc.env:RANKREPRO_NO_SUCH_VAR} ', 1),
     "experiment.title"),
    ("dataset/synthetic_hgo.yaml", lambda t: t + "n_ranks: 5\n", "dataset.n_ranks"),
    ("dataset/synthetic_hgo.yaml", lambda t: t.replace("noise_sd: 0.125", "noise_sd: [0.125"), "dataset.params.noise_sd"),
]


@pytest.mark.parametrize("rel,edit,key", EDITS, ids=[f"{r}:{k}" for r, _, k in EDITS])
def test_edited_file_error_names_key(edited_config, rel, edit, key):
    f = edited_config / rel
    original = f.read_text()
    f.write_text(edit(original))
    try:
        with pytest.raises(ConfigError) as err:
            load_experiment(T1, "smoke", config_dir=edited_config)
    finally:
        f.write_text(original)
    assert err.value.key == key, str(err.value)
    assert err.value.key != "defaults"


OVERRIDES = [
    ("experiment.n_trials=many", "experiment.n_trials"),
    ("+experiment.n_trails=3", "experiment.n_trails"),
    ("+algorithms.oap_bpm.colour=red", "algorithms.oap_bpm.colour"),
    ("experiment.published.0.mean=abc", "experiment.published[0].mean"),
    ("experiment.title=${experiment.ghost}", "experiment.title"),
    ("experiment.n_test=${oc.env:RANKREPRO_NO_SUCH_VAR}", "experiment.n_test"),
    ("experiment.claims.0.factor=fast", "experiment.claims[0].factor"),
]


@pytest.mark.parametrize("override,key", OVERRIDES)
def test_bad_override_names_key(override, key):
    with pytest.raises(ConfigError) as err:
        load_experiment(T1, "smoke", overrides=[override], config_dir=CONFIG)
    assert err.value.key == key, str(err.value)


def test_table_covers_every_group():
    groups = {k.split(".")[0] if not k.startswith("experiment.") else k.split(".")[1].split("[")[0]
              for _, _, k in DIRECT}
    assert {"n_trials", "seed", "published", "claims", "significance", "figure", "dataset", "scale",
            "algorithms"} <= groups
    assert len(DIRECT) + len(SAMPLE_OVERRIDES) + len(EDITS) + len(OVERRIDES) >= 100
