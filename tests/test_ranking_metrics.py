"""Ranked-list metrics: Elsas et al. (2008) Sec. 3 exactly, and independent definitions."""
import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from rankrepro.metrics import (average_precision, bpref, dcg_at, discordant_pairs, ndcg_at, per_query,
                               precision_at, rank_eff, ranked_labels, reciprocal_rank)


def lst(s):
    return np.array([1 if c == "R" else 0 for c in s])


@pytest.mark.parametrize("ranking,q,ndcg,rr,ap", [
    ("RNRNRN", 3, 0.783, 1.0, 0.756),
    ("NRRRNN", 3, 0.810, 0.5, 0.639),
    ("RRNNNR", 3, 0.907, 1.0, 0.833),
])
def test_elsas_section3_table(ranking, q, ndcg, rr, ap):
    lab = lst(ranking)
    assert discordant_pairs(lab) == q
    assert ndcg_at(lab) == pytest.approx(ndcg, abs=1e-3)  # the paper prints 3 digits (0.7836 as 0.783)
    assert reciprocal_rank(lab) == rr
    assert average_precision(lab) == pytest.approx(ap, abs=1e-3)


def test_bpref_and_rankeff_in_terms_of_q():
    """Sec. 3.1: RankEff = 1 - Q/(N R); bpref = 1 - Q_R/(N R) >= RankEff when R <= N."""
    for s in ("RNRNRN", "NRRRNN", "RRNNNR", "NNNRRR", "RRRNNN"):
        lab = lst(s)
        assert rank_eff(lab) == pytest.approx(1 - discordant_pairs(lab) / 9)
        assert bpref(lab) >= rank_eff(lab) - 1e-12


def test_ndcg_graded_and_cutoffs():
    lab = np.array([2, 0, 1])
    # gains 3, 0, 1; discounts 1, 1, 1/log2(3); ideal 2, 1, 0 -> 3 + 1
    assert dcg_at(lab) == pytest.approx(3 + 1 / np.log2(3))
    assert ndcg_at(lab) == pytest.approx((3 + 1 / np.log2(3)) / 4)
    assert ndcg_at(lab, 1) == 1.0 and ndcg_at(lab, 2) == pytest.approx(3 / 4)
    assert ndcg_at(np.zeros(5)) == 0.0 and average_precision(np.zeros(5)) == 0.0
    assert precision_at(lst("RNRN"), 2) == 0.5 and precision_at(lst("RN"), 4) == 0.25


@given(st.lists(st.integers(0, 2), min_size=1, max_size=9))
def test_ap_agrees_with_precision_definition(labels):
    lab = np.array(labels)
    rel = lab >= 1
    if rel.any():
        ref = np.mean([precision_at(lab, k + 1) for k in np.flatnonzero(rel)])
        assert average_precision(lab) == pytest.approx(ref)
    # the best ordering is optimal for every measure
    best = np.sort(lab)[::-1]
    assert ndcg_at(best) == pytest.approx(1.0 if rel.any() else 0.0)
    assert ndcg_at(lab) <= 1 + 1e-12


def test_ndcg_bruteforce_ideal():
    lab = np.array([0, 2, 1, 1, 0])
    best = max(dcg_at(np.array(p)) for p in itertools.permutations(lab))
    assert ndcg_at(lab) == pytest.approx(dcg_at(lab) / best)


def test_ranking_from_scores_and_per_query():
    assert ranked_labels([0.1, 0.9, 0.5], [0, 1, 2]).tolist() == [1, 2, 0]
    assert ranked_labels([1, 1, 1], [0, 1, 2]).tolist() == [0, 1, 2]  # ties keep the file order
    out = per_query([3, 2, 1, 1, 2], [1, 0, 0, 0, 1], [7, 7, 7, 3, 3], metrics=("map", "rr"))
    assert out["map"].tolist() == [1.0, 1.0] and out["rr"].tolist() == [1.0, 1.0]
