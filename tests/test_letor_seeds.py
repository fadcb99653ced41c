"""The LETOR seeds protocol (Elsas et al. 2008 replicated over the learners' own randomness):
a trial is one seed run over the five fixed folds, its value the five-fold mean; deterministic
learners run once; the published number is compared as one draw (a prediction interval); the
claims are paired over the test queries of the five folds, n_needed counting queries.
Each rule is checked against a hand computation or scipy."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from rankrepro.claims import Claim, Context
from rankrepro.claims import evaluate as evaluate_claim
from rankrepro.claims.testing import adjust
from rankrepro.pipeline.catalog import load_experiment
from rankrepro.pipeline.config_errors import ConfigError
from rankrepro.protocols.letor_seeds import combine_folds, fold_seed
from rankrepro.stats import Interval, draw_difference_interval, t_interval

CONFIG = Path(__file__).resolve().parents[1] / "config"


# ------------------------------------------------------------------ one trial = a five-fold mean
def test_a_seed_is_the_five_fold_mean_by_hand():
    # two folds, by hand: test_map 0.2 and 0.5 -> 0.35; a curve at steps 1-2 (fold 2 stops at 1:
    # only step 1 is common); queries pass through, one per query id
    by_fold = {
        1: [("valid_ndcg@10", 1, 0.1), ("valid_ndcg@10", 2, 0.3), ("test_map", None, 0.2),
            ("query_map", 11, 0.1), ("query_map", 12, 0.3), ("selected_step", None, 2.0)],
        2: [("valid_ndcg@10", 1, 0.5), ("test_map", None, 0.5), ("query_map", 21, 0.5),
            ("selected_step", None, 1.0)],
    }
    rows = combine_folds(by_fold)
    got = {(m, r): v for m, r, v in rows}
    assert got[("test_map", None)] == pytest.approx(0.35)
    assert got[("selected_step", None)] == pytest.approx(1.5)
    assert got[("fold_test_map", 1)] == 0.2 and got[("fold_test_map", 2)] == 0.5
    assert got[("fold_selected_step", 1)] == 2.0 and got[("fold_selected_step", 2)] == 1.0
    assert got[("valid_ndcg@10", 1)] == pytest.approx(0.3)
    assert ("valid_ndcg@10", 2) not in got
    assert sorted(r for m, r, _ in rows if m == "query_map") == [11, 12, 21]


def test_fold_seeds_differ_by_fold_and_are_reproducible():
    s = np.random.SeedSequence(2008, spawn_key=(3, 1, 77))
    a = [fold_seed(s, f).generate_state(2).tolist() for f in (1, 2, 3, 4, 5)]
    assert len({tuple(x) for x in a}) == 5
    assert a == [fold_seed(s, f).generate_state(2).tolist() for f in (1, 2, 3, 4, 5)]


def test_seeds_trial_on_real_folds_is_the_mean_of_the_fold_trials(repo_data, monkeypatch):
    """letor_seeds_trial = letor_trial on each fold with that fold's seed, averaged (smoke-size steps)."""
    from rankrepro.protocols.letor import LetorSpec, letor_trial
    from rankrepro.protocols.letor_seeds import LetorSeedsSpec, letor_seeds_trial

    monkeypatch.chdir(repo_data.parent)
    path = "data/processed/letor2-ohsumed/data.npz"
    seed = np.random.SeedSequence(5, spawn_key=(0, 1, 9))
    params = {"output": "pocket", "n_iter": 2, "alpha": 0.85}
    spec = LetorSeedsSpec(estimator="perceptron", params=params, builder="letor_folds", metrics=("test_map",),
                          data_path=path, algo_seed=seed, max_steps=2, folds=(1, 2))
    rows = {(m, r): v for m, r, v in letor_seeds_trial(spec)}
    per = []
    for f in (1, 2):
        one = letor_trial(LetorSpec(estimator="perceptron", params=params, builder="letor_folds", fold=f,
                                    metrics=("test_map",), data_path=path, algo_seed=fold_seed(seed, f), max_steps=2))
        per.append(next(v for m, r, v in one if m == "test_map"))
        assert rows[("fold_test_map", f)] == per[-1]
    assert rows[("test_map", None)] == pytest.approx(np.mean(per))


