"""Invalid configs, one edit each: every one refused when it loads, before any job, by a
ConfigError naming the real key (never 'defaults') and what is allowed.

Value edits are applied to a composed experiment and loaded through ``load_resolved`` (the path
every job takes; it runs the same validation as ``load_experiment``, which the workflow calls
when it starts); edits of the YAML text itself (syntax, interpolation, types) go through
``load_experiment`` on a scratch copy of config/.
"""

from __future__ import annotations

import math
import re
import shutil

import pytest
import yaml
from omegaconf import OmegaConf

from rankrepro.pipeline.catalog import ConfigError, load_experiment, load_resolved

from conftest import ROOT

T1, FIG6, CF, EM, F7, YU, T5, FIG4 = ("harrington2003/table1", "crammer_singer2005/fig6",
                                      "harrington2003/table2_cystic_fibrosis", "harrington2003/table2_eachmovie",
                                      "crammer_singer2005/fig7_min100", "yu2006/tables", "elsas2008/table5",
                                      "shivaswamy2012/fig4")


@pytest.fixture(scope="module")
def composed():
    """Each base experiment composed once (smoke scale) as a plain dict."""
    out = {}
    for n in (T1, FIG6, CF, EM, F7, YU, T5, FIG4):
        out[n] = OmegaConf.to_container(load_experiment(n, "smoke", config_dir=ROOT / "config").cfg)
    return out


def _walk(d, path):
    """The container and last key of a dotted path with [i] indices."""
    toks = re.findall(r"[^.\[\]]+|\[\d+\]", path)
    for t in toks[:-1]:
        d = d[int(t[1:-1])] if t.startswith("[") else d[t]
    last = toks[-1]
    return d, (int(last[1:-1]) if last.startswith("[") else last)


def put(path, value):
    def edit(cfg):
        d, k = _walk(cfg, path)
        d[k] = value
    return edit


def both(*edits):
    def edit(cfg):
        for e in edits:
            e(cfg)
    return edit


def claim(i, **kv):
    def edit(cfg):
        cfg["experiment"]["claims"][i].update(kv)
    return edit


def add_claim(**kv):
    def edit(cfg):
        cfg["experiment"]["claims"].append({"id": "extra", "text": "t", "metric": cfg["experiment"]["metrics"][0],
                                            "lhs": {}, **kv})
    return edit


def pub(i, **kv):
    def edit(cfg):
        cfg["experiment"]["published"][i].update(kv)
    return edit


def dparam(k, v):
    return put(f"dataset.params.{k}", v)


NAN, INF = math.nan, math.inf

