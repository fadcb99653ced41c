"""How much machine load slows a timed job down, in CPU time and in elapsed time: the evidence
for the load tolerances of the claims about time (rankrepro.claims.timing.LOAD_TOLERANCE).

One fixed workload (an online perceptron's passes over a small data set in NumPy, ~0.3 s) is
timed alternately alone and beside K busy processes (K = the number of cores by default, so that
every core has a competitor), R times each.  Prints, per clock, the median and the largest
ratio loaded / alone, and the largest ratio of any two timings of the workload (the most one
job's timing can differ from another's here), against the tolerance the claims use.

    python scripts/timing_load.py [--repeats 7] [--busy K]
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import statistics
import time

import numpy as np

from rankrepro.claims.timing import LOAD_TOLERANCE


def workload(seed: int = 0) -> float:
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((2000, 50))
    y = np.sign(X @ rng.standard_normal(50))
    w = np.zeros(50)
    for _ in range(8):
        for i in range(X.shape[0]):
            if y[i] * (X[i] @ w) <= 0:
                w += y[i] * X[i]
    return float(w.sum())


def _spin(stop) -> None:
    x = 0
    while not stop.is_set():
        x = (x * 1103515245 + 12345) % 2147483648


def timed() -> tuple[float, float]:
    c0, w0 = time.process_time(), time.perf_counter()
    workload()
    return time.process_time() - c0, time.perf_counter() - w0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--busy", type=int, default=os.cpu_count() or 1)
    a = ap.parse_args()
    workload()  # warm up
    alone, loaded = [], []
    for r in range(a.repeats):
        alone.append(timed())
        stop = mp.Event()
        procs = [mp.Process(target=_spin, args=(stop,), daemon=True) for _ in range(a.busy)]
        for p in procs:
            p.start()
        time.sleep(0.2)
        loaded.append(timed())
        stop.set()
        for p in procs:
            p.join()
        print(f"repeat {r + 1}/{a.repeats}: alone cpu {alone[-1][0]:.3f} s wall {alone[-1][1]:.3f} s; "
              f"beside {a.busy} busy processes cpu {loaded[-1][0]:.3f} s wall {loaded[-1][1]:.3f} s", flush=True)
    print(f"\n{os.cpu_count()} cores; the workload alone and beside {a.busy} busy processes, {a.repeats} times each")
    for k, clock in enumerate(("cpu", "wall")):
        ratios = [lo[k] / al[k] for al, lo in zip(alone, loaded)]
        every = [x[k] for x in alone + loaded]
        print(f"{clock:>4}: loaded / alone median {statistics.median(ratios):.2f}, max {max(ratios):.2f}; "
              f"slowest / fastest of all {max(every) / min(every):.2f}; tolerance used by the claims x{LOAD_TOLERANCE[clock]:g}")


if __name__ == "__main__":
    main()
