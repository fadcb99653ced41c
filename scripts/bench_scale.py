"""How the cost grows with the work (issue 46, item 3), in one run, with the peers users would run
instead; writes docs/bench/scale.json and the figures docs/figures/bench/scale_*.png.

(a) the online learners (PRank, OAP-BPM at N = 100, Widrow-Hoff, MCP: the package's own classes
    from ``rankrepro.algorithms.ONLINE``) in rounds per CPU second against the instance width d
    (scipy CSR rows of about 20 non-zeros: the learners iterate CSR rows as they are), and OAP-BPM
    against its ensemble size N at a fixed width;
(b) the LETOR learners as the Elsas et al. Table 4 experiments configure them (committee
    perceptron A: 30 members, 100 iterations, alpha 0.85; Ranking SVM: C from 1e-4..1, 200
    passes at most; RankBoost: 300 rounds) against LightGBM's ``LGBMRanker`` (lambdarank, 100
    trees, otherwise LightGBM's defaults, one thread) on a generated set shaped like MSLR-WEB30K
    (136 features, 61-183 documents per query, 122 on average, grades 0-4 in MSLR-like
    proportions from a random linear model plus noise), at growing numbers of queries: fit CPU
    seconds and the peak resident memory of a process per point.  Like for like, both ways: every
    learner evaluating validation NDCG@10 (the project's, LETOR's conventions) after every step and
    keeping the best step (the project's ``fit(..., eval_set=...)``; LightGBM with the validation set
    and that NDCG@10 as its eval metric, its best tree kept), and every learner training its whole
    schedule with no evaluation on the way;
(b') the CPU time to the step that is best on validation, on LETOR 2.0 OHSUMED (the folds of the
    Elsas et al. experiments; ``make data``): the same learners as the Table 4 experiments set them,
    and LightGBM's lambdarank with the project's LambdaMART settings and with (b)'s, over folds and
    seeds, with the test NDCG@10 at that step (part of --only letor);
(c) the collaborative GP models (GPR, CGPR, GPOR, CGPOR) against the number of users and of
    training items, on a generated problem (a cosine kernel of random item features; each user's
    ranks cut from a latent draw of the GP at the rated items, 40% of the training items rated),
    with a fixed number of EM iterations (``--em-iters``, tolerance 0: no early stop).

Every point runs in a process of its own (memory and a time cap per point) except in --quick,
which runs everything small and in this process (no memory measured), for the test.  A point is
skipped, and the curve ends, when the time predicted from the curve's last two points (log-log)
exceeds the cap, or the memory predicted exceeds the budget; the skip and its prediction are
recorded.  Timings are CPU seconds (time.process_time; BLAS and LightGBM on one thread), the
minimum over R repeats (R recorded per point: 3 below 1 s, 2 below 10 s, else 1).  The machine is
shared: its load average at the start and end is recorded.

    python scripts/bench_scale.py            # ~10-15 minutes of CPU (an idle 2-core machine)
    python scripts/bench_scale.py --quick    # ~1 minute, tiny sizes (tests/test_bench_scale.py)
    python scripts/bench_scale.py --resume   # after a stop: keeps the curves docs/bench/scale.json holds
    python scripts/bench_scale.py --only gp --out /tmp/gp.json && python scripts/bench_scale.py --merge /tmp/gp.json
    python scripts/bench_scale.py --only letor --out /tmp/l.json && python scripts/bench_scale.py --merge /tmp/l.json --replace
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import resource  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_common import ROOT, stamp as bench_stamp  # noqa: E402


#: the online learners of (a): config name -> constructor parameters
ONLINE_LEARNERS = {"prank": {}, "oap_bpm": {"N": 100, "tau": 0.3, "seed": 0}, "widrow_hoff": {}, "mcp": {}}
ONLINE_LABELS = {"prank": "PRank", "oap_bpm": "OAP-BPM (N = 100)", "widrow_hoff": "Widrow-Hoff", "mcp": "MCP"}
#: the LETOR learners of (b), as config/experiment/elsas2008/_table4_common.yaml sets them
LETOR_LEARNERS = {
    "committee_a": ("perceptron", {"output": "committee_A", "committee": 30, "n_iter": 100, "alpha": 0.85, "seed": 0}),
    "ranksvm": ("ranksvm", {"C_grid": [0.0001, 0.001, 0.01, 0.1, 1.0], "max_pass": 200, "eps": 0.1, "seed": 0}),
    "rankboost": ("rankboost", {"n_rounds": 300, "seed": 0}),
    "lgbm_lambdarank": ("lightgbm", {"objective": "lambdarank", "n_estimators": 100, "n_jobs": 1, "verbose": -1,
                                     "random_state": 0}),
}
LETOR_LABELS = {"committee_a": "committee perceptron A", "ranksvm": "Ranking SVM", "rankboost": "RankBoost",
                "lgbm_lambdarank": "LightGBM lambdarank (peer)"}
#: what (b) times, said in its record
LETOR_COMPARISON = ("like for like, both ways: `seconds`, every learner evaluating validation NDCG@10 (the project's "
                    "per_query) after every step and keeping the best step (the project's fit(..., eval_set=...); "
                    "LightGBM's LGBMRanker.fit with the validation set, that NDCG@10 as its only eval metric and the "
                    "best tree kept); `seconds_no_eval`, every learner training its whole schedule with no "
                    "evaluation (the perceptron's committee weighted once at the end)")
GP_MODELS = {"gpr": ("gaussian", False, 0.1), "cgpr": ("gaussian", True, 0.1),
             "gpor": ("ordinal", False, 1.0), "cgpor": ("ordinal", True, 1.0)}
GP_LABELS = {"gpr": "GPR", "cgpr": "CGPR", "gpor": "GPOR", "cgpor": "CGPOR"}
#: MSLR-WEB30K's label proportions (grades 0..4), roughly: the cumulative cut points
MSLR_CUTS = (0.52, 0.84, 0.97, 0.99)
N_FEATURES_LETOR = 136


def rss_mb() -> float:
    """This process's peak resident memory so far (Linux: ru_maxrss in KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def best_cpu(fn, budget_s: float = 10.0, max_repeats: int = 3) -> tuple[float, float, int]:
    """(min CPU s, its wall s, repeats): repeated 3 times below 1 s, twice below 10 s, else once
    (at most ``max_repeats``)."""
    runs = []
    while True:
        w0, c0 = time.perf_counter(), time.process_time()
        fn()
        runs.append((time.process_time() - c0, time.perf_counter() - w0))
        t = min(r[0] for r in runs)
        if len(runs) >= max_repeats or (len(runs) >= 2 and t >= 1.0) or t >= budget_s:
            break
    c, w = min(runs)
    return c, w, len(runs)


