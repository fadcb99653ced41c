"""Claims are tested as the design allows (fidelity IV, item 4): paired t-tests on the per-trial
differences where the cells share their trials (common random numbers), Welch otherwise, Holm
over the paper's claims, a symmetric rule (held / not held / inconclusive) and, for an
inconclusive claim, the trials that would decide it.  The statistics against scipy and hand
computation."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from omegaconf import OmegaConf
from scipy import stats as sps

from rankrepro.pipeline.catalog import load_experiment
from rankrepro.report.aggregate import Family, evaluate_claim, evaluate_claims, summarize
from rankrepro.stats import holm, paired_power, welch_t_greater

from test_claims import base_means, fake_trials


@pytest.fixture(scope="module")
def exp():
    return load_experiment("harrington2003/table1", "smoke")


def node(lhs, rhs):
    return OmegaConf.create({"id": "x", "text": "t", "kind": "less", "metric": "test_rank_loss",
                             "lhs": lhs, "rhs": rhs, "match": [], "rounds": None})


def decide(exp, claim, trials, family=None):
    """One claim alone; or, with ``family``, the experiment's configured claims decided together
    with the family's p-values."""
    if family is None:
        return evaluate_claim(exp, claim, summarize(exp, trials), trials)
    return evaluate_claims(exp, summarize(exp, trials), trials, family)


def test_holm_by_hand():
    # sorted 0.005 < 0.01 < 0.03 < 0.04: x4, x3, x2, x1 = 0.02, 0.03, 0.06, 0.04 -> monotone 0.06
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    out = holm([0.2, np.nan, 0.9])
    assert np.isnan(out[1]) and out[0] == pytest.approx(0.4) and out[2] == pytest.approx(0.9)
    rng = np.random.default_rng(0)
    p = rng.uniform(0, 1, 30)
    a = holm(p)
    assert np.all(a >= p) and np.all(a <= 1)
    assert np.all(np.diff(a[np.argsort(p)]) >= 0)  # the adjusted order follows the raw one


def test_welch_against_scipy():
    rng = np.random.default_rng(1)
    for _ in range(5):
        a, b = rng.normal(0, 1, rng.integers(3, 30)), rng.normal(0.3, 2, rng.integers(3, 30))
        want = sps.ttest_ind(a, b, equal_var=False, alternative="greater").pvalue
        assert welch_t_greater(a, b) == pytest.approx(want, rel=1e-10)


def test_power_against_the_noncentral_t():
    rng = np.random.default_rng(2)
    d = rng.normal(0.2, 1.0, 12)
    n = paired_power(d, 0.01, 0.8)
    effect = abs(d.mean()) / d.std(ddof=1)

    def power(k):
        crit = sps.t.ppf(1 - 0.01, k - 1)
        return sps.nct.sf(crit, k - 1, effect * np.sqrt(k))

    assert power(n) >= 0.8 > power(n - 1)
    assert paired_power(np.zeros(5), 0.05) is None  # a tie: no number of trials decides it


def test_common_random_numbers_decide_what_intervals_cannot(exp):
    """Two cells that differ by 0.01 on every trial, trials that vary by 0.1: the intervals
    overlap (the old rule: inconclusive), the paired test is decisive."""
    t = fake_trials(exp, base_means(exp), sd=0.0)
    rng = np.random.default_rng(3)
    shared = 0.1 * rng.standard_normal(t["trial"].max() + 1)
    t["value"] += shared[t["trial"].to_numpy()]
    t.loc[t["cell"] == "prank", "value"] = t.loc[t["cell"] == "oap_bpm-tau0.3", "value"].to_numpy() + 0.01
    r = decide(exp, node({"algorithm": "oap_bpm", "tau": 0.3}, {"algorithm": "prank"}), t)
    s = summarize(exp, t).set_index("cell")
    assert s.loc["prank", "low"] < s.loc["oap_bpm-tau0.3", "high"]  # overlapping intervals
    assert r.verdict == "held" and r.stats["test"] == "paired t" and r.stats["p_held"] < 1e-10
    r = decide(exp, node({"algorithm": "prank"}, {"algorithm": "oap_bpm", "tau": 0.3}), t)
    assert r.verdict == "not held"