# (experiment, edit, key named in the error, words of the message)
CASES = [
    # --- experiment sizes, seed, kind, metrics, protocol --------------------------------------
    (T1, put("experiment.n_trials", 0), "experiment.n_trials", ">= 1"),
    (T1, put("experiment.n_trials", -3), "experiment.n_trials", ">= 1"),
    (T1, put("experiment.n_train", 0), "experiment.n_train", ">= 1"),
    (T1, put("experiment.n_test", -1), "experiment.n_test", ">= 0"),
    (T1, put("experiment.n_test", 0), "experiment.n_test", "a test metric needs n_test >= 1"),
    (T1, put("experiment.seed", -1), "experiment.seed", ">= 0"),
    (T1, put("experiment.seed", 2**64), "experiment.seed", "0..2^63-1"),
    (T1, put("experiment.seed", 2**63), "experiment.seed", "0..2^63-1"),
    (T1, put("experiment.curve_points", 0), "experiment.curve_points", ">= 1"),
    (T1, put("experiment.kind", "chart"), "experiment.kind", "'table' or 'figure'"),
    (T1, put("experiment.paper", "harrington2004"), "experiment.paper", "folder name"),
    (T1, put("experiment.artefact", "table9"), "experiment.artefact", "file name"),
    (T1, put("experiment.protocol", "offline"), "experiment.protocol", "unknown protocol"),
    (T1, put("experiment.features", "cubic"), "experiment.features", "unknown feature map"),
    (T1, put("experiment.metrics", []), "experiment.metrics", "at least one metric"),
    (T1, put("experiment.metrics", ["test_rank_loss", "accuracy"]), "experiment.metrics[1]", "unknown metric"),
    (FIG6, put("experiment.figure", None), "experiment.figure", "needs a 'figure' block"),
    (T1, put("experiment.n_trials", "many"), "experiment.n_trials", "could not be converted"),
    (T1, put("experiment.n_trainz", 5), "experiment.n_trainz", "not in 'ExperimentCfg'"),
    # --- scale ------------------------------------------------------------------------------
    (T1, put("scale.max_train", 0), "scale.max_train", ">= 1 or null"),
    (T1, put("scale.max_trials", -1), "scale.max_trials", ">= 1 or null"),
    (T1, put("scale.curve_points", 0), "scale.curve_points", ">= 1 or null"),
    # --- dataset: builder, n_ranks, source, builder parameters ---------------------------------
    (T1, put("dataset.builder", "synthetic_xyz"), "dataset.builder", "unknown data-set builder"),
    (T1, put("dataset.n_ranks", 1), "dataset.n_ranks", ">= 2"),
    (T1, put("dataset.n_ranks", 4), "dataset.n_ranks", "len(thresholds) + 1 = 5"),
    (T1, put("dataset.source", "cystic-fibrosis"), "dataset.source", "takes no downloaded data"),
    (CF, put("dataset.source", "cystic-fibrosiz"), "dataset.source", "unknown data set"),
    (CF, put("dataset.source", None), "dataset.source", "needs downloaded data"),
    (T1, dparam("noise", 0.1), "dataset.params.noise", "takes no parameter"),
    (T1, dparam("data_path", "x.npz"), "dataset.params.data_path", "takes no parameter"),
    (T1, dparam("noise_sd", -0.1), "dataset.params.noise_sd", "a finite number >= 0"),
    (T1, dparam("noise_sd", "high"), "dataset.params.noise_sd", "a finite number >= 0"),
    (T1, dparam("noise_sd", NAN), "dataset.params.noise_sd", "a finite number >= 0"),
    (T1, dparam("noise_sd", INF), "dataset.params.noise_sd", "a finite number >= 0"),
    (T1, dparam("scale", 0), "dataset.params.scale", "a finite number > 0"),
    (T1, dparam("thresholds", [-1.0, 0.25, -0.1, 1.0]), "dataset.params.thresholds", "strictly increasing"),
    (T1, dparam("thresholds", [-1.0, -1.0, 0.25, 1.0]), "dataset.params.thresholds", "strictly increasing"),
    (T1, dparam("thresholds", []), "dataset.params.thresholds", "non-empty"),
    (T1, dparam("thresholds", [-1.0, "b", 0.25, 1.0]), "dataset.params.thresholds", "finite numbers"),
    (T1, dparam("thresholds", [-1.0, 0.0, 1.0]), "dataset.n_ranks", "len(thresholds) + 1 = 4"),
    (CF, dparam("instance_values", "ranks"), "dataset.params.instance_values", "'rank', 'score', 'centred'"),
    (CF, dparam("min_judged", 5), "dataset.params.min_judged", "1..4"),
    (CF, dparam("min_judged", 0), "dataset.params.min_judged", "1..4"),
    (CF, dparam("constant_feature", "yes"), "dataset.params.constant_feature", "true or false"),
    (CF, put("dataset.n_ranks", 5), "dataset.n_ranks", "= 3"),
    (CF, put("experiment.n_test", 100_000), "experiment.n_test", "exceeds 4,819"),
    (CF, put("experiment.n_train", 4300), "experiment.n_test", "exceeds 4,819"),
    (EM, put("experiment.n_train", 250), "experiment.n_test", "exceeds 300"),
    (EM, dparam("first", 0), "dataset.params.first", "an integer >= 1"),
    (EM, dparam("instance_norm", "l2"), "dataset.params.instance_norm", "'none', 'unit'"),
    (EM, dparam("min_ratings", -5), "dataset.params.min_ratings", "an integer >= 1"),
    (EM, dparam("strict", 1), "dataset.params.strict", "true or false"),
    (F7, dparam("min_ratings", 0.5), "dataset.params.min_ratings", "an integer >= 1"),
    (YU, dparam("n_tasks", 0), "dataset.params.n_tasks", "an integer >= 1"),
    (FIG4, dparam("dims", [5, 0]), "dataset.params.dims", "integers >= 1"),
    (FIG4, dparam("regs", [0.1, -1.0]), "dataset.params.regs", "numbers > 0"),
    (FIG4, dparam("sweeps", 0), "dataset.params.sweeps", "an integer >= 1"),
    # --- algorithms -------------------------------------------------------------------------
    (T1, put("algorithms", {}), "algorithms", "at least one algorithm"),
    (T1, put("algorithms.prank.estimator", "prank2"), "algorithms.prank.estimator", "unknown estimator"),
    (T1, put("algorithms.oap_bpm.grid.tau", [0.0, 0.5]), "algorithms.oap_bpm.grid.tau[0]", "tau=0.0"),
    (T1, put("algorithms.oap_bpm.grid.tau", []), "algorithms.oap_bpm.grid.tau", "non-empty list"),
    (T1, put("algorithms.oap_bpm.params.N", 0), "algorithms.oap_bpm.params.N", "N=0"),
    (T1, put("algorithms.prank.params.gamma", 1), "algorithms.prank.params.gamma", "no hyperparameter 'gamma'"),
    (T1, put("algorithms.widrow_hoff.grid.eta", [-0.1]), "algorithms.widrow_hoff.grid.eta[0]", "eta=-0.1"),
    (T1, put("algorithms.prank.color", "notacolour"), "algorithms.prank.color", "not a matplotlib colour"),
    (T1, put("algorithms.prank.color", "#12345"), "algorithms.prank.color", "not a matplotlib colour"),
    (T1, put("algorithms.prank.marker", "Q"), "algorithms.prank.marker", "not a matplotlib marker"),
    (T1, put("algorithms.prank.linestyle", "~~"), "algorithms.prank.linestyle", "not a matplotlib linestyle"),
    (FIG6, put("algorithms.mcp.linestyle", "dotty"), "algorithms.mcp.linestyle", "not a matplotlib linestyle"),
    (FIG6, put("algorithms.mcp.marker", "star"), "algorithms.mcp.marker", "not a matplotlib marker"),
    # --- published values -------------------------------------------------------------------
    (T1, pub(0, mean=NAN), "experiment.published[0].mean", "finite number"),
    (T1, pub(0, mean=INF), "experiment.published[0].mean", "finite number"),
    (T1, pub(0, ci=-0.01), "experiment.published[0].ci", ">= 0"),
    (T1, pub(0, ci=NAN), "experiment.published[0].ci", ">= 0"),
    (T1, pub(0, metric="mae"), "experiment.published[0].metric", "not computed"),
    (T1, pub(0, round=10), "experiment.published[0].round", "not a curve"),
    (T1, pub(0, select={"algorithm": "oap_vp"}), "experiment.published[0].select", "exactly one cell"),
    (T1, pub(0, select={"algorithm": "oap_vpx", "tau": 0.3}), "experiment.published[0].select", "exactly one cell"),
    (T1, pub(0, select={"algorithm": "oap_vp", "tau": 0.3, "eta": 0.7}), "experiment.published[0].select.eta",
     "no cell has eta=0.7"),
    (T1, pub(0, select={"algorithm": "oap_vp", "tau": [0.3, 0.4]}), "experiment.published[0].select.tau",
     "no cell has tau=0.4"),
    (T1, pub(0, select={"algorithm": "oap_vp", "tau": 0.3, "colour": 1}), "experiment.published[0].select.colour",
     "neither a selector key"),
    (F7, add_claim(kind="less", lhs={"algorithm": "prank"}, rhs={"algorithm": "mcp"}, rounds=[0, None]),
     "experiment.claims[-1].rounds[0]", "rounds start at 1"),
    # --- claims -----------------------------------------------------------------------------
    (T1, claim(0, kind="better"), "experiment.claims[0].kind", "must be 'less'"),
    (T1, claim(0, metric="mae"), "experiment.claims[0].metric", "not computed"),
    (FIG6, claim(1, id="mcp_worst"), "experiment.claims[1].id", "duplicate claim id 'mcp_worst'"),
    (FIG6, claim(0, rounds=[5000, 100]), "experiment.claims[0].rounds", "first round 5000 must come before"),
    (FIG6, claim(0, rounds=[9000, None]), "experiment.claims[0].rounds[0]", "beyond the 8000 rounds"),
    (FIG6, claim(0, rounds=[500, 100]), "experiment.claims[0].rounds", "must come before"),
    (FIG6, claim(0, rounds=[10, 9000]), "experiment.claims[0].rounds[1]", "beyond the 8000 rounds"),
    (FIG6, claim(0, rounds=[10]), "experiment.claims[0].rounds", "[first, last]"),
    (FIG6, claim(0, rounds=[10, 20, 30]), "experiment.claims[0].rounds", "[first, last]"),
    (FIG6, claim(0, rounds=[-5, None]), "experiment.claims[0].rounds[0]", "start at 1"),
    (T1, claim(0, rounds=[10, None]), "experiment.claims[0].rounds", "not a curve"),
    (T5, claim(0, factor=-45), "experiment.claims[0].factor", "> 0"),
    (T5, claim(0, factor=0), "experiment.claims[0].factor", "> 0"),
    (T5, claim(0, factor=NAN), "experiment.claims[0].factor", "> 0"),
    (FIG6, claim(0, kind="spread", factor=2.0), "experiment.claims[0].factor", "only a 'less' claim"),
    (FIG6, claim(0, lhs={"algorithm": ["prank", "ghost"]}), "experiment.claims[0].lhs.algorithm",
     "no cell has algorithm='ghost'"),
    (FIG6, claim(0, rhs={"algorithm": "ghost"}), "experiment.claims[0].rhs", "selects no cell"),
    (FIG6, claim(0, lhs={"algorithm": "prank", "tau": 0.3}), "experiment.claims[0].lhs.tau", "neither a selector key"),
    (FIG6, claim(0, lhs={"algorithm": "widrow_hoff", "eta": [0.1, 0.3]}), "experiment.claims[0].lhs.eta",
     "no cell has eta=0.3"),
    (FIG6, claim(0, lhs={"cell": ["prank", "prank-x"]}), "experiment.claims[0].lhs.cell", "no cell has cell='prank-x'"),
    (FIG6, claim(0, lhs={"estimator": ["prank", "oap_bpm"]}), "experiment.claims[0].lhs.estimator", "no cell has estimator"),
    (FIG6, claim(0, lhs={"estimator": "oap_bpm"}), "experiment.claims[0].lhs", "selects no cell"),
    (FIG6, claim(0, lhs={"algorithm": "prank", "best": "yes"}), "experiment.claims[0].lhs.best", "true or false"),
    (FIG6, claim(4, rhs={"algorithm": "si_prank"}), "experiment.claims[4].rhs", "no lhs cell can be compared"),
    (YU, claim(0, match=["n_items", "kernel"]), "experiment.claims[0].match[1]", "not a hyperparameter"),
    (F7, claim(4, over="tau"), "experiment.claims[4].over", "at least two values"),
    (F7, claim(4, over=None), "experiment.claims[4].over", "needs 'over'"),
    (F7, claim(4, expect=3), "experiment.claims[4].expect", "not among the lhs cells' values"),
    (F7, claim(4, expect=None), "experiment.claims[4].expect", "needs 'expect'"),
    (F7, claim(4, lhs={"algorithm": "prank"}), "experiment.claims[4].lhs", "at least two cells"),
    (F7, claim(3, lhs={"algorithm": "si_prank"}), "experiment.claims[3].lhs", "at least two cells"),
    (FIG6, claim(0, kind="falls", expect=0.5, lhs={"algorithm": "prank"}, rounds=None, metric="online_rank_loss"),
     None, None),  # valid: a control case
    (T1, add_claim(kind="falls", expect=0.5, lhs={"algorithm": "prank"}, metric="test_rank_loss"), "experiment.claims[-1].metric",
     "compares two rounds of a curve"),
    (FIG6, add_claim(kind="falls", expect=-1, lhs={"algorithm": "prank"}), "experiment.claims[-1].expect",
     "needs 'expect'"),
    (FIG6, add_claim(kind="levels", expect=1.5, lhs={"algorithm": "prank"}), "experiment.claims[-1].expect",
     "in (0, 1]"),
    (FIG6, add_claim(kind="monotone", over="eta", lhs={"algorithm": "widrow_hoff"}, stat="median"),
     "experiment.claims[-1].stat", "'mean' or 'ci'"),
    (FIG6, add_claim(kind="monotone", over="eta", lhs={"algorithm": "widrow_hoff"}, direction="up"),
     "experiment.claims[-1].direction", "'increasing' or 'decreasing'"),
    (FIG6, add_claim(kind="monotone", over="eta", lhs={"algorithm": "prank"}), "experiment.claims[-1].over",
     "at least two values"),
    (FIG6, add_claim(kind="argmin", over="eta", expect=NAN, lhs={"algorithm": "widrow_hoff"}),
     "experiment.claims[-1].expect", "finite number"),
    # --- figure -----------------------------------------------------------------------------
    (FIG6, put("experiment.figure.xscale", "logarithmic"), "experiment.figure.xscale", "not a matplotlib scale"),
    (FIG6, put("experiment.figure.xscale", "Log"), "experiment.figure.xscale", "not a matplotlib scale"),
    (FIG6, put("experiment.figure.ylim", [1.0, 0.0]), "experiment.figure.ylim", "low < high"),
    (FIG6, put("experiment.figure.ylim", [0.0]), "experiment.figure.ylim", "[low, high]"),
    (FIG6, put("experiment.figure.ylim", [0.0, NAN]), "experiment.figure.ylim", "finite"),
    (FIG6, put("experiment.figure.ylim", [0.0, 1.0, 2.0]), "experiment.figure.ylim", "[low, high]"),
    (FIG6, put("experiment.figure.metric", "test_rank_loss"), "experiment.figure.metric", "not computed"),
    (FIG6, put("experiment.figure.panels", [{"metric": "mae"}]), "experiment.figure.panels[0].metric", "not computed"),
    (FIG6, put("experiment.figure.panels", [{"select": [{"algorithm": "ghost"}]}]),
     "experiment.figure.panels[0].select[0]", "selects no cell"),
]

