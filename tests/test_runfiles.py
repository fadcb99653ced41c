"""Run files of a committed LETOR cell, read back with trec_eval (pytrec_eval) and with an
independent transcription of LETOR's evaluation script: they give the committed per-query MAP
and NDCG@k.

trec_eval's MAP is LETOR's (labels >= 1 relevant, 0 for a query without relevant documents);
its NDCG is not (linear gains, discount 1/log2(r + 1); LETOR: gains 2^label - 1, no discount at
ranks 1 and 2, 1/log2(r) after), so NDCG@k is read from the run file and qrels by the
transcription of LETOR's script below (as in tests/test_letor_metrics_official.py).  trec_eval
orders tied scores by document id and compares scores in single precision, LETOR by file order in
double precision: the tests show trec_eval's order then differs exactly as said, and that the
``.ranks.run`` file (scores n - rank + 1) gives trec_eval LETOR's ranking.
"""
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rankrepro.report.runfiles import TrialRun, read_eval, tie_queries, write_runfiles, write_trial

pytrec_eval = pytest.importorskip("pytrec_eval")

ROOT = Path(__file__).resolve().parents[1]
EXPERIMENT, CELL = "arena/letor_mq2008", "ranksvm"
DATA = ROOT / "data" / "processed" / "letor4-mq2008" / "data.npz"


def letor_script(rates, k=None):
    """LETOR's Eval-Score-3.0.pl on one ranked list of labels: (AP, NDCG@k)."""
    n_rel, ap = 0, 0.0
    for pos, r in enumerate(rates):
        if r >= 1:
            n_rel += 1
            ap += n_rel / (pos + 1)
    if k is None:
        return ap / n_rel if n_rel else 0.0

    def dcg(rs):
        return sum((2 ** r - 1) * (1.0 if pos < 2 else math.log(2.0) / math.log(pos + 1.0))
                   for pos, r in enumerate(rs[:min(k, len(rs))]))

    best = dcg(sorted(rates, reverse=True))
    return dcg(rates) / best if best != 0 else 0.0


def read_ranked(run_path, qrels):
    """Each query's labels in the run file's rank order (its rank column)."""
    lists = {}
    for line in Path(run_path).read_text().splitlines():
        q, _, doc, rank, _, _ = line.split()
        lists.setdefault(q, []).append((int(rank), qrels[q][doc]))
    return {q: [lab for _, lab in sorted(v)] for q, v in lists.items()}


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    if not DATA.is_file():
        pytest.skip("LETOR 4.0 MQ2008 not preprocessed here (make data)")
    out = tmp_path_factory.mktemp("runfiles")
    # trial 0 (fold 1): no tied scores across labels; trial 4 (fold 5): one query with such a tie
    done = write_runfiles([EXPERIMENT], out, cells=[CELL], trials=[0, 4], root=ROOT, data_path=str(DATA),
                          echo=lambda s: None)
    assert [(w.trial, w.fold) for w in done] == [(0, 1), (4, 5)] and not any(w.problem for w in done), done
    committed = pd.read_parquet(ROOT / "results" / "arena" / "letor_mq2008" / "cells" / f"{CELL}.parquet")
    return {w.trial: (w, committed[committed["trial"] == w.trial]) for w in done}


@pytest.fixture(params=[0, 4], ids=["fold1", "fold5"])
def trial(written, request):
    return written[request.param]


def committed_per_query(committed, metric):
    c = committed[committed["metric"] == f"query_{metric}"]
    return {str(int(r)): float(v) for r, v in zip(c["round"], c["value"])}


def test_trec_eval_reads_the_committed_map(trial):
    w, committed = trial
    with open(w.files["qrels"]) as f:
        qrels = pytrec_eval.parse_qrel(f)
    with open(w.files["run"]) as f:
        run = pytrec_eval.parse_run(f)
    res = pytrec_eval.RelevanceEvaluator(qrels, {"map"}).evaluate(run)
    want = committed_per_query(committed, "map")
    assert set(res) == set(want) and len(want) > 100
    ties = {str(q) for q in w.tie_queries}
    assert len(ties) == (0 if w.trial == 0 else 1)
    plain = [q for q in want if q not in ties]
    got = np.array([res[q]["map"] for q in plain])
    ref = np.array([want[q] for q in plain])
    # trec_eval sums precisions in rank order, numpy pairwise: equal to the last bits or nearly
    np.testing.assert_allclose(got, ref, rtol=0, atol=1e-12)
    assert (got == ref).mean() > 0.9
    # where tied scores join labels, trec_eval ranks the tie by document id, descending, and it
    # compares the scores in single precision
    for q in ties:
        docs = sorted(run[q].items(), key=lambda kv: kv[0], reverse=True)  # document id, descending
        docs.sort(key=lambda kv: -np.float32(kv[1]))  # then score, descending (stable: ties keep the id order)
        assert res[q]["map"] == pytest.approx(letor_script([qrels[q][d] for d, _ in docs]), abs=1e-12)
        # ... and here that moves the query's MAP off LETOR's (query 17577: 0.9285 against 0.9330)
        assert abs(res[q]["map"] - want[q]) > 1e-3
    # the .ranks.run file (scores n - rank + 1) gives trec_eval LETOR's ranking on every query
    with open(w.files["ranks_run"]) as f:
        res = pytrec_eval.RelevanceEvaluator(qrels, {"map"}).evaluate(pytrec_eval.parse_run(f))
    np.testing.assert_allclose([res[q]["map"] for q in want], list(want.values()), rtol=0, atol=1e-12)