def test_unshared_trials_are_compared_unpaired(exp):
    t = fake_trials(exp, base_means(exp), sd=0.02)
    t = t[~((t["cell"] == "prank") & (t["trial"] < 5))]  # prank lost five trials
    r = decide(exp, node({"algorithm": "oap_bpm", "tau": 0.3}, {"algorithm": "prank"}), t)
    assert r.stats["test"] == "Welch t" and r.verdict == "held"


def test_a_tie_is_inconclusive(exp):
    """Elsas et al. Fig. 1's 'average improves to 500' was held on 0.43598 -> 0.43600."""
    t = fake_trials(exp, base_means(exp), sd=0.01)
    t.loc[t["cell"] == "prank", "value"] = t.loc[t["cell"] == "oap_vp-tau0.3", "value"].to_numpy()
    r = decide(exp, node({"algorithm": "oap_vp", "tau": 0.3}, {"algorithm": "prank"}), t)
    assert r.verdict == "inconclusive" and r.stats["p_held"] == 1.0


def test_holm_over_the_family_decides(exp):
    """bpm_beats_wh with p about 0.02 holds beside strong claims and not beside weak ones."""
    means = base_means(exp)
    means["widrow_hoff-eta0.1"] = 0.224
    t = fake_trials(exp, means, sd=0.01, seed=0)
    alone = {r.id: r for r in decide(exp, None, t, Family())}
    p = alone["bpm_beats_wh"].stats["p"]
    assert 0.005 < p < 0.05, p  # the case this test is about
    strong = {r.id: r for r in decide(exp, None, t, Family(("a/b",), (1e-6,) * 4))}
    weak = {r.id: r for r in decide(exp, None, t, Family(("a/b",), (0.5,) * 4))}
    assert strong["bpm_beats_wh"].verdict == "held"
    assert weak["bpm_beats_wh"].verdict == "inconclusive"
    assert weak["bpm_beats_wh"].stats["p_adjusted"] > p and weak["bpm_beats_wh"].stats["family"] >= 6
    n = weak["bpm_beats_wh"].stats["n_needed"]
    assert n is not None and n > 20 and f"about {n} trials" in weak["bpm_beats_wh"].evidence


def test_an_exact_computation_compares_its_one_value():
    exp = load_experiment("elsas2008/sec3_table", "smoke")
    rows = []
    for c in exp.cells:
        rows.append({"cell": c.id, "algorithm": c.algorithm, "trial": 0, "metric": "list_ndcg", "round": None,
                     "value": {"RRNNNR": 0.9}.get(c.params.get("ranking"), 0.8)})
    t = pd.DataFrame(rows)
    t["round"] = t["round"].astype("Int64")
    c = next(x for x in exp.cfg.experiment.claims if x.id == "same_q_different_ndcg")
    assert decide(exp, c, t).verdict == "held"


def test_queries_of_a_fold_carry_its_design_effect():
    """Per-query differences whose folds shift together: the design effect of the folds widens
    the test (scipy's t on the effective number of queries), and is 1 where the folds agree."""
    import numpy as np
    import pandas as pd
    from scipy import stats

    from rankrepro.claims.testing import less, less_by_folds

    rng = np.random.default_rng(5)
    fold = np.repeat(np.arange(1, 6), 20)
    shift = np.array([0.05, -0.04, 0.06, -0.05, 0.03])[fold - 1]
    x = pd.Series(0.30 + shift + rng.normal(0, 0.02, 100) - 0.004, index=np.arange(100))
    y = pd.Series(0.30 + shift * 0.2 + rng.normal(0, 0.02, 100), index=np.arange(100))
    fx, fy = x.groupby(fold).mean(), y.groupby(fold).mean()
    fx.index = fy.index = np.arange(1, 6)
    t = less_by_folds(x, y, fx, fy, "x < y")
    d = (x - y).to_numpy()
    deff = max(1.0, (np.var((fx - fy).to_numpy(), ddof=1) / 5) / (np.var(d, ddof=1) / 100))
    assert deff > 2 and t.deff == pytest.approx(deff)
    stat = d.mean() / np.sqrt(np.var(d, ddof=1) / 100 * deff)
    assert t.p_less == pytest.approx(stats.t.cdf(stat, 100 / deff - 1))
    assert t.p_less > less(x, y, "x < y").p_less  # wider than the naive test
    # folds that agree: no design effect, the plain paired test
    flat = less_by_folds(x, y, fx * 0 + 0.3, fy * 0 + 0.3, "x < y")
    assert flat.deff == 1.0 and flat.p_less == less(x, y, "x < y").p_less
