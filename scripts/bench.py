"""Every benchmark of the project in one run, each against a reference measured in the same
run on the same data (identical results checked), ending with one summary table:

* the online learners against tight compiled loops written from the papers
  (``algorithms/reference_tight``: dense Numba loops, no checks) on the synthetic stream of
  Harrington (2003) / Crammer & Singer (2005), degree-2 features (d = 6) and a 4-variable
  stream (d = 15), and on the Fig. 7 workload; interleaved in this process, identical
  predictions checked, the ratio the median of the repetitions' time ratios;
* the committee perceptron against the Ranking SVM on one LETOR OHSUMED fold (Elsas et al.);
* coactive movies: all users at once against one user at a time (Shivaswamy & Joachims);
* collaborative GP: one EM iteration against eq. 3 as written (Yu, Yu & Tresp; scripts/bench_gp.py);
* processed data sets: load time.

    python scripts/bench.py [--rounds 200000] [--repeat 7] [--skip-gp] [--no-record]

The summary is also written to docs/bench/bench.json (date, commit, machine, load average), from
which scripts/bench_page.py makes the top of docs/benchmarks.md.
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from rankrepro.algorithms import (OAPBPM, OAPVP, MulticlassPerceptron, OAPBagg, PRank, SiPRank, VotedPRank,
                                  WidrowHoff, poly2_features)
from rankrepro.algorithms import reference_tight as tight
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
    for X, y in streams:
        assert np.array_equal(PRank(n_ranks=5).fit_online(X, y), tight.prank_tight(X, y, 5)[0])
    t = interleaved({"sparse": lambda: [PRank(n_ranks=5).fit_online(X, y) for X, y in sparse_streams],
                     "dense": lambda: [PRank(n_ranks=5).fit_online(X, y) for X, y in streams],
                     "tight": lambda: [tight.prank_tight(X, y, 5) for X, y in streams],
                     "mu": lambda: [MuPRank(n_ranks=5, eta=4.0).fit_online(X, y) for X, y in sparse_streams]}, repeat)
    print(f"\nFig. 7 workload: {n_viewers} viewers x {rounds} rounds, {streams[0][0].shape[1]} features, "
          f"{100 * nnz:.1f}% non-zero (CPU time, median of {repeat} interleaved repetitions)")
    print(f"{'learner':<26}{'rounds/s':>14}{'tight rounds/s':>18}{'time / tight':>14}")
    for key, name in (("sparse", "PRank (CSR rows)"), ("dense", "PRank (dense input)")):
        r = ratio(t[key], t["tight"])
        print(f"{name:<26}{total / med(t[key]):>14,.0f}{total / med(t['tight']):>18,.0f}{r:>13.2f}x")
        SUMMARY.append((f"Fig. 7 {name}", f"{total / med(t[key]):,.0f} rounds/s",
                        f"{total / med(t['tight']):,.0f} rounds/s", f"{r:.2f}"))
    print(f"{'Mu-PRank (eta=4, CSR rows)':<26}{total / med(t['mu']):>14,.0f}")


def med(times: list[float]) -> float:
    return float(np.median(times))


def ratio(a: list[float], b: list[float]) -> float:
    """The median over the repetitions of a's time over b's (each pair timed back to back)."""
    return float(np.median(np.asarray(a) / np.asarray(b)))


def interleaved(fns: dict, repeat: int) -> dict[str, list[float]]:
    """CPU times (time.process_time: this process's, so the other work on a shared machine
    is not counted) of each function, called in turn, ``repeat`` times over (after one
    warm-up call each): what noise is left falls on all of them alike."""
    for f in fns.values():
        f()
    times: dict[str, list[float]] = {k: [] for k in fns}
    for _ in range(repeat):
        for k, f in fns.items():
            t0 = time.process_time()
            f()
            times[k].append(time.process_time() - t0)
    return times


def _masks(T: int, N: int, tau: float, seed: int) -> np.ndarray:
    """The OAP learners' Bernoulli masks, drawn as they draw them (oap._MASK_CHUNK rows at a
    time from default_rng(seed)): the same work, the same stream."""
    from rankrepro.algorithms.oap import _MASK_CHUNK

    rng = np.random.default_rng(seed)
    return np.concatenate([rng.random((min(_MASK_CHUNK, T - s), N)) < tau for s in range(0, T, _MASK_CHUNK)])


def synthetic_streams(T: int) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """Harrington's / Crammer & Singer's synthetic stream in degree-2 features (d = 6), and a
    stream of 4 uniform variables with a noisy ordinal target, degree-2 features (d = 15)."""
    split = synthetic_hgo(T, 0, np.random.default_rng(0))
    rng = np.random.default_rng(15)
    Z = rng.uniform(-1.0, 1.0, (T, 4))
    y15 = np.digitize(Z.sum(axis=1) + 0.3 * rng.normal(size=T), [-1.0, -0.3, 0.3, 1.0]) + 1
    return [("d=6", poly2_features(split.X_train), split.y_train), ("d=15", poly2_features(Z), y15)]


def online_workload(rounds: int, repeat: int, N: int = 100, tau: float = 0.3) -> None:
    """Every online learner with a tight reference, on both streams, against it."""
    print(f"Online learners against the tight loops written from the papers (algorithms/reference_tight), "
          f"{rounds:,} rounds; CPU time, median of {repeat} interleaved repetitions")
    print(f"{'stream':<7}{'learner':<27}{'rounds/s':>14}{'tight rounds/s':>18}{'time / tight':>14}")
    for stream, X, y in synthetic_streams(rounds):
        cases = {
            "PRank": (lambda: PRank().fit_online(X, y), lambda: tight.prank_tight(X, y, 5)),
            "Si-PRank": (lambda: SiPRank().fit_online(X, y), lambda: tight.prank_tight(X, y, 5, True)),
            "voted PRank": (lambda: VotedPRank().fit_online(X, y), lambda: tight.voted_prank_tight(X, y, 5)),
            "Widrow-Hoff (eta=0.01)": (lambda: WidrowHoff(eta=0.01).fit_online(X, y),
                                       lambda: tight.widrow_hoff_tight(X, y, 5, 0.01)),
            "MCP": (lambda: MulticlassPerceptron().fit_online(X, y), lambda: tight.mcp_tight(X, y, 5)),
        }
        for name, cls, rule in (("OAP-BPM", OAPBPM, 0), ("OAP-Bagg", OAPBagg, 1), ("OAP-VP", OAPVP, 2)):
            cases[f"{name} (N={N}, tau={tau})"] = (
                lambda cls=cls: cls(N=N, tau=tau, seed=1).fit_online(X, y),
                lambda rule=rule: tight.oap_tight(X, y, 5, _masks(len(y), N, tau, 1), rule))
        for name, (mine, ref) in cases.items():
            assert np.array_equal(mine(), ref()[0]), name  # identical predictions on the stream
            t = interleaved({"mine": mine, "ref": ref}, repeat)
            r = ratio(t["mine"], t["ref"])
            fast, slow = rounds / med(t["mine"]), rounds / med(t["ref"])
            print(f"{stream:<7}{name:<27}{fast:>14,.0f}{slow:>18,.0f}{r:>13.2f}x", flush=True)
            SUMMARY.append((f"{stream} {name}", f"{fast:,.0f} rounds/s", f"{slow:,.0f} rounds/s", f"{r:.2f}"))


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
    ap.add_argument("--rounds", type=int, default=200_000, help="rounds of the online learners")
    ap.add_argument("--repeat", type=int, default=7, help="interleaved repetitions (medians)")
    ap.add_argument("--skip-gp", action="store_true", help="skip the collaborative GP benchmark (~2 minutes)")
    ap.add_argument("--no-record", action="store_true", help="print only; leave docs/bench/bench.json alone")
    args = ap.parse_args()
    global _ARGS
    _ARGS = args

    online_workload(args.rounds, args.repeat)
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
                 "is, except the online rows (synthetic d=6/d=15 and Fig. 7: this project's time over the tight "
                 "compiled loop's, algorithms/reference_tight; 1.00 = as fast, target at most 1.2) and the LETOR rows (the Ranking SVM's or SVM-Light's CPU time over the committee "
                 "perceptron's)",
        "command": cmd, **stamp, "load_average_end": [round(v, 2) for v in os.getloadavg()], "wall_s": wall_s,
        "settings": {"rounds": args.rounds, "repeat": args.repeat},
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
