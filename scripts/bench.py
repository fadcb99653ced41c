"""Speed of the compiled learners against the plain per-example NumPy implementation,
both measured in this run on the synthetic stream of Harrington (2003) / Crammer & Singer
(2005) (degree-2 polynomial features, 5 ranks).  Prints rounds per second and the ratio.

    python scripts/bench.py [--rounds 50000] [--plain-rounds 3000] [--repeat 3]
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from rankrepro.algorithms import OAPBPM, PRank, poly2_features
from rankrepro.algorithms.reference import oap_bpm_plain, prank_plain
from rankrepro.data.synthetic import synthetic_hgo


def best_time(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=50_000, help="rounds for the compiled learners")
    ap.add_argument("--plain-rounds", type=int, default=3_000, help="rounds for the plain reference")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()

    split = synthetic_hgo(args.rounds, 0, np.random.default_rng(0))
    X, y = poly2_features(split.X_train), split.y_train
    n_plain = min(args.plain_rounds, args.rounds)
    N, tau = 100, 0.3

    # warm-up (JIT compilation is not what we measure) and an agreement check
    PRank().fit_online(X[:10], y[:10])
    OAPBPM(N=N, tau=tau, seed=0).fit_online(X[:10], y[:10])
    mask = np.random.default_rng(np.random.SeedSequence(1)).random((n_plain, N)) < tau
    assert np.array_equal(PRank().fit_online(X[:n_plain], y[:n_plain]), prank_plain(X[:n_plain], y[:n_plain], 5)[0])
    assert np.array_equal(OAPBPM(N=N, tau=tau, seed=1).fit_online(X[:n_plain], y[:n_plain]),
                          oap_bpm_plain(X[:n_plain], y[:n_plain], 5, mask)[0])

    rows = []
    t_fast = best_time(lambda: PRank().fit_online(X, y), args.repeat)
    t_plain = best_time(lambda: prank_plain(X[:n_plain], y[:n_plain], 5), max(1, args.repeat - 1))
    rows.append(("PRank", args.rounds / t_fast, n_plain / t_plain))
    t_fast = best_time(lambda: OAPBPM(N=N, tau=tau, seed=1).fit_online(X, y), args.repeat)
    t_plain = best_time(lambda: oap_bpm_plain(X[:n_plain], y[:n_plain], 5, mask), 1)
    rows.append((f"OAP-BPM (N={N}, tau={tau})", args.rounds / t_fast, n_plain / t_plain))

    print(f"{'learner':<26}{'compiled rounds/s':>20}{'plain NumPy rounds/s':>24}{'ratio':>10}")
    for name, fast, plain in rows:
        print(f"{name:<26}{fast:>20,.0f}{plain:>24,.0f}{fast / plain:>9.0f}x")
    print(f"(compiled: {args.rounds} rounds, best of {args.repeat}; plain: {n_plain} rounds; same stream, "
          "identical predictions checked)")

    # processed data: one npz read per data set (goal: under a second each)
    from pathlib import Path

    from rankrepro.data.preprocess import PROCESSED, load

    built = sorted(p.parent.name for p in Path("data/processed").glob(f"*/{PROCESSED}"))
    if built:
        print(f"\n{'processed data set':<26}{'load time':>12}{'size':>12}")
        for name in built:
            t = best_time(lambda: load(name), args.repeat)
            size = (Path("data/processed") / name / PROCESSED).stat().st_size / 1e6
            print(f"{name:<26}{t * 1000:>10.1f}ms{size:>10.1f}MB")


if __name__ == "__main__":
    main()