# ---------------------------------------------------------------------------------------
# the generated data
# ---------------------------------------------------------------------------------------
def online_stream(n: int, d: int, nnz: int, seed: int = 0):
    """n CSR rows of width d with min(nnz, d) non-zeros each (uniform columns, N(0,1) values) and
    ranks 1..5 from a random linear model plus noise, cut at the score's quintiles."""
    from scipy import sparse

    rng = np.random.default_rng(seed)
    k = min(nnz, d)
    cols = np.sort(np.argsort(rng.random((n, d)) if d <= 64 else rng.integers(0, d, (n, k)), axis=1)[:, :k], axis=1)
    if d > 64:  # columns drawn with replacement: keep a row's distinct ones
        cols = np.sort(cols, axis=1)
    vals = rng.standard_normal((n, k))
    X = sparse.csr_matrix((vals.ravel(), cols.ravel(), np.arange(0, n * k + 1, k)), shape=(n, d))
    X.sum_duplicates()
    w = rng.standard_normal(d)
    s = X @ w + 0.5 * rng.standard_normal(n)
    y = 1 + np.searchsorted(np.quantile(s, [0.2, 0.4, 0.6, 0.8]), s)
    return X, y.astype(np.int64)


def letor_set(n_queries: int, seed: int = 0):
    """A set shaped like MSLR-WEB30K: n_queries queries of 61..183 documents (uniform, mean 122),
    136 N(0,1) features, grades 0..4 cut from w.x + noise at MSLR-like proportions."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(61, 184, n_queries)
    n = int(sizes.sum())
    qid = np.repeat(np.arange(n_queries, dtype=np.int64), sizes)
    X = rng.standard_normal((n, N_FEATURES_LETOR))
    w = rng.standard_normal(N_FEATURES_LETOR) / math.sqrt(N_FEATURES_LETOR)
    s = X @ w + rng.standard_normal(n)
    y = np.searchsorted(np.quantile(s, MSLR_CUTS), s).astype(np.int64)
    return X, y, qid


def n_pairs(y: np.ndarray, qid: np.ndarray) -> int:
    """Preference pairs (documents of one query with different grades)."""
    total = 0
    bounds = np.flatnonzero(np.diff(qid)) + 1
    for part in np.split(y, bounds):
        c = np.bincount(part)
        total += (int(c.sum()) ** 2 - int((c * c).sum())) // 2
    return total


def gp_problem(n_users: int, n_items: int, n_test: int, seed: int = 0, density: float = 0.4, rank: int = 30):
    """K: the cosine kernel of random item features (n_items + n_test items); each user's ranks
    1..5 cut at the quintiles of a latent draw f ~ N(0, K) (shared part plus the user's own);
    each user rates a random ``density`` of the training items and every test item."""
    from rankrepro.algorithms.feature_maps import cosine_kernel

    rng = np.random.default_rng(seed)
    m = n_items + n_test
    F = rng.standard_normal((m, rank))
    K = cosine_kernel(F)
    # f = F a / ||F_i|| is a draw from N(0, K) (K = cosine of the rows of F), a ~ N(0, I)
    Fn = F / np.linalg.norm(F, axis=1, keepdims=True)
    A = rng.standard_normal((rank, n_users)) + rng.standard_normal((rank, 1))
    Fv = (Fn @ A).T
    cuts = np.quantile(Fv, [0.2, 0.4, 0.6, 0.8], axis=1).T
    Y = 1 + np.stack([np.searchsorted(c, f) for c, f in zip(cuts, Fv)])
    rated = rng.random((n_users, n_items)) < density
    Y[:, :n_items] = np.where(rated, Y[:, :n_items], 0)
    return K, Y.astype(np.int64), np.arange(n_items), np.arange(n_items, m)


# ---------------------------------------------------------------------------------------
# one point
# ---------------------------------------------------------------------------------------
def run_point(spec: dict) -> dict:
    """Measure one point; ``spec``: {curve, learner, size, ...}."""
    kind = spec["curve"].split("_")[0]
    if kind == "online":
        return _online_point(spec)
    if kind == "letor":
        return _letor_point(spec)
    return _gp_point(spec)


def _online_point(spec: dict) -> dict:
    from rankrepro.algorithms import ONLINE

    X, y = online_stream(spec["rounds"], spec["d"], spec["nnz"])
    params = dict(ONLINE_LEARNERS[spec["learner"]])
    if "N" in spec:
        params["N"] = spec["N"]
    cls = ONLINE[spec["learner"]]
    cls(**params).fit_online(X[:5], y[:5])  # compiled before the clock starts
    c, w, r = best_cpu(lambda: cls(**params).fit_online(X, y), max_repeats=spec.get("max_repeats", 3))
    return {"seconds": c, "wall_s": w, "repeats": r, "rounds_per_s": spec["rounds"] / c,
            "nnz_per_row": X.nnz / X.shape[0], "state_mb": _online_state_mb(spec, params)}


def _online_state_mb(spec: dict, params: dict) -> float:
    """The learner's weights (float64): N x d for OAP, 5 x d for MCP, d otherwise."""
    rows = {"oap_bpm": params.get("N", 1) + 1, "mcp": 5}.get(spec["learner"], 1)
    return rows * spec["d"] * 8 / 2**20


def _letor_point(spec: dict) -> dict:
    """Both ways, like for like: ``seconds``, every learner evaluating validation NDCG@10 after each
    step and keeping the best step (the project's ``fit(..., eval_set=...)``; LightGBM's ``fit`` with
    ``eval_set``, ``eval_at=[10]`` and its best iteration kept); ``seconds_no_eval``, every learner
    training its whole schedule with no evaluation on the way (:func:`train_only`)."""
    X, y, q = letor_set(spec["n_queries"], seed=0)
    Xv, yv, qv = letor_set(spec.get("n_val", 30), seed=1)
    data_mb = rss_mb()
    kind, params = LETOR_LEARNERS[spec["learner"]]
    out = {}
    if kind == "lightgbm":
        import lightgbm

        groups = np.unique(q, return_counts=True)[1]

        def fit():
            # validation NDCG@10 after every tree, the project's (its only metric), and the best tree kept:
            # an early stop that never stops (patience = every tree) keeps the first best, as fit does
            m = lightgbm.LGBMRanker(**params, metric="None")
            m.fit(X, y, group=groups, **lightgbm_eval(Xv, yv, qv), eval_metric=project_ndcg10(qv),
                  callbacks=[lightgbm.early_stopping(params["n_estimators"], verbose=False)])
            out["best_step"] = int(m.best_iteration_)
    else:
        from rankrepro.algorithms.rankers import RANKERS, _warm_up

        _warm_up()
        RANKERS[kind](**{**params, **({"n_iter": 1} if kind == "perceptron" else {}),
                         **({"n_rounds": 1} if kind == "rankboost" else {}),
                         **({"C_grid": [1.0], "max_pass": 1} if kind == "ranksvm" else {})}).fit(
            X[:300], y[:300], qid=q[:300], eval_set=(Xv, yv, qv))  # compile the rest before the clock

        def fit():
            r = RANKERS[kind](**params).fit(X, y, qid=q, eval_set=(Xv, yv, qv))
            out["best_step"] = float(r.best_step_)
    c, w, r = best_cpu(fit, max_repeats=spec.get("max_repeats", 3))
    c0, w0, r0 = best_cpu(lambda: train_only(kind, params, X, y, q, (Xv, yv, qv)), max_repeats=spec.get("max_repeats", 3))
    pairs = n_pairs(y, q)
    peak = rss_mb()
    return {"seconds": c, "wall_s": w, "repeats": r, "seconds_no_eval": c0, "wall_no_eval_s": w0, "repeats_no_eval": r0,
            "best_step": out["best_step"], "documents": int(X.shape[0]), "pairs": pairs,
            "data_mb": X.nbytes / 2**20, "rss_before_fit_mb": data_mb, "peak_rss_mb": peak,
            "fit_memory_mb": peak - data_mb, "pair_matrix_mb": pairs * X.shape[1] * 8 / 2**20}


def project_ndcg10(qid: np.ndarray):
    """The project's validation NDCG@10 (LETOR's conventions: ``rankrepro.metrics.per_query``, what
    the project's ``fit(..., eval_set=...)`` picks its step by) as a LightGBM eval metric for the
    validation set whose query ids are ``qid``.  LightGBM's own ndcg@10 discounts rank i by
    1 / log2(i + 1), LETOR's evaluation tool by 1 for ranks 1 and 2 and 1 / log2(i) after: they
    differ, and may pick another tree."""
    from rankrepro.metrics import per_query

    def metric(y_true, y_pred, weight=None, group=None):
        return "project_ndcg@10", float(per_query(y_pred, y_true, qid, ("ndcg@10",))["ndcg@10"].mean()), True

    return metric


def lightgbm_eval(Xv, yv, qv) -> dict:
    """LGBMRanker.fit's keywords for a validation set (``eval_X``/``eval_y`` where LightGBM has them,
    ``eval_set`` before 4.7)."""
    import inspect

    import lightgbm

    gv = np.unique(qv, return_counts=True)[1]
    if "eval_X" in inspect.signature(lightgbm.LGBMRanker.fit).parameters:
        return {"eval_X": (Xv,), "eval_y": (yv,), "eval_group": [gv]}
    return {"eval_set": [(Xv, yv)], "eval_group": [gv]}


def train_only(kind: str, params: dict, X, y, q, val, on_step=None) -> None:
    """Train ``kind`` (a LETOR_LEARNERS kind, or "lambdamart": the project's LambdaMART settings)
    through its whole schedule with no evaluation on the way: the perceptron's passes (its committee
    then weighted once, on ``val``: what the committee needs), the Ranking SVM at every C of its
    grid, RankBoost's rounds, LightGBM's trees without an eval_set.  ``on_step()`` is called after
    every step (LightGBM: every tree), for a clock."""
    tick = on_step or (lambda: None)
    if kind in ("lightgbm", "lambdamart"):
        import lightgbm

        order = np.argsort(q, kind="stable")
        groups = np.unique(q[order], return_counts=True)[1]
        lightgbm.LGBMRanker(**params).fit(X[order], y[order], group=groups, callbacks=[lambda env: tick()])
        return
    from rankrepro.algorithms.pairwise import PairwisePerceptron, mean_ndcg_columns
    from rankrepro.algorithms.rankers import RANKERS

    if kind == "perceptron":
        keys = ("n_iter", "committee", "alpha", "alpha_iterations", "order", "seed")
        p = PairwisePerceptron(**{k: params[k] for k in keys if k in params})
        p.start(X, y, q)
        for _ in range(p.n_iter):
            p.partial_fit_iteration()
            tick()
        W, _ = p.members()
        mean_ndcg_columns(val[0] @ W.T, val[1], val[2], 10)
        return
    for _ in RANKERS[kind](**params).iterate(X, y, q, []):
        tick()


def _gp_point(spec: dict) -> dict:
    from rankrepro.algorithms.gp import GPModel

    K, Y, train, test = gp_problem(spec["n_users"], spec["n_items"], spec["n_test"])
    lik, collab, sigma0 = GP_MODELS[spec["learner"]]
    model = GPModel(likelihood=lik, collaborative=collab, sigma0=sigma0, em_iters=spec["em_iters"], tol=0.0,
                    n_items=spec["n_items"])
    c, w, r = best_cpu(lambda: model.fit_predict_kernel(K, Y, train, test), max_repeats=spec.get("max_repeats", 3))
    rated = (Y[:, train] > 0).sum(axis=1)
    return {"seconds": c, "wall_s": w, "repeats": r, "rated_per_user": float(rated.mean()),
            "sum_rated_cubed": float((rated.astype(np.float64) ** 3).sum()), "kernel_mb": K.nbytes / 2**20}


# ---------------------------------------------------------------------------------------
# time to the best validation step on LETOR 2.0 OHSUMED
# ---------------------------------------------------------------------------------------
def time_to_best(trace: list, train_seconds: list | None = None) -> dict:
    """From one run's trace, a (step, cpu_s, valid, test) per step in order (cpu_s: CPU seconds
    from the start of the fit to the end of the step, its validation evaluation included; valid and
    test: the step's validation and test NDCG@10): the first step with the largest validation score
    (as the LETOR protocol picks it), the CPU seconds it took to get there, its test score, and the
    whole run's.  ``train_seconds``: the cumulative CPU seconds of the same steps trained with no
    evaluation (another run), read at the same step."""
    if not trace:
        raise ValueError("an empty trace")
    best = 0
    for i, t in enumerate(trace):
        if t[2] > trace[best][2]:
            best = i
    step, cpu, valid, test = trace[best]
    out = {"best_step": step, "best_index": best + 1, "steps": len(trace), "seconds_to_best": cpu,
           "seconds_total": trace[-1][1], "valid_ndcg10": valid, "test_ndcg10": test,
           "test_ndcg10_last": trace[-1][3]}
    if train_seconds is not None:
        if len(train_seconds) != len(trace):
            raise ValueError(f"{len(train_seconds)} training times for {len(trace)} steps")
        out["train_seconds_to_best"], out["train_seconds_total"] = train_seconds[best], train_seconds[-1]
    return out


#: LETOR 2.0 OHSUMED as the Elsas et al. experiments read it (``make data``)
OHSUMED = ROOT / "data" / "processed" / "letor2-ohsumed" / "data.npz"
#: the learners timed to their best validation step: the project's as the Table 4 experiments set them
#: (config/experiment/elsas2008/_table4_common.yaml), LightGBM's lambdarank as the project's LambdaMART row
#: sets it (300 trees, learning rate 0.05, 15 leaves, one thread, deterministic) and as (b)'s peer
BEST_LEARNERS = {
    "committee_a": LETOR_LEARNERS["committee_a"],
    "ranksvm": LETOR_LEARNERS["ranksvm"],
    "rankboost": LETOR_LEARNERS["rankboost"],
    "lambdamart": ("lambdamart", {"objective": "lambdarank", "n_estimators": 300, "learning_rate": 0.05,
                                  "num_leaves": 15, "n_jobs": 1, "verbose": -1, "deterministic": True,
                                  "force_row_wise": True, "random_state": 0}),
    "lgbm_lambdarank": LETOR_LEARNERS["lgbm_lambdarank"],
}
BEST_LABELS = {**LETOR_LABELS, "lambdamart": "LightGBM lambdarank, the project's LambdaMART settings",
               "lgbm_lambdarank": "LightGBM lambdarank, (b)'s settings (LightGBM's defaults, 100 trees)"}
#: learners whose fit draws nothing (one run per fold; the others one per seed)
DETERMINISTIC = ("rankboost",)


def _ndcg10(scores, part) -> float:
    from rankrepro.metrics import per_query

    return float(per_query(scores, part.y, part.qid, ("ndcg@10",))["ndcg@10"].mean())


def _with_seed(kind: str, params: dict, seed: int) -> dict:
    if kind in ("lightgbm", "lambdamart"):
        return {**params, "random_state": seed}
    return {**params, "seed": seed} if "seed" in params else dict(params)


def project_trace(kind: str, params: dict, fold) -> list:
    """The project's learner through ``iterate`` as ``fit(..., eval_set=valid)`` runs it: the clock
    counts each step and its validation NDCG@10 (what picking the best step costs); the test score of
    every step is computed off the clock from the step's model."""
    from rankrepro.algorithms.rankers import RANKERS

    tr, va, te = fold.train, fold.valid, fold.test
    ranker = RANKERS[kind](**params)
    trace, cpu = [], 0.0
    it = ranker.iterate(tr.X, tr.y, tr.qid, [(va.X, va.y, va.qid)])
    while True:
        c0 = time.process_time()
        try:
            step, (s_val,) = next(it)
        except StopIteration:
            break
        v = _ndcg10(s_val, va)
        cpu += time.process_time() - c0
        trace.append((float(step), cpu, v, _ndcg10(ranker._score_with(ranker._snapshot(), te.X, te.qid), te)))
    return trace


def lightgbm_trace(params: dict, fold) -> tuple[list, dict]:
    """LightGBM's ``LGBMRanker`` evaluating validation after every tree with the project's NDCG@10
    (:func:`project_ndcg10`, the step picked as the project's learners pick theirs) and its own
    ndcg@10 (``eval_at=[10]``, compiled: recorded to compare the picks): the clock runs from the start
    of the fit (its binning included) to the end of each tree's evaluation (a callback after it);
    each tree's test score is computed off the clock afterwards."""
    import lightgbm

    tr, va, te = fold.train, fold.valid, fold.test
    groups = np.unique(tr.qid, return_counts=True)[1]
    clock = []

    def tick(env):
        res = {r[1]: r[2] for r in env.evaluation_result_list}
        clock.append((time.process_time() - c0, res["project_ndcg@10"], res["ndcg@10"]))

    model = lightgbm.LGBMRanker(**params)
    c0 = time.process_time()
    model.fit(tr.X, tr.y, group=groups, **lightgbm_eval(va.X, va.y, va.qid), eval_at=[10],
              eval_metric=project_ndcg10(va.qid), callbacks=[tick])
    trace = [(float(t), cpu, float(v), _ndcg10(model.booster_.predict(te.X, num_iteration=t), te))
             for t, (cpu, v, _) in enumerate(clock, 1)]
    theirs = time_to_best([(s, c, lg, t) for (s, c, _, t), (_, _, lg) in zip(trace, clock)])
    check = {"lightgbm_ndcg10_best_step": theirs["best_step"], "lightgbm_ndcg10_test_ndcg10": theirs["test_ndcg10"],
             "max_abs_diff_lightgbm_vs_project_valid_ndcg10": float(max(abs(a[1] - a[2]) for a in clock))}
    return trace, check


def train_trace(kind: str, params: dict, fold) -> list[float]:
    """The cumulative CPU seconds of every step of :func:`train_only` on the fold's training part."""
    tr, va = fold.train, fold.valid
    marks = []
    c0 = time.process_time()
    train_only(kind, params, tr.X, tr.y, tr.qid, (va.X, va.y, va.qid),
               on_step=lambda: marks.append(time.process_time() - c0))
    return marks


def ohsumed_time_to_best(folds: list[int], seeds: list[int], log, quick: bool = False) -> dict:
    """For every learner of BEST_LEARNERS, fold and seed: :func:`time_to_best` of a run evaluating
    validation NDCG@10 after every step, with the training-only time of another run read at the same
    step.  ``quick``: the schedules cut to a few steps (for the test)."""
    from rankrepro.algorithms.rankers import RANKERS, _warm_up
    from rankrepro.data.letor import letor_fold

    learners = {k: (kind, dict(p)) for k, (kind, p) in BEST_LEARNERS.items()}
    if quick:
        cut = {"n_iter": 3, "n_rounds": 5, "n_estimators": 5, "C_grid": [0.001, 0.01], "max_pass": 20}
        learners = {k: (kind, {**p, **{c: v for c, v in cut.items() if c in p}}) for k, (kind, p) in learners.items()}
    _warm_up()
    runs = []
    for fold_no in folds:
        fold = letor_fold(fold_no, data_path=str(OHSUMED))
        for name, (kind, params) in learners.items():
            if kind not in ("lightgbm", "lambdamart"):  # compile (or load) the kernels before the clock
                small = {"n_iter": 1, "n_rounds": 1, "C_grid": [1.0], "max_pass": 1}
                RANKERS[kind](**{**params, **{c: v for c, v in small.items() if c in params}}).fit(
                    fold.train.X[:300], fold.train.y[:300], qid=fold.train.qid[:300],
                    eval_set=(fold.valid.X, fold.valid.y, fold.valid.qid))
            for seed in seeds[:1] if name in DETERMINISTIC else seeds:
                p = _with_seed(kind, params, seed)
                check = {}
                if kind in ("lightgbm", "lambdamart"):
                    trace, check = lightgbm_trace(p, fold)
                else:
                    trace = project_trace(kind, p, fold)
                row = {"learner": name, "label": BEST_LABELS[name], "fold": fold_no,
                       "seed": None if name in DETERMINISTIC else seed,
                       **time_to_best(trace, train_trace(kind, p, fold)), **check}
                runs.append(row)
                log(f"  OHSUMED fold {fold_no} {name} seed {seed}: best step {row['best_step']:g} "
                    f"({row['best_index']}/{row['steps']}) at {row['seconds_to_best']:.2f} CPU s "
                    f"(training alone {row['train_seconds_to_best']:.2f} s; whole run {row['seconds_total']:.2f} s), "
                    f"test NDCG@10 {row['test_ndcg10']:.4f}")
    return {"data": "LETOR 2.0 OHSUMED (data/processed/letor2-ohsumed)", "folds": folds, "seeds": seeds,
            "quick": quick, "learners": {k: {"kind": kind, "params": p, "label": BEST_LABELS[k]}
                                         for k, (kind, p) in learners.items()},
            "runs": runs, "summary": best_summary(runs)}


def best_summary(runs: list[dict]) -> dict:
    """Per learner: the CPU seconds to the best step (min, median, max over folds and seeds), with and
    without the validation evaluations; the whole run's; and per seed the mean over the folds of the
    test NDCG@10 at the best step (min and max over the seeds)."""
    out = {}
    for name in dict.fromkeys(r["learner"] for r in runs):
        mine = [r for r in runs if r["learner"] == name]
        by_seed = {}
        for r in mine:
            by_seed.setdefault(r["seed"], []).append(r["test_ndcg10"])

        def stats(key):
            v = [r[key] for r in mine if r.get(key) is not None]
            return [min(v), float(np.median(v)), max(v)] if v else None

        seed_means = [float(np.mean(v)) for v in by_seed.values()]
        out[name] = {"label": mine[0]["label"], "n_runs": len(mine), "seconds_to_best": stats("seconds_to_best"),
                     "train_seconds_to_best": stats("train_seconds_to_best"), "seconds_total": stats("seconds_total"),
                     "best_index": stats("best_index"), "steps": mine[0]["steps"],
                     "test_ndcg10_fold_mean": [min(seed_means), max(seed_means)],
                     "n_folds": len({r["fold"] for r in mine})}
        if "lightgbm_ndcg10_best_step" in mine[0]:
            # had LightGBM picked its tree by its own ndcg@10
            own = {}
            for r in mine:
                own.setdefault(r["seed"], []).append(r["lightgbm_ndcg10_test_ndcg10"])
            own_means = [float(np.mean(v)) for v in own.values()]
            out[name]["lightgbm_ndcg10"] = {
                "other_pick": sum(r["lightgbm_ndcg10_best_step"] != r["best_step"] for r in mine),
                "max_abs_diff_valid": max(r["max_abs_diff_lightgbm_vs_project_valid_ndcg10"] for r in mine),
                "test_ndcg10_fold_mean": [min(own_means), max(own_means)]}
    return out


def run_child(spec: dict, cpu_limit: float, wall_limit: float = 3600.0) -> dict:
    """One point in a fresh process (its peak memory is the point's own), stopped after
    ``cpu_limit`` CPU seconds (RLIMIT_CPU: on a shared machine wall time says little)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT / "src"), os.environ.get("PYTHONPATH"))
                                                       if p)}
    lim = int(math.ceil(cpu_limit))

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_CPU, (lim, lim + 5))

    try:
        r = subprocess.run([sys.executable, __file__, "--point", json.dumps(spec)], capture_output=True, text=True,
                           timeout=wall_limit, env=env, preexec_fn=limit)
    except subprocess.TimeoutExpired:
        return {"error": f"over the wall-time limit: killed after {wall_limit:.0f} s"}
    if r.returncode != 0:
        if r.returncode in (-9, -24):  # SIGKILL / SIGXCPU: the CPU limit
            return {"error": f"over the cap: stopped after {lim} CPU s"}
        return {"error": (r.stderr.strip().splitlines() or ["failed"])[-1][:300]}
    return json.loads(r.stdout.strip().splitlines()[-1])


# ---------------------------------------------------------------------------------------
# the curves
# ---------------------------------------------------------------------------------------
def predict_next(points: list[dict], key: str, x: float, xkey: str) -> float | None:
    """``key`` at size ``x`` from the log-log line through the last two points (slope at least 1
    for time and memory beyond the data's: nothing here grows slower than linearly once large);
    from one point, linearly."""
    pts = [p for p in points if p.get(key)]
    if not pts:
        return None
    x1, y1 = pts[-1][xkey], pts[-1][key]
    slope = 1.0
    if len(pts) >= 2:
        x0, y0 = pts[-2][xkey], pts[-2][key]
        if x1 > x0 and y0 > 0:
            slope = max(1.0, math.log(y1 / y0) / math.log(x1 / x0))
    return y1 * (x / x1) ** slope


def sweep(curve: str, what: str, learner: str, label: str, xkey: str, sizes: list, base: dict, *, child: bool,
          cap: float, mem_budget_mb: float | None, stamp: dict, log, max_repeats: int = 3) -> tuple[list[dict], list[dict]]:
    points, skipped = [], []
    for x in sizes:
        spec = {**base, "curve": curve, "learner": learner, xkey: x, "max_repeats": max_repeats}
        t_pred = predict_next(points, "seconds", x, xkey)
        m_pred = predict_next(points, "peak_rss_mb", x, xkey) if mem_budget_mb else None
        if t_pred is not None and t_pred > cap:
            skipped.append({"curve": curve, "learner": learner, "size": x,
                            "why": f"predicted {t_pred:.0f} CPU s > cap {cap:.0f} s"})
            log(f"  {curve} {learner} {xkey}={x}: skipped (predicted {t_pred:.0f} s)")
            break
        if m_pred is not None and mem_budget_mb and m_pred > mem_budget_mb:
            skipped.append({"curve": curve, "learner": learner, "size": x,
                            "why": f"predicted peak memory {m_pred:.0f} MB > budget {mem_budget_mb:.0f} MB"})
            log(f"  {curve} {learner} {xkey}={x}: skipped (predicted {m_pred:.0f} MB)")
            break
        if child:
            # a LETOR point fits twice (with and without the per-step evaluation)
            out = run_child(spec, cpu_limit=(2.5 if curve == "letor" else 1.5) * cap + 20)
        else:
            out = run_point(spec)
        if "error" in out:
            skipped.append({"curve": curve, "learner": learner, "size": x, "why": out["error"]})
            log(f"  {curve} {learner} {xkey}={x}: {out['error']}")
            break
        pt = {"curve": curve, "what": what, "learner": learner, "label": label, "x": xkey, "size": x,
              xkey: x, **{k: v for k, v in base.items() if k not in (xkey,)}, **out, **stamp}
        points.append(pt)
        log(f"  {curve} {label} {xkey}={x}: {out['seconds']:.3f} CPU s"
            + (f", peak {out['peak_rss_mb']:.0f} MB" if "peak_rss_mb" in out else ""))
    return points, skipped


def bends(points: list[dict]) -> dict:
    """Per curve and learner: the log-log slopes between consecutive points and where the slope
    changes most (the bend: the size at which the segment after it starts)."""
    out: dict = {}
    by = {}
    for p in points:
        by.setdefault((p["curve"], p["learner"]), []).append(p)
    for (curve, learner), pts in by.items():
        pts = sorted(pts, key=lambda p: p["size"])
        ykey = "rounds_per_s" if curve.startswith("online") else "seconds"
        slopes = [math.log(b[ykey] / a[ykey]) / math.log(b["size"] / a["size"]) for a, b in zip(pts, pts[1:])]
        ys = [p[ykey] for p in pts]
        entry = {"sizes": [p["size"] for p in pts], "y": ykey, "slopes": [round(s, 2) for s in slopes],
                 "overall_slope": round(math.log(ys[-1] / ys[0]) / math.log(pts[-1]["size"] / pts[0]["size"]), 2)
                 if len(pts) >= 2 else None,
                 "max_over_min": float(f"{max(ys) / min(ys):.3g}")}
        if len(slopes) >= 2:
            k = max(range(1, len(slopes)), key=lambda i: abs(slopes[i] - slopes[i - 1]))
            entry["bend_at"] = pts[k]["size"]
            entry["slope_before"], entry["slope_after"] = round(slopes[k - 1], 2), round(slopes[k], 2)
        out.setdefault(curve, {})[learner] = entry
    return out


def peers(points: list[dict]) -> list[dict]:
    """Each LETOR learner against LightGBM at every size both ran: CPU time (with the per-step
    validation evaluation, and without where measured) and the fit's memory (peak minus the data's)
    as ratios."""
    lg = {p["size"]: p for p in points if p["curve"] == "letor" and p["learner"] == "lgbm_lambdarank"}
    out = []
    for p in points:
        if p["curve"] == "letor" and p["learner"] != "lgbm_lambdarank" and p["size"] in lg:
            q = lg[p["size"]]
            row = {"learner": p["learner"], "size": p["size"], "time_ratio": p["seconds"] / q["seconds"]}
            if p.get("seconds_no_eval") and q.get("seconds_no_eval"):
                row["time_ratio_no_eval"] = p["seconds_no_eval"] / q["seconds_no_eval"]
            if p.get("fit_memory_mb") and q.get("fit_memory_mb", 0) > 0:
                row["fit_memory_ratio"] = p["fit_memory_mb"] / q["fit_memory_mb"]
            out.append(row)
    return out


def figures(points: list[dict], outdir: Path, stamp: dict) -> list[str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    outdir.mkdir(parents=True, exist_ok=True)
    specs = [
        ("online_width", "rounds_per_s", "instance width d (features; ~20 non-zeros per row)",
         "rounds per CPU second", "Online learners: rounds/s against instance width (sparse rows)"),
        ("online_ensemble", "rounds_per_s", "ensemble size N (members)", "rounds per CPU second",
         "OAP-BPM: rounds/s against ensemble size N"),
        ("letor", "seconds", "training queries (~122 documents each)", "fit time (CPU s)",
         "LETOR learners against LightGBM: fit time (MSLR-WEB30K-shaped)"),
        ("letor", "peak_rss_mb", "training queries (~122 documents each)", "peak resident memory (MB)",
         "LETOR learners against LightGBM: peak memory of the fit's process"),
        ("gp_users", "seconds", "users", "fit time (CPU s)", "Collaborative GP models against the number of users"),
        ("gp_items", "seconds", "training items", "fit time (CPU s)",
         "Collaborative GP models against the number of training items"),
    ]
    written = []
    for curve, ykey, xlabel, ylabel, title in specs:
        pts = [p for p in points if p["curve"] == curve and p.get(ykey)]
        if not pts:
            continue
        fig, ax = plt.subplots(figsize=(7, 4.6))
        for learner in dict.fromkeys(p["learner"] for p in pts):
            mine = sorted((p for p in pts if p["learner"] == learner), key=lambda p: p["size"])
            ax.loglog([p["size"] for p in mine], [p[ykey] for p in mine], marker="o", label=mine[0]["label"])
        from matplotlib.ticker import FuncFormatter, NullFormatter

        plain = FuncFormatter(lambda v, _: f"{v:,.10g}")
        ax.set_xticks(sorted({p["size"] for p in pts}))
        ax.xaxis.set_major_formatter(plain)
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.yaxis.set_major_formatter(plain)
        ys = [p[ykey] for p in pts]
        ax.yaxis.set_minor_formatter(plain if max(ys) / min(ys) < 30 else NullFormatter())
        ax.tick_params(axis="both", which="both", labelsize=7)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.set_title(title, fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
        fig.text(0.99, 0.01, f"{stamp['date']}, {stamp['commit']}, {stamp['machine']}", ha="right", fontsize=6,
                 color="0.4")
        fig.tight_layout()
        name = f"scale_{curve}" + ("_memory" if ykey == "peak_rss_mb" else "") + ".png"
        fig.savefig(outdir / name, dpi=110)
        plt.close(fig)
        written.append(name)
    return written


def _normalised(rec: dict) -> dict:
    """A record of before the per-run settings: its cap and budget moved into its runs."""
    st = rec["settings"]
    cap, budget = st.pop("cap_cpu_s", None), st.pop("memory_budget_mb", None)
    for r in rec["runs"]:
        r.setdefault("settings", {"cap_cpu_s": cap, "memory_budget_mb": budget, "max_repeats": 1 if rec["quick"] else 3,
                                  "letor_queries": None,
                                  "parts": sorted({c.split("_")[0] for c, _ in rec["done"]})})
    return rec


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="tiny sizes, in this process (~1 minute; for the test)")
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "bench" / "scale.json")
    ap.add_argument("--figures", type=Path, default=ROOT / "docs" / "figures" / "bench")
    ap.add_argument("--cap", type=float, default=90.0, help="CPU seconds per point (predicted) in (b) and (c)")
    ap.add_argument("--memory-budget-mb", type=float, default=6000.0, help="peak memory per point (predicted), (b)")
    ap.add_argument("--em-iters", type=int, default=3, help="EM iterations of the GP models (fixed: tolerance 0)")
    ap.add_argument("--only", choices=("online", "letor", "gp"), action="append", help="run only these parts")
    ap.add_argument("--repeats", type=int, default=3, help="at most this many repeats per point (the minimum is kept)")
    ap.add_argument("--letor-queries", help="comma-separated numbers of training queries (default: "
                                            "10,20,40,100,300,1000,3000,10000,31000)")
    ap.add_argument("--ohsumed-folds", default="1,2,3,4,5",
                    help="LETOR 2.0 OHSUMED folds of the time to the best validation step (part letor)")
    ap.add_argument("--ohsumed-seeds", default="0,1,2", help="the learners' seeds there")
    ap.add_argument("--resume", action="store_true",
                    help="keep the curves --out already holds (a run stopped midway; the same settings) and run the rest")
    ap.add_argument("--merge", type=Path, metavar="OTHER_JSON",
                    help="measure nothing: add the curves of another run with the same settings (e.g. --only gp run "
                         "beside) that --out lacks, then --reanalyse")
    ap.add_argument("--replace", action="store_true",
                    help="with --merge: the other run's curves replace those --out has (and a run of --out whose "
                         "curves are all replaced is dropped from its runs)")
    ap.add_argument("--reanalyse", action="store_true",
                    help="measure nothing: recompute the bends, the peers, the figures and the time-to-best summary "
                         "from --out's points and runs")
    ap.add_argument("--point", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.point:
        print(json.dumps(run_point(json.loads(a.point))))
        return
    if a.merge:
        record = _normalised(json.loads(a.out.read_text()))
        other = _normalised(json.loads(a.merge.read_text()))
        if other["settings"] != record["settings"] or other["quick"] != record["quick"]:
            raise SystemExit(f"--merge: {a.merge} was made with other settings")
        have = {tuple(k) for k in record["done"]}
        if a.replace:
            gone = {tuple(k) for k in other["done"]} & have
            record["points"] = [p for p in record["points"] if (p["curve"], p["learner"]) not in gone]
            record["skipped"] = [k for k in record["skipped"] if (k["curve"], k["learner"]) not in gone]
            if ("time_to_best", "ohsumed") in gone:
                record.pop("time_to_best", None)
            have -= gone
            kept = {c.split("_")[0] for c, _ in have}
            record["runs"] = [r for r in record["runs"] if kept & set(r["settings"]["parts"])]
        take = [tuple(k) for k in other["done"] if tuple(k) not in have]
        record["points"] += [p for p in other["points"] if (p["curve"], p["learner"]) in take]
        if ("time_to_best", "ohsumed") in take:
            record["time_to_best"] = other["time_to_best"]
        record["skipped"] += [k for k in other["skipped"] if (k["curve"], k["learner"]) in take]
        record["done"] = sorted(have | set(take))
        record["runs"] += other["runs"]
        record["wall_s"] = sum(r["wall_s"] for r in record["runs"])
        # complete when every curve of a whole run is there (a run stopped after its last curve was saved is)
        expected = ({("online_width", x) for x in ONLINE_LEARNERS} | {("online_ensemble", "oap_bpm")}
                    | {("letor", x) for x in LETOR_LEARNERS} | {(c, x) for c in ("gp_users", "gp_items") for x in GP_MODELS}
                    | {("time_to_best", "ohsumed")})
        record["complete"] = expected <= set(take) | have
        a.out.write_text(json.dumps(record, indent=1, sort_keys=False) + "\n")
        print(f"{a.out}: {len(take)} curves taken from {a.merge}")
        a.reanalyse = True
    if a.reanalyse:
        record = json.loads(a.out.read_text())
        record["bends"], record["peers"] = bends(record["points"]), peers(record["points"])
        if record.get("time_to_best"):
            record["time_to_best"]["summary"] = best_summary(record["time_to_best"]["runs"])
        runs = record.get("runs") or [record]
        record["figures"] = figures(record["points"], a.figures, {
            "date": ", ".join(dict.fromkeys(r["date"] for r in runs)),
            "commit": ", ".join(dict.fromkeys(r["commit"] for r in runs)), "machine": record["machine"]})
        a.out.write_text(json.dumps(record, indent=1, sort_keys=False) + "\n")
        print(f"{a.out}: bends, peers and {len(record['figures'])} figures recomputed from its points")
        return

    def log(msg: str) -> None:
        print(msg, flush=True)

    t_start = time.perf_counter()
    full = bench_stamp()
    stamp = {k: full[k] for k in ("date", "commit", "machine")}
    quick, child = a.quick, not a.quick
    parts = a.only or ["online", "letor", "gp"]
    max_repeats = 1 if quick else a.repeats
    if quick:
        widths, Ns, rounds = [6, 60, 600, 6000], [1, 10, 100], 2_000
        queries, users, items, fixed_items, fixed_users, n_test = [3, 6, 12], [10, 20, 40], [20, 40, 80], 20, 10, 10
    else:
        widths, Ns, rounds = [6, 60, 600, 6000, 60000, 100000], [1, 10, 100, 1000], 20_000
        queries = ([int(q) for q in a.letor_queries.split(",")] if a.letor_queries
                   else [10, 20, 40, 100, 300, 1000, 3000, 10000, 31000])
        users, items, fixed_items, fixed_users, n_test = [100, 200, 500, 1000, 2000], [100, 200, 400, 800], 100, 100, 100
    settings = {"rounds": rounds, "nnz_per_row": 20, "ensemble_width": 600, "letor_features": N_FEATURES_LETOR,
                "letor_documents_per_query": "uniform 61..183 (mean 122)", "letor_validation_queries": 30,
                "mslr_grade_cuts": list(MSLR_CUTS), "gp_em_iters": a.em_iters, "gp_tol": 0.0,
                "gp_rated_fraction": 0.4, "gp_test_items": n_test, "gp_fixed_items": fixed_items,
                "gp_fixed_users": fixed_users, "cap_cpu_s": a.cap, "memory_budget_mb": a.memory_budget_mb,
                "in_process": not child, "threads": 1}
    # what may differ between runs merged into one record (each run keeps its own in "runs")
    ohsumed_folds = [1] if quick else [int(x) for x in a.ohsumed_folds.split(",")]
    ohsumed_seeds = [0] if quick else [int(x) for x in a.ohsumed_seeds.split(",")]
    run_settings = {"cap_cpu_s": a.cap, "memory_budget_mb": a.memory_budget_mb, "max_repeats": max_repeats,
                    "letor_queries": queries, "parts": parts}
    if "letor" in parts:
        run_settings["letor_comparison"] = LETOR_COMPARISON
        run_settings["ohsumed_folds"], run_settings["ohsumed_seeds"] = ohsumed_folds, ohsumed_seeds
    for k in ("cap_cpu_s", "memory_budget_mb"):
        settings.pop(k)
    previous = json.loads(a.out.read_text()) if a.resume and a.out.is_file() else None
    if previous is not None and (previous.get("quick") != quick or previous.get("settings") != settings):
        raise SystemExit(f"--resume: {a.out} was made with other settings; run without --resume")
    points = list(previous["points"]) if previous else []
    skipped = list(previous["skipped"]) if previous else []
    done = {tuple(k) for k in previous.get("done", [])} if previous else set()
    runs = list(previous.get("runs", [])) if previous else []
    this_run = {**{k: full[k] for k in ("date", "commit", "machine", "load_average_start")}, "wall_s": 0.0,
                "settings": run_settings}
    runs.append(this_run)
    time_best = previous.get("time_to_best") if previous else None

    def record(complete: bool) -> dict:
        this_run["load_average_end"] = [round(v, 2) for v in os.getloadavg()]
        this_run["wall_s"] = time.perf_counter() - t_start
        first = runs[0]
        return {
            "about": "scripts/bench_scale.py: how the cost grows with the work (issue 46, item 3); seconds are CPU "
                     "seconds, the minimum over `repeats` runs; peak_rss_mb is the peak resident memory of the "
                     "point's own process (data included; rss_before_fit_mb: after the data were generated); every "
                     "point names the date, commit and machine it was measured on (runs: each invocation, when one "
                     "was resumed)",
            "command": "python scripts/bench_scale.py" + (" --quick" if quick else ""), "quick": quick,
            **full, "date": first["date"], "commit": first["commit"], "load_average_start": first["load_average_start"],
            "load_average_end": this_run["load_average_end"], "wall_s": sum(r["wall_s"] for r in runs),
            "runs": runs, "complete": complete, "settings": settings, "points": points, "skipped": skipped,
            "done": sorted(done), "bends": bends(points), "peers": peers(points),
            **({"time_to_best": time_best} if time_best else {})}

    def save(complete: bool = False) -> dict:
        rec = record(complete)
        if complete:
            rec["figures"] = figures(points, a.figures, {k: rec[k] for k in ("date", "commit", "machine")})
        a.out.parent.mkdir(parents=True, exist_ok=True)
        a.out.write_text(json.dumps(rec, indent=1, sort_keys=False) + "\n")
        return rec

    def run(curve: str, learner: str, *args, **kw) -> None:
        if (curve, learner) in done:
            log(f"  {curve} {learner}: kept from {a.out} (--resume)")
            return
        p, s = sweep(curve, *args[:1], learner, *args[1:], **kw)
        points.extend(p)
        skipped.extend(s)
        done.add((curve, learner))
        save()

    if "online" in parts:
        log("(a) online learners")
        for learner in ONLINE_LEARNERS:
            run("online_width", learner, "rounds/s against instance width d", ONLINE_LABELS[learner], "d", widths,
                {"rounds": rounds, "nnz": 20}, child=False, cap=math.inf, mem_budget_mb=None, stamp=stamp, log=log,
                max_repeats=max_repeats)
        run("online_ensemble", "oap_bpm", "rounds/s against ensemble size N", "OAP-BPM (d = 600)", "N", Ns,
            {"rounds": rounds, "nnz": 20, "d": 600}, child=False, cap=math.inf, mem_budget_mb=None, stamp=stamp,
            log=log, max_repeats=max_repeats)
    if "letor" in parts:
        log("(b) LETOR learners against LightGBM")
        for learner in LETOR_LEARNERS:
            run("letor", learner, "fit time and peak memory against training queries", LETOR_LABELS[learner],
                "n_queries", queries, {"n_val": 30 if not quick else 5}, child=True, cap=a.cap,
                mem_budget_mb=a.memory_budget_mb, stamp=stamp, log=log, max_repeats=max_repeats)
        if ("time_to_best", "ohsumed") in done:
            log("  time to the best validation step on OHSUMED: kept (--resume)")
        elif OHSUMED.is_file():
            log("(b') LETOR 2.0 OHSUMED: CPU time to the best validation step")
            time_best = {**ohsumed_time_to_best(ohsumed_folds, ohsumed_seeds, log, quick=quick), **stamp}
            done.add(("time_to_best", "ohsumed"))
            save()
        else:
            log(f"  time to the best validation step: skipped ({OHSUMED} missing: make data)")
    if "gp" in parts:
        log("(c) collaborative GP models")
        for learner in GP_MODELS:
            for curve, xkey, sizes, base in (
                    ("gp_users", "n_users", users, {"n_items": fixed_items}),
                    ("gp_items", "n_items", items, {"n_users": fixed_users})):
                what = "fit time against the number of " + ("users" if curve == "gp_users" else "training items")
                run(curve, learner, what, GP_LABELS[learner], xkey, sizes,
                    {**base, "n_test": n_test, "em_iters": a.em_iters}, child=child, cap=a.cap,
                    mem_budget_mb=None, stamp=stamp, log=log, max_repeats=max_repeats)
    rec = save(complete=True)
    log(f"wrote {a.out} ({len(points)} points, {len(skipped)} skipped) and {len(rec['figures'])} figures "
        f"in {a.figures}; {rec['wall_s']:.0f} s")


if __name__ == "__main__":
    main()
