"""Every benchmark of the project in one run, each against a reference measured in the same
run on the same data (identical results checked), ending with one summary table:

* the compiled online learners against the plain per-example NumPy implementation on the
  synthetic stream of Harrington (2003) / Crammer & Singer (2005) and on the Fig. 7 workload;
* the committee perceptron against the Ranking SVM on one LETOR OHSUMED fold (Elsas et al.);
* coactive movies: all users at once against one user at a time (Shivaswamy & Joachims);
* collaborative GP: one EM iteration against eq. 3 as written (Yu, Yu & Tresp; scripts/bench_gp.py);
* processed data sets: load time.

    python scripts/bench.py [--rounds 50000] [--plain-rounds 3000] [--repeat 3] [--skip-gp] [--no-record]

The summary is also written to docs/bench/bench.json (date, commit, machine, load average), from
which scripts/bench_page.py makes the top of docs/benchmarks.md.
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from rankrepro.algorithms import OAPBPM, OAPBagg, PRank, poly2_features
from rankrepro.algorithms.reference import oap_bpm_plain, oap_vote_plain, prank_plain
from rankrepro.data.synthetic import synthetic_hgo


#: (workload, this project, reference, ratio) rows of the closing summary table
SUMMARY: list[tuple[str, str, str, str]] = []
_ARGS: argparse.Namespace | None = None


def best_time(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def fig7_workload(repeat: int, n_viewers: int = 30, rounds: int = 100) -> None:
    """Crammer & Singer Fig. 7 on the MovieLens substitute: n_viewers random viewers with at
    least 100 ratings, their first 100 ratings online, ~2,900 sparse features each."""
    from pathlib import Path

    npz = Path("data/processed/movielens-1m-bpmf/data.npz")
    if not npz.is_file():
        print("\n(Fig. 7 workload skipped: run `make data` first)")
        return
    from rankrepro.algorithms import MuPRank
    from rankrepro.data.cf import people_matrix, person_instances

    P = people_matrix(str(npz), 100, False)
    rng = np.random.default_rng(0)
    targets = rng.choice(np.flatnonzero(np.diff(P["bounds"]) >= rounds), n_viewers, replace=False)
    streams = [person_instances(P, int(t), rounds) for t in targets]
    nnz = np.mean([np.count_nonzero(X) / X.size for X, _ in streams])
    from scipy import sparse

    sparse_streams = [(sparse.csr_matrix(X), y) for X, y in streams]
    total = n_viewers * rounds
    t_fast = best_time(lambda: [PRank(n_ranks=5).fit_online(X, y) for X, y in sparse_streams], repeat)
    t_mu = best_time(lambda: [MuPRank(n_ranks=5, eta=4.0).fit_online(X, y) for X, y in sparse_streams], repeat)
    t_plain = best_time(lambda: [prank_plain(X, y, 5) for X, y in streams], max(1, repeat - 1))
    for X, y in streams[:3]:
        assert np.array_equal(PRank(n_ranks=5).fit_online(X, y), prank_plain(X, y, 5)[0])
    print(f"\nFig. 7 workload: {n_viewers} viewers x {rounds} rounds, {streams[0][0].shape[1]} features, "
          f"{100 * nnz:.1f}% non-zero")
    print(f"{'learner':<26}{'compiled rounds/s':>20}{'plain NumPy rounds/s':>24}{'ratio':>10}")
    print(f"{'PRank (sparse rows)':<26}{total / t_fast:>20,.0f}{total / t_plain:>24,.0f}{t_plain / t_fast:>9.0f}x")
    print(f"{'Mu-PRank (eta=4)':<26}{total / t_mu:>20,.0f}{'':>24}{'':>10}")
    SUMMARY.append(("Fig. 7 PRank (sparse rows)", f"{total / t_fast:,.0f} rounds/s", f"{total / t_plain:,.0f} rounds/s",
                    f"{t_plain / t_fast:.0f}x"))


def cpu_time(fn) -> tuple[float, object]:
    """CPU seconds of this process (time.process_time: one core's work, not wall time, so the
    other sessions sharing the machine do not inflate it) and fn's result."""
    t0 = time.process_time()
    out = fn()
    return time.process_time() - t0, out


