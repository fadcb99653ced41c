"""One EM iteration of the collaborative GP models (Yu, Yu & Tresp 2006) for 100 users at 400
training items: this project's implementation (the prior kept on the training items, parallel
EP, one BLAS thread) against the plain one written from the paper (full m x m Sigma and per-user
posterior covariances, eq. 3 as printed; textbook sequential EP), in the same run on the same
data, with the same result checked.

    python scripts/bench_gp.py [--users 100] [--items 400]
    python scripts/bench_gp.py --fits [--items 400] [--repeats 2] [--before linalg|reuse] [--after inverse|default]

``--fits``: whole paper-scale fits of GPOR and CGPOR (one trial of Yu et al.'s cell at ``--items``
training movies, as the experiment runs it), a "before" configuration of ``GPModel`` against
today's, interleaved in one process, CPU seconds (user + sys of this process; the least over
``--repeats``); the share of predictions that are the same, the EP sweeps and factorisations of
each; then the Yu et al. cells' seconds of work in ``rules/cell_seconds.json`` (measured before
the change) scaled by each model's ratio: an estimate of the cells' core-minutes after it.
``--before linalg`` (the default): EP's marginals by the triangular solve for every model
(``GPModel._ep_linalg``, the default); ``--after inverse`` (the default): from diag(B^-1), the
inverse of B's Cholesky factor (issue 60 item 4: the same fixed point, other rounding; the
predictions move within EP's tolerance); ``--after default``: ``GPModel`` as it is.
``--before reuse``: the solve and
every user's EP run at every E-step and every run's first sweep factoring B
(``GPModel._reuse_ep = GPModel._reuse_marginals = False``: the code before issue 60).

Runs on the processed MovieLens 1M substitute when it is there (data/processed/...), else on a
synthetic problem of the same size (2,514 items, 39% of the ratings observed).
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from rankrepro.algorithms.ep import _pack, ep_ordinal, initial_thresholds, thresholds_from
from rankrepro.algorithms.gp import CollabPrior, cgpr_em
from rankrepro.algorithms.reference import cgpr_em_plain, cgpor_iteration_plain


def problem(n_users: int):
    path = Path("data/processed/movielens-1m-bpmf/data.npz")
    if path.exists():
        from rankrepro.data.collab_gp import collab_gp

        d = collab_gp(data_path=str(path))
        return d.K, d.Y[:n_users], "MovieLens 1M (the EachMovie substitute)"
    rng = np.random.default_rng(0)
    m = 2514
    F = rng.normal(size=(m, 3000))
    K = np.corrcoef(F)
    Y = np.where(rng.random((n_users, m)) < 0.39, rng.integers(1, 6, (n_users, m)), 0)
    return K, Y, "synthetic (no processed MovieLens found)"


def gp_workload(n_users: int = 100, n_items: int = 400) -> list[tuple[str, float, float]]:
    from threadpoolctl import threadpool_limits

    K, Y, what = problem(n_users)
    train = np.sort(np.random.default_rng(1).permutation(K.shape[0])[:n_items])
    Ytr = Y[:, train]
    J = [np.flatnonzero(r > 0) for r in Ytr]
    T = [r[j] - r[j].mean() for r, j in zip(Ytr, J)]
    print(f"\nCollaborative GP, one EM iteration: {n_users} users, {n_items} training items, {K.shape[0]} items, "
          f"{sum(j.size for j in J):,} training labels; {what}")
    # CGPR
    prior = CollabPrior.from_kernel(K, train)
    t0 = time.perf_counter()
    with threadpool_limits(limits=1, user_api="blas"):
        cgpr_em(prior, J, T, 0.01, 1)
    t_fast = time.perf_counter() - t0
    t0 = time.perf_counter()
    h, Sig, _, _ = cgpr_em_plain(K, Y, train, 0.01, 1)
    t_plain = time.perf_counter() - t0
    assert np.allclose(prior.h, h, atol=1e-8) and np.allclose(prior.G, Sig[:, train], atol=1e-8)
    rows = [("CGPR EM iteration", t_fast, t_plain)]
    # CGPOR: EP for every user from a cold start, then eq. 3
    params = [_pack(initial_thresholds(Ytr[u, J[u]], 5, 1.0), 1.0) for u in range(n_users)]
    b = [thresholds_from(p[:-1]) for p in params]
    sig = np.ones(n_users)
    prior = CollabPrior.from_kernel(K, train)
    t0 = time.perf_counter()
    with threadpool_limits(limits=1, user_api="blas"):
        S, hJ = prior.S, prior.h[train]
        posts = [ep_ordinal(S[np.ix_(j, j)], hJ[j], Ytr[u, j], b[u], 1.0).post for u, j in enumerate(J)]
        prior.m_step(J, posts)
    t_fast = time.perf_counter() - t0
    t0 = time.perf_counter()
    h, Sig = cgpor_iteration_plain(K, Y, train, b, sig, np.zeros(K.shape[0]), K)
    t_plain = time.perf_counter() - t0
    assert np.allclose(prior.h, h, atol=1e-3) and np.allclose(prior.G, Sig[:, train], atol=1e-3)
    rows.append(("CGPOR EM iteration (EP + eq. 3)", t_fast, t_plain))
    print(f"{'step':<34}{'this project s':>16}{'plain s':>12}{'ratio':>10}")
    for name, f, p in rows:
        print(f"{name:<34}{f:>16.2f}{p:>12.2f}{p / f:>9.1f}x")
    print("(same data, same result checked: h and Sigma agree with the plain computation)")
    return rows


#: the "before" and "after" configurations of --fits (GPModel's class attributes)
SOLVE = {True: "solve", False: "solve"}
BEFORE = {"linalg": {"_ep_linalg": SOLVE},
          "reuse": {"_ep_linalg": SOLVE, "_reuse_ep": False, "_reuse_marginals": False}}
AFTER = {"default": {},  # GPModel as it is
         "inverse": {"_ep_linalg": {True: "inverse", False: "inverse"}}}


def fit_workload(n_items: int = 400, repeats: int = 2, trial: int = 0, before: str = "linalg", after: str = "inverse",
                 models: tuple[str, ...] = ("gpor", "cgpor")) -> dict[str, tuple[float, float]]:
    import json

    from rankrepro.algorithms import ep as ep_mod
    from rankrepro.algorithms.gp import GPModel
    from rankrepro.pipeline.catalog import catalog_jobs, default_cache_dir, load_catalog
    from rankrepro.pipeline.runner import default_data_path, trial_spec
    from rankrepro.protocols.gp import gp_fit

    exp = load_catalog("paper", cache_dir=default_cache_dir(), jobs=catalog_jobs())["yu2006/tables"]
    out = {}
    keys = {**BEFORE[before], **AFTER[after]}
    defaults = {k: getattr(GPModel, k) for k in keys}
    configs = {False: {**defaults, **BEFORE[before]}, True: {**defaults, **AFTER[after]}}
    print(f"\nWhole fits, yu2006/tables trial {trial} at {n_items} training movies (CPU s, least of {repeats}); "
          f"before: {BEFORE[before]}, after: {AFTER[after] or 'GPModel as it is'}:")
    print(f"{'model':<8}{'before s':>10}{'after s':>10}{'ratio':>8}{'EP sweeps before':>18}{'after':>8}"
          f"{'factorisations before':>23}{'after':>8}  same predictions")
    real = {name: getattr(ep_mod, name) for name in ("_factor", "_factor_inv")}
    counts = {True: 0, False: 0}
    state = {"after": True}

    def counting(name):
        def f(*a):
            counts[state["after"]] += 1
            return real[name](*a)
        return f

    for model in models:
        run_exp, cell = exp.variant_of(exp.cell(f"{model}-n_items{n_items}"))
        spec = trial_spec(run_exp, cell, trial, default_data_path(exp))
        gp_fit(spec)  # the data loaded and cached once, outside the timing
        best = {False: float("inf"), True: float("inf")}
        preds, sweeps, facts = {}, {}, {}
        for rep in range(repeats + 1):  # the first round (counted, not timed) counts the factorisations
            for after in (False, True):  # interleaved: the same machine load for both
                for k, v in configs[after].items():
                    setattr(GPModel, k, v)
                state["after"] = after
                counts[after] = 0
                if rep == 0:
                    for name in real:
                        setattr(ep_mod, name, counting(name))
                t0 = time.process_time()
                fit = gp_fit(spec)[0]
                if rep == 0:
                    for name, f in real.items():
                        setattr(ep_mod, name, f)
                    facts[after] = counts[after]
                else:
                    best[after] = min(best[after], time.process_time() - t0)
                preds[after], sweeps[after] = fit.preds, sum(fit.ep_sweeps)
        for k, v in defaults.items():
            setattr(GPModel, k, v)
        pairs = [(a, b) for r in preds[True] for a, b in zip(preds[True][r], preds[False][r])]
        same = sum(int(np.sum(a == b)) for a, b in pairs) / sum(a.size for a, _ in pairs)
        out[model] = (best[False], best[True])
        print(f"{model:<8}{best[False]:>10.2f}{best[True]:>10.2f}{best[False] / best[True]:>7.2f}x{sweeps[False]:>18,}"
              f"{sweeps[True]:>8,}{facts[False]:>23,}{facts[True]:>8,}  {same:.4%}")
    cells = json.loads(Path("rules/cell_seconds.json").read_text())["seconds"]
    before = after = 0.0
    for k, sec in cells.items():
        if not k.startswith("yu2006/"):
            continue
        model = k.split("/")[-1].split("-")[0]
        before += sec
        after += sec * (out[model][1] / out[model][0] if model in out else 1.0)
    print(f"Yu et al.'s cells, rules/cell_seconds.json scaled by the ratios above (CGPR, GPR unchanged): "
          f"{before / 60:.1f} -> {after / 60:.1f} core-minutes (estimate)")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--users", type=int, default=100)
    ap.add_argument("--items", type=int, default=400)
    ap.add_argument("--fits", action="store_true", help="whole fits, before/after issue 60 (see above)")
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--before", choices=sorted(BEFORE), default="linalg",
                    help="with --fits: the configuration to compare with (see above)")
    ap.add_argument("--after", choices=sorted(AFTER), default="inverse",
                    help="with --fits: 'inverse' -- EP's marginals from diag(B^-1) for every model (issue 60 item 4, "
                         "not the default: see docs/benchmarks.md); 'default' -- GPModel as it is")
    ap.add_argument("--models", default="gpor,cgpor", help="with --fits: the models, comma-separated")
    args = ap.parse_args()
    if args.fits:
        fit_workload(args.items, args.repeats, before=args.before, after=args.after, models=tuple(args.models.split(",")))
    else:
        gp_workload(args.users, args.items)


if __name__ == "__main__":
    main()