# ------------------------------------------------------------------ deterministic learners once
def test_deterministic_learners_run_once_and_perceptrons_per_seed():
    e = load_experiment("elsas2008/table4_ohsumed", "paper", config_dir=CONFIG)
    assert e.cfg.experiment.protocol == "letor_seeds" and e.n_trials >= 10
    n = {c.id: e.variant_of(c)[0].cell_trials(e.variant_of(c)[1]) for c in e.all_cells}
    for c in ("ranksvm", "rankboost", "lambdamart"):
        assert n[c] == 1
    for c in ("pocket", "average", "com_a", "com_b"):
        assert n[c] == e.n_trials
    # file order draws nothing: its sensitivity cells run once
    assert n["com_a~pair_order=file"] == 1
    for name in ("table4_td2003", "table4_td2004", "fig1"):
        x = load_experiment(f"elsas2008/{name}", "paper", config_dir=CONFIG)
        assert x.cfg.experiment.protocol == "letor_seeds" and x.n_trials >= 5


def test_the_arena_keeps_the_by_fold_protocol():
    e = load_experiment("arena/letor_ohsumed", "paper", config_dir=CONFIG)
    assert e.cfg.experiment.protocol == "letor" and e.n_trials == 5
    assert all(e.cell_trials(c) == 5 for c in e.cells)


def test_run_cell_runs_a_deterministic_cell_once(repo_data, monkeypatch):
    from rankrepro.pipeline.runner import run_cell

    monkeypatch.chdir(repo_data.parent)
    e = load_experiment("elsas2008/table4_ohsumed", "smoke", config_dir=CONFIG)
    df = run_cell(e, "rankboost")
    assert sorted(set(df["trial"])) == [0]
    assert sorted(df.loc[df["metric"] == "fold_test_map", "round"]) == [1, 2, 3, 4, 5]
    folds = df.loc[df["metric"] == "fold_test_map", "value"].to_numpy()
    assert df.loc[df["metric"] == "test_map", "value"].iloc[0] == pytest.approx(folds.mean())


@pytest.mark.parametrize("override,key", [
    ("experiment.compare=median", "experiment.compare"),
    ("experiment.claims_unit=folds", "experiment.claims_unit"),
    ("+algorithms.ranksvm.deterministic=true", "algorithms.ranksvm.deterministic"),
])
def test_config_errors_name_the_key(override, key):
    name = "elsas2008/table4_ohsumed" if "algorithms" not in override else "arena/letor_ohsumed"
    override = override.replace("+", "") if "algorithms" in override else override
    with pytest.raises(ConfigError) as err:
        load_experiment(name, "smoke", overrides=[override], config_dir=CONFIG)
    assert err.value.key == key, str(err.value)


def test_claims_unit_queries_needs_per_query_values():
    with pytest.raises(ConfigError) as err:
        load_experiment("harrington2003/table1", "smoke", overrides=["experiment.claims_unit=queries"],
                        config_dir=CONFIG)
    assert err.value.key == "experiment.claims_unit"


# ------------------------------------------------------------------ the published number as one draw
def test_prediction_interval_by_hand():
    x = np.array([0.431, 0.442, 0.428, 0.451, 0.437, 0.445, 0.433, 0.440, 0.426, 0.447])
    rep = t_interval(x)
    d = draw_difference_interval(rep, 0.447)
    n, sd = len(x), x.std(ddof=1)
    half = sps.t.ppf(0.975, n - 1) * sd * np.sqrt(1 + 1 / n)
    assert d.difference == pytest.approx(x.mean() - 0.447)
    assert d.half_width == pytest.approx(half, rel=1e-9)
    assert d.df == n - 1 and d.basis == "draw"
    # wider than the mean's interval by sqrt(n + 1)
    assert d.half_width == pytest.approx(rep.half_width * np.sqrt(n + 1), rel=1e-9)
    # a printed-rounding bound adds to it
    assert draw_difference_interval(rep, 0.447, bound=0.0005).half_width == pytest.approx(half + 0.0005)


def test_one_deterministic_run_has_no_sampling_spread():
    d = draw_difference_interval(Interval(0.45, float("nan"), 1), 0.447)
    assert d.basis == "deterministic" and d.half_width == 0.0 and d.se == 0.0
    assert d.difference == pytest.approx(0.003) and not d.contains_zero


# ------------------------------------------------------------------ claims over the test queries
def _trials(rng) -> pd.DataFrame:
    """Two cells over 5 folds x 6 queries: 'svm' once (deterministic), 'com' over 3 seeds."""
    rows = []
    qids = {f: [100 * f + j for j in range(6)] for f in range(1, 6)}
    base = {q: rng.uniform(0.2, 0.6) for f in qids for q in qids[f]}
    for f, qs in qids.items():
        vals = [base[q] for q in qs]
        rows += [("svm", 0, "query_map", q, v) for q, v in zip(qs, vals)]
        rows.append(("svm", 0, "fold_test_map", f, float(np.mean(vals))))
    for s in range(3):
        fold_means = []
        for f, qs in qids.items():
            vals = [base[q] + 0.01 + rng.normal(0, 0.05) for q in qs]
            rows += [("com", s, "query_map", q, v) for q, v in zip(qs, vals)]
            rows.append(("com", s, "fold_test_map", f, float(np.mean(vals))))
            fold_means.append(np.mean(vals))
        rows.append(("com", s, "test_map", None, float(np.mean(fold_means))))
    svm_folds = [r[4] for r in rows if r[0] == "svm" and r[2] == "fold_test_map"]
    rows.append(("svm", 0, "test_map", None, float(np.mean(svm_folds))))
    df = pd.DataFrame(rows, columns=["cell", "trial", "metric", "round", "value"])
    df["round"] = df["round"].astype("Int64")
    return df