def letor_workload(fold: int = 1) -> None:
    """Elsas et al. Table 5 workload, in CPU time: one OHSUMED fold, the committee perceptron
    (N_com = 20, the 50 iterations of Table 5's caption; pairs in one random order, the
    default, and in file order) against the Ranking SVM at the C values validation picks on
    these folds (0.001, 0.01) and at SVMlight's default C = 1 / (mean ||D||)^2 (what an SVMlight
    run without -c uses), each with its pair visits per CPU second.  The ratios are the
    Ranking SVM's CPU time over the committee perceptron's (random order), measured here."""
    npz = Path("data/processed/letor2-ohsumed/data.npz")
    if not npz.is_file():
        print("\n(LETOR workload skipped: run `make data` first)")
        return
    from rankrepro.algorithms.pairwise import PairwisePerceptron, make_pairs, pair_differences
    from rankrepro.algorithms.rankers import RankSVM, _warm_up
    from rankrepro.data.letor import letor_fold

    f = letor_fold(fold, data_path=str(npz))
    _warm_up()
    X, y, q = f.train.X, f.train.y, f.train.qid
    rows = []
    for order in ("random", "file"):
        t, p = cpu_time(lambda: PairwisePerceptron(n_iter=50, committee=20, order=order, seed=2008).fit(X, y, q))
        rows.append((f"committee perceptron, {order} order", t, 50 * p.n_pairs_, "50 it."))
    t_com, n_pairs = rows[0][1], rows[0][2] // 50

    def svm_setup():  # as RankSVM.iterate sets up
        hi, lo, _ = make_pairs(y, q)
        return pair_differences(np.ascontiguousarray(X, dtype=np.float64), hi, lo)

    t_setup, D = cpu_time(svm_setup)
    c_svmlight = RankSVM.svmlight_default_C(D)
    for label, C in (("0.001", 0.001), ("0.01", 0.01), (f"SVMlight default {c_svmlight:.2f}", c_svmlight)):
        svm = RankSVM(max_pass=200, eps=0.1)
        t, _ = cpu_time(lambda: svm.fit_C(D, C, 1))
        rows.append((f"Ranking SVM, C = {label}", t_setup + t, svm.passes_ * D.shape[0], f"{svm.passes_} passes"))
    print(f"\nLETOR 2.0 OHSUMED fold {fold}: {n_pairs:,} preference pairs; CPU seconds (time.process_time)")
    print(f"{'learner':<50}{'CPU s':>9}{'pair visits/s':>16}{'work':>12}{'ratio':>9}")
    for name, t, visits, work in rows:
        print(f"{name:<50}{t:>9.2f}{visits / t:>16,.0f}{work:>12}{t / t_com:>8.1f}x")
    for name, t, _, _ in rows[1:]:
        SUMMARY.append((f"LETOR fold {fold} CPU: {name} / committee (random)", f"{t_com:.2f} s", f"{t:.2f} s",
                        f"{t / t_com:.1f}x"))
    svmlight_workload(f, fold, t_com, c_svmlight)


def svmlight_workload(f, fold: int, t_com: float, c_default: float) -> None:
    """The solver the paper timed: SVM-Light's own svm_learn in ranking mode (-z p) on the same
    fold, when RANKREPRO_SVM_LEARN names the binary (SVM-Light is not distributed with this
    project: build it from svmlight.joachims.org).  Each run is capped at
    RANKREPRO_SVM_LEARN_CPU CPU seconds (default 300); a capped run prints a lower bound."""
    import os
    import resource
    import subprocess
    import tempfile

    exe = os.environ.get("RANKREPRO_SVM_LEARN")
    if not exe:
        print("(SVM-Light itself not timed: set RANKREPRO_SVM_LEARN to an svm_learn binary)")
        return
    cap = int(os.environ.get("RANKREPRO_SVM_LEARN_CPU", "300"))
    with tempfile.TemporaryDirectory() as tmp:
        train = Path(tmp) / "train.dat"
        with open(train, "w") as fh:
            for i in range(len(f.train.y)):
                feats = " ".join(f"{j + 1}:{v:.17g}" for j, v in enumerate(f.train.X[i]) if v != 0.0)
                fh.write(f"{int(f.train.y[i])} qid:{int(f.train.qid[i])} {feats}\n")
        for label, args in (("C = 0.01", ["-c", "0.01"]), (f"default C ({c_default:.4f})", [])):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            r = subprocess.run([exe, "-v", "0", "-z", "p", *args, str(train), str(Path(tmp) / "model")],
                               capture_output=True, text=True,
                               preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_CPU, (cap, cap)))
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            t = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
            done = r.returncode == 0
            shown = f"{t:.1f}" if done else f"> {t:.0f}"
            print(f"{'SVM-Light V6 svm_learn -z p, ' + label:<50}{shown:>9}{'':>16}"
                  f"{'done' if done else 'CPU cap':>12}{t / t_com:>8.0f}x{'' if done else '+'}")
            SUMMARY.append((f"LETOR fold {fold} CPU: SVM-Light, {label} / committee (random)", f"{t_com:.2f} s",
                            f"{shown} s", f"{t / t_com:.0f}x" + ("" if done else "+")))


