"""PRank and OAP-BPM per user on Yu et al.'s collaborative task (rankrepro.algorithms.per_user):
the kernel learners are the package's PRank and OAP-BPM on an exact feature map of the kernel
(the same predictions as on explicit features, and as a dual PRank written out here), each
user's rule keeps its thresholds ordered and depends on its own labels only, the seeds repeat
bit for bit, the classes pass the conformance checks, and the arena's collaborative
experiments run them beside the paper's GP cells (the same computations as the paper's)."""
import json
from pathlib import Path

import numpy as np
import pytest

from conftest import NO_MIRROR, data_mirror
from rankrepro.algorithms import OAPBPM, PRank
from rankrepro.algorithms.feature_maps import cosine_kernel
from rankrepro.algorithms.per_user import PerUserOAPBPM, PerUserPRank, kernel_features
from rankrepro.conformance import run_checks
from rankrepro.pipeline.catalog import load_experiment
from rankrepro.pipeline.cells import cell_fingerprint
from rankrepro.report.arena import ArenaError, entering_cells, load_arena

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "config"
SIZES = (100, 200, 300, 400)
GP_MODELS = ("gpr", "cgpr", "gpor", "cgpor")


def _task(rng, n_items=80, n_users=4, d=6, density=0.7, k=5):
    """Items with explicit features X, ranks of ``n_users`` users (0 = missing) that depend on
    X, and a draw of training items."""
    X = rng.normal(size=(n_items, d))
    Y = np.zeros((n_users, n_items), dtype=np.int64)
    for u in range(n_users):
        s = X @ rng.normal(size=d) + 0.3 * rng.normal(size=n_items)
        Y[u] = np.digitize(s, np.quantile(s, np.linspace(0, 1, k + 1)[1:-1])) + 1
        Y[u, rng.random(n_items) > density] = 0
    train = np.sort(rng.permutation(n_items)[: n_items * 2 // 3])
    return X, Y, train, np.setdiff1d(np.arange(n_items), train)


def _primal(model, X, Y, train, test, make):
    """Each user's predictions by the package's learner ``make(seed)`` on the explicit features,
    visiting the user's training items in the order the kernel model uses."""
    out = []
    for u in range(Y.shape[0]):
        j = np.flatnonzero(Y[u, train] > 0)
        order_seed, learner_seed = model.user_seeds(train, u)
        order, learner = np.random.default_rng(order_seed), make(learner_seed)
        for _ in range(model.n_passes):
            v = order.permutation(j.size)
            learner.fit_online(X[train[j[v]]], Y[u, train[j[v]]])
        out.append((learner.predict(X[test]), np.asarray(learner.thresholds_)))
    return out


@pytest.mark.parametrize("d", [6, 120], ids=["rank_deficient", "full_rank"])
@pytest.mark.parametrize("which", ["prank", "oap_bpm"])
def test_the_kernel_learner_is_the_primal_learner_on_explicit_features(which, d):
    rng = np.random.default_rng(d)
    X, Y, train, test = _task(rng, d=d)
    K = X @ X.T
    if which == "prank":
        model = PerUserPRank(n_passes=3, seed=5)
        make = lambda s: PRank(n_ranks=5)  # noqa: E731
    else:
        model = PerUserOAPBPM(n_passes=2, N=20, tau=0.3, seed=5)
        make = lambda s: OAPBPM(n_ranks=5, N=20, tau=0.3, seed=s)  # noqa: E731
    fit = model.fit_predict_kernel(K, Y, train, test)
    for u, (pred, thresholds) in enumerate(_primal(model, X, Y, train, test, make)):
        assert np.array_equal(fit.pred[u], pred), u
        assert np.allclose(fit.thresholds[u], thresholds), u
    if d < len(train):  # fewer dimensions than examples: each rule predicts better than the middle rank
        seen = Y[:, test] > 0
        mae = np.mean(np.abs(np.stack(fit.pred) - Y[:, test])[seen])
        assert mae < np.mean(np.abs(3 - Y[:, test])[seen])


def _dual_prank(K, y, order, train, test, k):
    """PRank in dual form (Crammer & Singer 2005, Fig. 2, with w = sum_t alpha_t phi(x_t)),
    written out independently of the package's code: one pass over ``train[order]``."""
    alpha, b = np.zeros(len(train)), np.zeros(k - 1)
    for i in order:
        s = alpha @ K[train, train[i]]
        yhat = next((r + 1 for r in range(k - 1) if s - b[r] < 0), k)
        if yhat != y[i]:
            yr = np.where(y[i] <= np.arange(1, k), -1.0, 1.0)
            tau = np.where((s - b) * yr <= 0, yr, 0.0)
            b -= tau
            alpha[i] += tau.sum()
    scores = K[np.ix_(test, train)] @ alpha
    return np.array([next((r + 1 for r in range(k - 1) if s - b[r] < 0), k) for s in scores]), b


def test_the_kernel_prank_is_the_dual_prank_on_a_correlation_kernel():
    rng = np.random.default_rng(11)
    ratings = rng.normal(size=(90, 40)) * (rng.random((90, 40)) < 0.5)  # items x feature users
    K = cosine_kernel(ratings)
    _, Y, train, test = _task(rng, n_items=90, n_users=3)
    Y = Y * (rng.random(Y.shape) < 0.9)
    model = PerUserPRank(seed=2)
    fit = model.fit_predict_kernel(K, Y, train, test)
    for u in range(3):
        j = np.flatnonzero(Y[u, train] > 0)
        order = np.random.default_rng(model.user_seeds(train, u)[0]).permutation(j.size)
        pred, b = _dual_prank(K, Y[u, train[j]], order, train[j], test, 5)
        assert np.array_equal(fit.pred[u], pred), u
        assert np.array_equal(fit.thresholds[u], b), u


def test_the_feature_map_reproduces_the_kernel_where_prank_reads_it():
    rng = np.random.default_rng(3)
    V = rng.normal(size=(50, 30))
    K = cosine_kernel(V)
    train, rest = np.arange(0, 50, 2), np.arange(1, 50, 2)
    Zt, Zp = kernel_features(K, train, rest)
    assert np.allclose(Zt @ Zt.T, K[np.ix_(train, train)], atol=1e-12)
    assert np.allclose(Zp @ Zt.T, K[np.ix_(rest, train)], atol=1e-12)


@pytest.mark.parametrize("cls", [PerUserPRank, PerUserOAPBPM])
def test_every_users_thresholds_stay_ordered(cls):
    rng = np.random.default_rng(4)
    X, Y, train, test = _task(rng, n_users=8, d=10)
    fit = cls(n_passes=4, seed=1).fit_predict_kernel(cosine_kernel(X), Y, train, test)
    assert fit.thresholds.shape == (8, 4)
    assert np.all(np.diff(fit.thresholds, axis=1) >= 0)
    assert np.any(fit.thresholds != 0)  # the rules were updated
    if cls is PerUserPRank:  # PRank's thresholds move by whole units (Crammer & Singer, Lemma 1)
        assert np.array_equal(fit.thresholds, np.round(fit.thresholds))
    assert len(fit.objective) == 4 and all(0 <= v <= 4 for v in fit.objective)


@pytest.mark.parametrize("cls", [PerUserPRank, PerUserOAPBPM])
def test_one_users_labels_change_no_other_users_predictions(cls):
    rng = np.random.default_rng(5)
    X, Y, train, test = _task(rng, n_users=4)
    K = cosine_kernel(X)
    model = cls(seed=3)
    before = model.fit_predict_kernel(K, Y, train, test)
    Y2 = Y.copy()
    Y2[1] = rng.integers(0, 6, size=Y.shape[1])  # user 1: other ranks, other movies rated
    after = model.fit_predict_kernel(K, Y2, train, test)
    assert not np.array_equal(before.pred[1], after.pred[1])
    for u in (0, 2, 3):
        assert np.array_equal(before.pred[u], after.pred[u]), u
        assert np.array_equal(before.thresholds[u], after.thresholds[u]), u


def test_seeds_repeat_bit_for_bit_and_streams_follow_the_seed_and_the_draw():
    rng = np.random.default_rng(6)
    X, Y, train, test = _task(rng, n_users=5)
    K = cosine_kernel(X)
    runs = [PerUserOAPBPM(N=10, seed=s).fit_predict_kernel(K, Y, train, test) for s in (9, 9, 10)]
    assert all(np.array_equal(a, b) for a, b in zip(runs[0].pred, runs[1].pred))
    assert np.array_equal(runs[0].thresholds, runs[1].thresholds)
    assert not np.array_equal(runs[0].thresholds, runs[2].thresholds)
    # the streams of a user: per seed, per draw of training items, per user; order and learner apart
    m = PerUserOAPBPM(seed=9)
    other_draw = np.sort(np.r_[train[1:], test[0]])
    keys = {tuple(ss.generate_state(2)) for ss in (*m.user_seeds(train, 0), *m.user_seeds(train, 1),
                                                   *m.user_seeds(other_draw, 0), *PerUserOAPBPM(seed=10).user_seeds(train, 0))}
    assert len(keys) == 8
    # PRank and OAP-BPM visit a user's items in the same order (common random numbers)
    assert PerUserPRank(seed=9).user_seeds(train, 2)[0].generate_state(2).tolist() == \
        m.user_seeds(train, 2)[0].generate_state(2).tolist()


@pytest.mark.parametrize("cls", [PerUserPRank, PerUserOAPBPM])
def test_the_per_user_learners_pass_the_conformance_checks(cls):
    checks = run_checks(cls)
    assert [c.name for c in checks if not c.passed] == [], [(c.name, c.why) for c in checks if not c.passed]
    assert len(checks) == 8


def test_the_protocols_iteration_cap_caps_the_passes():
    assert PerUserPRank(n_passes=5).passes == 5 and PerUserPRank(n_passes=5, em_iters=2).passes == 2
    rng = np.random.default_rng(8)
    X, Y, train, test = _task(rng)
    assert len(PerUserPRank(n_passes=5, em_iters=2).fit_predict_kernel(cosine_kernel(X), Y, train, test).objective) == 2


# -- the arena's collaborative family ---------------------------------------------------------
def test_each_arena_size_is_the_papers_experiment_at_that_size_with_the_two_learners():
    paper = load_experiment("yu2006/tables", "paper", config_dir=CONFIG)
    ours = {c.id: c for c in paper.cells}
    assert not [c for c in paper.cells if "per_user" in c.estimator]  # the paper's experiment has no new cell
    for n in SIZES:
        exp = load_experiment(f"arena/collab_gp_n{n}", "paper", config_dir=CONFIG)
        e, p = exp.cfg.experiment, paper.cfg.experiment
        assert (e.protocol, e.seed, exp.n_trials, list(e.metrics)) == (p.protocol, p.seed, paper.n_trials, list(p.metrics))
        assert exp.cfg.dataset == paper.cfg.dataset
        assert e.paper == "arena" and not e.claims and not e.published and not e.sensitivity
        assert [c.id for c in exp.cells] == [f"{a}-n_items{n}" for a in (*GP_MODELS, "prank", "oap_bpm")]
        for c in exp.cells:
            if c.algorithm in GP_MODELS:  # the paper's cell: the same computation (config, seeds, code)
                assert cell_fingerprint(exp, c) == cell_fingerprint(paper, ours[c.id]), c.id
            else:
                assert c.estimator.startswith("rankrepro.algorithms.per_user.PerUser") and c.params == {"n_items": n}


@pytest.mark.parametrize("family,metric", [("collab_gp", "mae"), ("collab_gp_zero_one", "zero_one"),
                                           ("collab_gp_amae", "amae"), ("collab_gp_qwk", "qwk")])
def test_the_collaborative_families_compare_the_six_models_over_the_sizes(family, metric):
    arena = load_arena(family, CONFIG)
    assert arena.metric == metric and arena.blocks == "fold"
    assert arena.experiments == [f"arena/collab_gp_n{n}" for n in SIZES]
    assert arena.labels == {f"arena/collab_gp_n{n}": f"{n} training movies" for n in SIZES}
    exps = {n: load_experiment(n, "smoke", config_dir=CONFIG) for n in arena.experiments}
    cells = entering_cells(arena, exps)
    assert set(cells) == {*GP_MODELS, "prank", "oap_bpm"}
    assert cells["oap_bpm"] == {f"arena/collab_gp_n{n}": f"oap_bpm-n_items{n}" for n in SIZES}


def test_a_label_of_no_member_is_refused(tmp_path):
    conf = tmp_path / "config"
    (conf / "arena").mkdir(parents=True)
    text = ("title: t\nexperiments: [arena/collab_gp_n100, arena/collab_gp_n200]\nmetric: mae\nbetter: lower\n"
            "blocks: fold\nlabels: {arena/collab_gp_n300: x}\n")
    (conf / "arena" / "fam.yaml").write_text(text)
    with pytest.raises(ArenaError) as err:
        load_arena("fam", conf)
    assert err.value.key == "labels.arena/collab_gp_n300"


@pytest.mark.skipif(data_mirror() is None, reason=NO_MIRROR)
def test_the_collaborative_family_runs_at_smoke_scale(tmp_path, repo_data, monkeypatch):
    """`rankrepro arena collab_gp` at smoke scale (2 draws, 12 users, 2 EM iterations): every
    size's six models and the comparison; the GP cells are the paper experiment's own."""
    from rankrepro.cli import run_arena
    from rankrepro.pipeline.runner import run_cell

    monkeypatch.chdir(repo_data.parent)
    rec = run_arena("collab_gp", [], "smoke", jobs=1, out=tmp_path)
    assert rec["friedman"]["k"] == 6 and rec["friedman"]["n"] == 8  # 4 sizes x 2 draws
    assert [e["dataset"] for e in rec["experiments"]] == [f"{n} training movies" for n in SIZES]
    for r in rec["learners"]:
        assert all(v["n"] == 2 and 0 < v["mean"] < 4 for v in r["values"].values()), r["key"]
    assert {r["label"] for r in rec["learners"]} >= {"PRank (per user)", "OAP-BPM (per user)"}
    assert len(rec["pairwise"]) == 15
    assert (tmp_path / "figures" / "arena" / "comparison" / "cd_collab_gp.png").stat().st_size > 0
    # the arena's GPR cell is the paper experiment's cell, value for value
    import pandas as pd

    mine = pd.read_parquet(tmp_path / "results" / "arena" / "collab_gp_n100" / "cells" / "gpr-n_items100.parquet")
    paper = run_cell(load_experiment("yu2006/tables", "smoke", config_dir=CONFIG), "gpr-n_items100")
    keep = ["trial", "metric", "value"]
    a = mine[mine["metric"].isin(["mae", "zero_one"])][keep].reset_index(drop=True)
    b = paper[paper["metric"].isin(["mae", "zero_one"])][keep].reset_index(drop=True)
    assert a.equals(b)
    table = json.loads((tmp_path / "results" / "arena" / "collab_gp_n400.json").read_text())
    assert {c["id"] for c in table["cells"]} == {f"{a}-n_items400" for a in (*GP_MODELS, "prank", "oap_bpm")}