# claims appended at the end are named by their index
def _fix_index(key, cfg):
    if key and "[-1]" in key:
        return key.replace("claims[-1]", f"claims[{len(cfg['experiment']['claims']) - 1}]")
    return key


@pytest.mark.parametrize("exp_name, edit, key, words", CASES,
                         ids=[f"{i}-{c[2]}" for i, c in enumerate(CASES)])
def test_invalid_value_is_refused_naming_the_key(tmp_path, composed, exp_name, edit, key, words):
    import copy

    cfg = copy.deepcopy(composed[exp_name])
    edit(cfg)
    path = tmp_path / "resolved.yaml"
    path.write_text(yaml.safe_dump(cfg, sort_keys=False, allow_unicode=True))
    if key is None:  # a control: a valid edit loads
        load_resolved(path, exp_name, "smoke", sensitivity=False)
        return
    with pytest.raises(ConfigError) as ei:
        load_resolved(path, exp_name, "smoke", sensitivity=False)
    err = ei.value
    assert err.key == _fix_index(key, cfg), str(err)
    assert err.key != "defaults" and words in str(err), str(err)
    assert "\n" not in str(err)


def test_table_is_large():
    assert sum(1 for c in CASES if c[2] is not None) >= 100


# -------------------------------------------------------------------------------------
# YAML text: syntax, interpolation and types, through load_experiment on a scratch config/
# -------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    d = tmp_path_factory.mktemp("cfg") / "config"
    shutil.copytree(ROOT / "config", d)
    return d