def coactive_workload(n_users: int = 200, n_movies: int = 3706, dim: int = 10, rounds: int = 200) -> None:
    """Coactive movie recommendation (strict feedback): all users at once (one weight matrix)
    against a loop over users, same random problem, identical recommendations checked."""
    from rankrepro.algorithms.coactive import PreferencePerceptron, SortedUtilities, strictly_alpha_informative_item

    rng = np.random.default_rng(0)
    M = rng.normal(size=(n_movies, dim))
    U = rng.normal(size=(n_users, dim)) @ M.T

    def together():  # as the protocol runs it: one weight matrix, the user's answers from sorted utilities
        pp = PreferencePerceptron(n_features=dim, n_users=n_users)
        avail, rows, out = np.ones_like(U, dtype=bool), np.arange(n_users), []
        su = SortedUtilities(U)
        for _ in range(rounds):
            S = pp.scores(M)
            S[~avail] = -np.inf
            y = np.argmax(S, axis=1)
            ybar, _ = su.feedback(avail, y, 0.5)
            pp.update(M[ybar] - M[y])
            for a in (y, ybar):
                avail[rows, a] = False
            out.append(y)
        return np.array(out)

    def one_by_one():
        out = np.zeros((rounds, n_users), dtype=np.int64)
        for u in range(n_users):
            pp = PreferencePerceptron(n_features=dim)
            Ua, avail = U[u:u + 1].copy(), np.ones((1, n_movies), dtype=bool)
            for t in range(rounds):
                S = pp.scores(M)
                S[~avail] = -np.inf
                y = np.argmax(S, axis=1)
                ybar = strictly_alpha_informative_item(U[u:u + 1], y, 0.5, masked=Ua)
                pp.update(M[ybar] - M[y])
                for a in (y, ybar):
                    avail[0, a] = False
                    Ua[0, a] = -np.inf
                out[t, u] = y[0]
        return out

    SortedUtilities(U[:2]).feedback(np.ones((2, n_movies), dtype=bool), np.zeros(2, dtype=np.int64), 0.5)  # compile
    t0 = time.perf_counter()
    a = together()
    t_vec = time.perf_counter() - t0
    t0 = time.perf_counter()
    b = one_by_one()
    t_loop = time.perf_counter() - t0
    assert np.array_equal(a, b)
    total = n_users * rounds
    print(f"\nCoactive movies: {n_users} users x {rounds} rounds, {n_movies} movies, {dim} dimensions")
    print(f"{'implementation':<34}{'user-rounds/s':>16}{'ratio':>10}")
    print(f"{'all users at once (matrix)':<34}{total / t_vec:>16,.0f}{t_loop / t_vec:>9.1f}x")
    print(f"{'one user at a time':<34}{total / t_loop:>16,.0f}{'1.0x':>10}")
    SUMMARY.append(("coactive: users at once vs per user", f"{total / t_vec:,.0f} user-rounds/s",
                    f"{total / t_loop:,.0f} user-rounds/s", f"{t_loop / t_vec:.1f}x"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=50_000, help="rounds for the compiled learners")
    ap.add_argument("--plain-rounds", type=int, default=3_000, help="rounds for the plain reference")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--skip-gp", action="store_true", help="skip the collaborative GP benchmark (~2 minutes)")
    ap.add_argument("--no-record", action="store_true", help="print only; leave docs/bench/bench.json alone")
    args = ap.parse_args()
    global _ARGS
    _ARGS = args

    split = synthetic_hgo(args.rounds, 0, np.random.default_rng(0))
    X, y = poly2_features(split.X_train), split.y_train
    n_plain = min(args.plain_rounds, args.rounds)
    N, tau = 100, 0.3

    # warm-up (JIT compilation is not what we measure) and an agreement check
    PRank().fit_online(X[:10], y[:10])
    OAPBPM(N=N, tau=tau, seed=0).fit_online(X[:10], y[:10])
    OAPBagg(N=N, tau=tau, seed=0).fit_online(X[:10], y[:10])
    mask = np.random.default_rng(np.random.SeedSequence(1)).random((n_plain, N)) < tau
    assert np.array_equal(PRank().fit_online(X[:n_plain], y[:n_plain]), prank_plain(X[:n_plain], y[:n_plain], 5)[0])
    assert np.array_equal(OAPBPM(N=N, tau=tau, seed=1).fit_online(X[:n_plain], y[:n_plain]),
                          oap_bpm_plain(X[:n_plain], y[:n_plain], 5, mask)[0])
    assert np.array_equal(OAPBagg(N=N, tau=tau, seed=1).fit_online(X[:n_plain], y[:n_plain]),
                          oap_vote_plain(X[:n_plain], y[:n_plain], 5, mask, "bagg")[0])

    rows = []
    t_fast = best_time(lambda: PRank().fit_online(X, y), args.repeat)
    t_plain = best_time(lambda: prank_plain(X[:n_plain], y[:n_plain], 5), max(1, args.repeat - 1))
    rows.append(("PRank", args.rounds / t_fast, n_plain / t_plain))
    t_fast = best_time(lambda: OAPBPM(N=N, tau=tau, seed=1).fit_online(X, y), args.repeat)
    t_plain = best_time(lambda: oap_bpm_plain(X[:n_plain], y[:n_plain], 5, mask), 1)
    rows.append((f"OAP-BPM (N={N}, tau={tau})", args.rounds / t_fast, n_plain / t_plain))
    # Bagg predicts from every member's rank each round (N dot products), BPM from their sum
    t_fast = best_time(lambda: OAPBagg(N=N, tau=tau, seed=1).fit_online(X, y), args.repeat)
    t_plain = best_time(lambda: oap_vote_plain(X[:n_plain], y[:n_plain], 5, mask, "bagg"), 1)
    rows.append((f"OAP-Bagg (N={N}, tau={tau})", args.rounds / t_fast, n_plain / t_plain))

    print(f"{'learner':<26}{'compiled rounds/s':>20}{'plain NumPy rounds/s':>24}{'ratio':>10}")
    for name, fast, plain in rows:
        print(f"{name:<26}{fast:>20,.0f}{plain:>24,.0f}{fast / plain:>9.0f}x")
        SUMMARY.append((f"synthetic {name}", f"{fast:,.0f} rounds/s", f"{plain:,.0f} rounds/s", f"{fast / plain:.0f}x"))
    print(f"(compiled: {args.rounds} rounds, best of {args.repeat}; plain: {n_plain} rounds; same stream, "
          "identical predictions checked)")

    fig7_workload(args.repeat)
    letor_workload()
    coactive_workload()
    if not args.skip_gp:
        import sys

        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from bench_gp import gp_workload

        for name, fast, plain in gp_workload():
            SUMMARY.append((f"collaborative GP: {name}", f"{fast:.2f} s", f"{plain:.2f} s", f"{plain / fast:.0f}x"))

    # processed data: one npz read per data set (goal: under a second each)
    from rankrepro.data.preprocess import PROCESSED, load

    built = sorted(p.parent.name for p in Path("data/processed").glob(f"*/{PROCESSED}"))
    if built:
        print(f"\n{'processed data set':<26}{'load time':>12}{'size':>12}")
        for name in built:
            t = best_time(lambda: load(name), args.repeat)
            size = (Path("data/processed") / name / PROCESSED).stat().st_size / 1e6
            print(f"{name:<26}{t * 1000:>10.1f}ms{size:>10.1f}MB")




def print_summary() -> None:
    print("\nSummary (this project against the reference measured in the same run)")
    w = max(len(r[0]) for r in SUMMARY) + 2
    print(f"{'workload':<{w}}{'this project':>24}{'reference':>24}{'ratio':>9}")
    for name, fast, ref, ratio in SUMMARY:
        print(f"{name:<{w}}{fast:>24}{ref:>24}{ratio:>9}")


def write_record(args: argparse.Namespace, stamp: dict, wall_s: float) -> None:
    """docs/bench/bench.json: the summary table as printed, with the date, commit, machine and
    load average (scripts/bench_page.py puts it at the top of docs/benchmarks.md)."""
    import os
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_common import write_record as write

    cmd = "python scripts/bench.py" + (" --skip-gp" if args.skip_gp else "")
    path = write("bench.json", {
        "about": "scripts/bench.py (make bench): each workload of this project against a reference measured in the "
                 "same run on the same data (identical results checked); ratio = how many times faster this project "
                 "is, except the LETOR rows (the Ranking SVM's or SVM-Light's CPU time over the committee "
                 "perceptron's)",
        "command": cmd, **stamp, "load_average_end": [round(v, 2) for v in os.getloadavg()], "wall_s": wall_s,
        "settings": {"rounds": args.rounds, "plain_rounds": args.plain_rounds, "repeat": args.repeat},
        "rows": [{"workload": w, "this_project": f, "reference": r, "ratio": q} for w, f, r, q in SUMMARY]})
    print(f"\nwrote {path}")


if __name__ == "__main__":
    import sys as _sys

    _sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_common import stamp as _stamp

    _st, _t0 = _stamp(), time.perf_counter()
    main()
    print_summary()
    if "--no-record" not in _sys.argv:
        write_record(_ARGS, _st, time.perf_counter() - _t0)
