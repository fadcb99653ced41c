"""Our MAP and NDCG@k against LETOR's own evaluation (Eval-Score-3.0.pl, by Jun Xu and
Tie-Yan Liu) and against trec_eval (through pytrec_eval).

LETOR's script, re-derived here from its documented behaviour: documents sorted by score,
descending, ties kept in file order (a stable sort of the lines); MAP counts labels >= 1 as
relevant and gives 0 to a query without relevant documents; NDCG@k uses gains 2^label - 1
(labels 2, 1, 0 -> 3, 1, 0), no discount at ranks 1 and 2 and 1/log2(r) from rank 3, the
ideal ordering by gain, and 0 when the ideal DCG is 0.  trec_eval agrees on MAP when the
scores have no ties; its NDCG differs by design (discount 1/log2(r+1), linear gains) and it
breaks ties by document id, so only MAP is compared with it.
"""
import math

import numpy as np
import pytest

from rankrepro.metrics import per_query

K = (1, 5, 10)


def letor_query(scores, labels):
    order = sorted(range(len(scores)), key=lambda i: -scores[i])  # Python's sort is stable
    rates = [int(labels[i]) for i in order]
    n_rel, ap = 0, 0.0
    for pos, r in enumerate(rates):
        if r >= 1:
            n_rel += 1
            ap += n_rel / (pos + 1)
    m = ap / n_rel if n_rel else 0.0

    def dcg(rs, k):
        tot = 0.0
        for pos, r in enumerate(rs[:k]):
            g = 2 ** r - 1
            tot += g if pos < 2 else g * math.log(2.0) / math.log(pos + 1.0)
        return tot

    ideal = sorted(rates, reverse=True)
    nd = {}
    for k in K:
        kk = min(k, len(rates))  # the script reports position min(k, n)
        best = dcg(ideal, kk)
        nd[k] = dcg(rates, kk) / best if best != 0 else 0.0
    return m, nd


def random_run(rng, n_queries=250):
    """Queries of 1-40 documents, labels 0-2 (some queries with no relevant document),
    integer scores from a small range (many ties)."""
    scores, labels, qid = [], [], []
    for q in range(n_queries):
        n = int(rng.integers(1, 41))
        p_rel = 0.0 if rng.random() < 0.15 else rng.random() * 0.5
        lab = np.where(rng.random(n) < p_rel, rng.integers(1, 3, n), 0)
        sc = rng.integers(0, 6, n).astype(float) if rng.random() < 0.7 else rng.normal(size=n)
        scores.append(sc), labels.append(lab), qid.append(np.full(n, q))
    return np.concatenate(scores), np.concatenate(labels), np.concatenate(qid)


@pytest.mark.parametrize("seed", [1, 2])
def test_map_and_ndcg_equal_letor_eval_script(seed):
    rng = np.random.default_rng(seed)
    s, y, q = random_run(rng)
    ours = per_query(s, y, q, ("map", "ndcg@1", "ndcg@5", "ndcg@10"))
    assert len(ours["map"]) == 250
    for i, qq in enumerate(np.unique(q)):
        m = q == qq
        ref_map, ref_nd = letor_query(s[m], y[m])
        assert ours["map"][i] == pytest.approx(ref_map, abs=1e-15)
        for k in K:
            assert ours[f"ndcg@{k}"][i] == pytest.approx(ref_nd[k], abs=1e-15), (qq, k)


def test_map_equals_trec_eval_without_ties():
    pytrec_eval = pytest.importorskip("pytrec_eval")
    rng = np.random.default_rng(3)
    s, y, q = random_run(rng, n_queries=320)
    # no ties (trec_eval would break them by document id), and distinct in single precision too
    s = s + 1e-3 * rng.random(s.size)
    ours = per_query(s, y, q, ("map",))["map"]
    qrel = {str(qq): {f"d{i}": int(y[i]) for i in np.flatnonzero(q == qq)} for qq in np.unique(q)}
    run = {str(qq): {f"d{i}": float(s[i]) for i in np.flatnonzero(q == qq)} for qq in np.unique(q)}
    res = pytrec_eval.RelevanceEvaluator(qrel, {"map"}).evaluate(run)
    compared = 0
    for i, qq in enumerate(np.unique(q)):
        if y[q == qq].max() >= 1:  # trec_eval's MAP is over queries with a relevant document
            assert res[str(qq)]["map"] == pytest.approx(ours[i], abs=1e-12)
            compared += 1
    assert compared >= 200