TEXT_CASES = [
    ("  seed: 2003", "  seed: 2003\n  seed: 7", "experiment.seed", "duplicate key seed"),
    ("  n_trials: 20", "  n_trials: [1, 2\n  x: 3", "experiment.n_trials", "invalid YAML"),
    ('  title: "', '  title: "${oc.env:RANKREPRO_SURELY_UNSET_VAR}', "experiment.title", "RANKREPRO_SURELY_UNSET_VAR"),
    ('  title: "', '  title: "${experiment.ghost}', "experiment.title", "experiment.ghost"),
    ("mean: 0.32", "mean: abc", "experiment.published[0].mean", "could not be converted to Float"),
    ("  n_trials: 20", "  n_trials: twenty", "experiment.n_trials", "could not be converted"),
    ("  n_test: 1000", "  n_test: 1e9", "experiment.n_test", "could not be converted"),
    ("  seed: 2003", "  seed: 2003\n  sead: 1", "experiment.sead", "not in 'ExperimentCfg'"),
]


@pytest.mark.parametrize("old, new, key, words", TEXT_CASES, ids=[c[2] for c in TEXT_CASES])
def test_yaml_text_errors_name_the_key(scratch, old, new, key, words):
    p = scratch / "experiment" / "harrington2003" / "table1.yaml"
    orig = p.read_text()
    assert old in orig
    p.write_text(orig.replace(old, new, 1))
    try:
        with pytest.raises(ConfigError) as ei:
            load_experiment(T1, "smoke", config_dir=scratch)
    finally:
        p.write_text(orig)
    assert ei.value.key == key and words in str(ei.value), str(ei.value)


def test_cross_field_errors_stop_load_experiment_too(scratch):
    """The workflow's own entry point refuses the same values (before any job is planned)."""
    p = scratch / "experiment" / "harrington2003" / "table2_cystic_fibrosis.yaml"
    orig = p.read_text()
    p.write_text(orig.replace("  n_test: 572", "  n_test: 100000", 1))
    try:
        with pytest.raises(ConfigError) as ei:
            load_experiment(CF, "smoke", config_dir=scratch)
    finally:
        p.write_text(orig)
    assert ei.value.key == "experiment.n_test" and "exceeds 4,819" in str(ei.value)
