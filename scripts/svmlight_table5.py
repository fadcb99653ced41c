"""Elsas et al. (2008) Table 5's solver, timed: SVM-Light V6.02's own ``svm_learn`` in ranking mode
(``-z p``) on LETOR 2.0 OHSUMED fold 1, against the committee perceptron and this project's Ranking
SVM on the same fold, in CPU seconds measured in the same run.  The record it writes is the
evidence the Table 5 diagnosis cites (results/elsas2008/table5/svmlight.json).

Runs: the committee perceptron (N_com = 20, the 50 iterations of Table 5's caption, random pair
order); this project's Ranking SVM (dual coordinate descent) and svm_learn at the C values
validation picks on these folds (0.001, 0.01) and at SVM-Light's default C (no ``-c``).  Each
svm_learn run is capped at ``--cpu-cap`` CPU seconds (RLIMIT_CPU): a capped run is recorded as
not finished, its time a lower bound.

    RANKREPRO_SVM_LEARN=$(bash scripts/build_svmlight.sh) python scripts/svmlight_table5.py [--cpu-cap 240]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import tempfile
import time
from pathlib import Path

OUT = Path("results/elsas2008/table5/svmlight.json")


def cpu(fn):
    t0 = time.process_time()
    out = fn()
    return time.process_time() - t0, out


def svm_learn(exe: str, train: Path, model: Path, args: list[str], cap: int) -> dict:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    r = subprocess.run([exe, "-v", "1", "-z", "p", *args, str(train), str(model)], capture_output=True, text=True,
                       errors="replace",
                       preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_CPU, (cap, cap)))
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    lines = [x if len(x) <= 160 else x[:150] + " ..." for x in r.stdout.splitlines() if x.strip()]
    return {"cpu_seconds": round(t, 2), "finished": r.returncode == 0, "returncode": r.returncode,
            "output_tail": lines[-6:]}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cpu-cap", type=int, default=240, help="CPU seconds per svm_learn run")
    ap.add_argument("--fold", type=int, default=1)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    exe = os.environ.get("RANKREPRO_SVM_LEARN")
    if not exe:
        raise SystemExit("set RANKREPRO_SVM_LEARN to an svm_learn binary: "
                         "RANKREPRO_SVM_LEARN=$(bash scripts/build_svmlight.sh) python scripts/svmlight_table5.py")
    npz = Path("data/processed/letor2-ohsumed/data.npz")
    if not npz.is_file():
        raise SystemExit(f"{npz} is missing: run `make data` first")
    from rankrepro.algorithms.pairwise import PairwisePerceptron, make_pairs
    from rankrepro.algorithms.rankers import RankSVM, _warm_up
    from rankrepro.data.letor import letor_fold

    f = letor_fold(args.fold, data_path=str(npz))
    _warm_up()
    X, y, q = f.train.X, f.train.y, f.train.qid
    t_com, p = cpu(lambda: PairwisePerceptron(n_iter=50, committee=20, seed=2008).fit(X, y, q))
    hi, lo, _ = make_pairs(y, q)
    D = X[hi] - X[lo]
    c_default = RankSVM.svmlight_default_C(D)
    runs = []
    print(f"OHSUMED fold {args.fold}: {D.shape[0]:,} pairs; committee perceptron, 50 iterations: {t_com:.2f} CPU s",
          flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        train = Path(tmp) / "train.dat"
        with open(train, "w") as fh:
            for i in range(len(y)):
                feats = " ".join(f"{j + 1}:{v:.17g}" for j, v in enumerate(X[i]) if v != 0.0)
                fh.write(f"{int(y[i])} qid:{int(q[i])} {feats}\n")
        for label, C, cargs in (("0.001", 0.001, ["-c", "0.001"]), ("0.01", 0.01, ["-c", "0.01"]),
                                ("SVM-Light default", c_default, [])):
            svm = RankSVM(max_pass=200, eps=0.1)
            t_ours, _ = cpu(lambda: svm.fit_C(D, C, 1))
            light = svm_learn(exe, train, Path(tmp) / "model", cargs, args.cpu_cap)
            run = {"C": label, "C_value": C, "ours_cpu_seconds": round(t_ours, 3), "ours_passes": svm.passes_,
                   "svm_learn": light, "svm_learn_over_committee": round(light["cpu_seconds"] / t_com, 1)}
            runs.append(run)
            print(f"C = {label} ({C:.4g}): ours {t_ours:.2f} CPU s in {svm.passes_} passes; svm_learn "
                  f"{'' if light['finished'] else '> '}{light['cpu_seconds']:.1f} CPU s "
                  f"({'finished' if light['finished'] else 'stopped at the CPU cap'}), "
                  f"{run['svm_learn_over_committee']:.0f}x the committee perceptron", flush=True)
    version = subprocess.run([exe, "-?"], capture_output=True, text=True, errors="replace").stdout.strip().splitlines()
    record = {"about": __doc__.split("\n\n")[0].replace("\n", " "),
              "command": "RANKREPRO_SVM_LEARN=$(bash scripts/build_svmlight.sh) python scripts/svmlight_table5.py "
                         f"--cpu-cap {args.cpu_cap}",
              "svm_learn_version": version[0] if version else "", "machine": platform.platform(),
              "cpus": os.cpu_count(), "fold": args.fold, "pairs": int(D.shape[0]), "cpu_cap": args.cpu_cap,
              "committee_cpu_seconds": round(t_com, 3), "runs": runs}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(record, indent=1) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