class _Cell:
    def __init__(self, cid):
        self.id, self.label, self.algorithm, self.params = cid, cid, cid, {}


def _summary(trials):
    t = trials[trials["metric"] == "test_map"]
    rows = []
    for cid, g in t.groupby("cell"):
        iv = t_interval(g["value"].to_numpy())
        rows.append((cid, cid, cid, "test_map", None, iv.n, iv.mean, iv.half_width, iv.low, iv.high))
    s = pd.DataFrame(rows, columns=["cell", "algorithm", "label", "metric", "round", "n", "mean", "ci", "low", "high"])
    s["round"] = s["round"].astype("Int64")
    return s


def test_claim_paired_over_pooled_queries_matches_scipy():
    rng = np.random.default_rng(4)
    trials = _trials(rng)
    claim = Claim(id="c", text="svm below com", kind="less", metric="test_map", lhs={"algorithm": "svm"},
                  rhs={"algorithm": "com"})
    cells = {"svm": _Cell("svm"), "com": _Cell("com")}
    r = evaluate_claim(claim, _summary(trials), lambda sel: [cells[sel["algorithm"]]], trials, unit="queries")
    q = trials[trials["metric"] == "query_map"]
    svm = q[q["cell"] == "svm"].set_index("round")["value"].sort_index()
    com = q[q["cell"] == "com"].groupby("round")["value"].mean().sort_index()
    assert list(svm.index) == list(com.index) and len(svm) == 30
    p = sps.ttest_rel(com.to_numpy(), svm.to_numpy(), alternative="greater").pvalue
    assert r.stats["p_held"] == pytest.approx(p, rel=1e-9)
    assert r.stats["unit"] == "queries" and "30 test queries" in r.evidence
    # the by-fold test kept beside: each fold's value averaged over the seeds, paired over 5 folds
    f = trials[trials["metric"] == "fold_test_map"]
    fs = f[f["cell"] == "svm"].set_index("round")["value"].sort_index()
    fc = f[f["cell"] == "com"].groupby("round")["value"].mean().sort_index()
    pf = sps.ttest_rel(fc.to_numpy(), fs.to_numpy(), alternative="greater").pvalue
    assert r.stats["by_fold"]["p_held"] == pytest.approx(pf, rel=1e-9)
    # by trials (the default unit) the claim pairs the single common trial and is not over queries
    r2 = evaluate_claim(claim, _summary(trials), lambda sel: [cells[sel["algorithm"]]], trials)
    assert "unit" not in r2.stats


def test_n_needed_counts_queries():
    rng = np.random.default_rng(11)
    trials = _trials(rng)
    # make the difference small so that the claim is inconclusive
    q = trials["metric"] == "query_map"
    trials.loc[q & (trials["cell"] == "com"), "value"] -= 0.0095
    claim = Claim(id="c", text="svm below com", kind="less", metric="test_map", lhs={"algorithm": "svm"},
                  rhs={"algorithm": "com"})
    cells = {"svm": _Cell("svm"), "com": _Cell("com")}
    r = evaluate_claim(claim, _summary(trials), lambda sel: [cells[sel["algorithm"]]], trials, unit="queries")
    adjust([r])
    assert r.verdict == "inconclusive"
    pq = trials[q]
    d = (pq[pq["cell"] == "svm"].set_index("round")["value"].sort_index()
         - pq[pq["cell"] == "com"].groupby("round")["value"].mean().sort_index()).to_numpy()
    # an independent power computation (noncentral t, scipy): the smallest n of queries with
    # power >= 0.8 for the one-sided test at the family-of-one level 0.05 / 2
    eff = abs(d.mean()) / d.std(ddof=1)
    level = 0.05 / 2

    def power(n):
        crit = sps.t.ppf(1 - level, n - 1)
        return 1 - sps.nct.cdf(crit, n - 1, eff * np.sqrt(n))

    n = 2
    while power(n) < 0.8:
        n += 1
    assert r.stats["n_needed"] == n
    assert n > 30  # more queries than the five folds hold, never a count of folds
    assert f"about {n} queries would decide it" in r.evidence