def test_the_run_file_gives_the_committed_ndcg_by_letors_definition(trial):
    w, committed = trial
    with open(w.files["qrels"]) as f:
        qrels = pytrec_eval.parse_qrel(f)
    lists = read_ranked(w.files["run"], qrels)
    for k in (1, 5, 10):
        want = committed_per_query(committed, f"ndcg@{k}")
        assert set(lists) == set(want)
        for q, v in want.items():
            assert letor_script(lists[q], k) == pytest.approx(v, abs=1e-15), (q, k)
    want = committed_per_query(committed, "map")
    for q, v in want.items():
        assert letor_script(lists[q]) == pytest.approx(v, abs=1e-15)


def test_the_evaluation_file_is_the_committed_cell_bit_for_bit(trial):
    w, committed = trial
    ev = read_eval(w.files["eval"])
    assert set(ev) == {"map", "ndcg@1", "ndcg@5", "ndcg@10"}
    for m, per in ev.items():
        want = committed_per_query(committed, m)
        assert {q: v for q, v in per.items() if q != "all"} == want  # float equality: bit for bit
        mean = committed[committed["metric"] == f"test_{m}"]["value"].item()
        assert per["all"] == mean


def test_tied_scores_trec_eval_orders_by_docid_letor_by_file_order(tmp_path):
    # query 1: an exact tie joins labels 0 and 2; query 2: a tie of equal labels only; query 3:
    # scores apart in double precision, equal in single (trec_eval's), with labels 0 and 1
    scores = np.array([0.5, 0.5, 0.1, 0.9, 0.3, 0.3, 0.7 + 1e-12, 0.7])
    labels = np.array([0, 2, 1, 0, 1, 1, 0, 1])
    qid = np.array([1, 1, 1, 2, 2, 2, 3, 3])
    docid = np.array(["a", "b", "c", "d", "e", "f", "g", "h"])
    run = TrialRun("x/y", "cell", 0, 1, scores, labels, qid, docid, {"map": np.array([7 / 12, 7 / 12, 0.5])}, [])
    assert tie_queries(run) == [1, 3]
    files = write_trial(run, tmp_path, "x", "y")
    with open(files["qrels"]) as f:
        qrels = pytrec_eval.parse_qrel(f)
    lists = read_ranked(files["run"], qrels)
    assert lists["1"] == [0, 2, 1]  # the run file's ranks: file order within the tie (a before b)
    assert letor_script(lists["1"]) == pytest.approx(7 / 12, abs=1e-15)  # labels 0, 2, 1: (1/2 + 2/3) / 2
    assert lists["3"] == [0, 1] and letor_script(lists["3"]) == 0.5  # g's score is the higher double
    with open(files["run"]) as f:
        res = pytrec_eval.RelevanceEvaluator(qrels, {"map"}).evaluate(pytrec_eval.parse_run(f))
    # trec_eval puts b (docid greater) before a: labels 2, 0, 1 -> (1/1 + 2/3) / 2
    assert res["1"]["map"] == pytest.approx((1 + 2 / 3) / 2, abs=1e-15)
    assert res["2"]["map"] == pytest.approx(letor_script(lists["2"]), abs=1e-15)
    assert res["3"]["map"] == 1.0  # g and h tie in single precision: h (docid greater, label 1) first
    with open(files["ranks_run"]) as f:
        res = pytrec_eval.RelevanceEvaluator(qrels, {"map"}).evaluate(pytrec_eval.parse_run(f))
    assert [res[q]["map"] for q in ("1", "2", "3")] == pytest.approx([7 / 12, 7 / 12, 0.5], abs=1e-15)


# -- the command line's refusals (issue "Reliability IV", item 3) ------------------------------------------
def test_an_unknown_cell_exits_non_zero_naming_it(tmp_path, capsys, monkeypatch):
    """Before: `rankrepro runfiles arena/letor_mq2008 --cells rankvsm` printed "no committed cell,
    skipped" and exited 0."""
    from rankrepro.cli import main

    monkeypatch.chdir(ROOT)
    assert main(["runfiles", EXPERIMENT, "--cells", "rankvsm", "--out", str(tmp_path / "rf")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"rankrepro: error: no cell 'rankvsm' in {EXPERIMENT} (did you mean 'ranksvm'?)"), err
    assert "\n" not in err and not (tmp_path / "rf").exists()


def test_a_negative_trial_is_refused_in_one_line(tmp_path, capsys, monkeypatch):
    """Before: `rankrepro runfiles ... --trials -1` ended in numpy's "expected non-negative integer"
    traceback (the trial's seed)."""
    from rankrepro.cli import main

    monkeypatch.chdir(ROOT)
    assert main(["runfiles", EXPERIMENT, "--cells", CELL, "--trials", "0", "-1", "--out", str(tmp_path / "rf")]) == 2
    err = capsys.readouterr().err.strip()
    assert err == ("rankrepro: error: runfiles --trials -1: a trial is a number from 0 (the committed cell's "
                   "trials: 0, 1, ...)"), err
    assert not (tmp_path / "rf").exists()
