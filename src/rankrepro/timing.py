"""Per-job timing for the whole-pipeline benchmark (``scripts/bench_pipeline.py``).

When ``RANKREPRO_JOB_TIMES`` names a file, every job run through :func:`job_timer` appends
one JSON line: the rule, the experiment and cell, ``startup_s`` (from the start of the job's
Python process -- interpreter, Snakemake's script preamble, imports -- to the start of its
work: the per-job overhead), ``work_s`` (wall time of the work) and ``cpu_s`` (CPU time of
the process and its reaped children: loky's reused trial workers are not counted), ``threads``
(the cores Snakemake gave the job: its core-seconds are about ``threads * work_s``) and ``end``
(the wall-clock time it finished, for the timeline).  A job of several cells (a pack,
``run_cells``) adds ``cells``: each cell's id and seconds of work, and whether it was kept as
current instead of computed (the dict the timer yields, filled by the job).  Otherwise it costs
nothing.  A leaf module: it imports nothing from the package.
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import time


def process_age() -> float | None:
    """Seconds since this process started (Linux /proc), None elsewhere."""
    try:
        with open("/proc/self/stat") as f:
            start_ticks = int(f.read().rsplit(")", 1)[1].split()[19])
        with open("/proc/uptime") as f:
            up = float(f.read().split()[0])
        return max(0.0, up - start_ticks / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError):
        return None


def _cpu() -> float:
    s, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime


@contextlib.contextmanager
def job_timer(rule: str, experiment: str | None = None, cell: str | None = None, threads: int = 1):
    path = os.environ.get("RANKREPRO_JOB_TIMES")
    extra: dict = {}
    if not path:
        yield extra
        return
    startup = process_age()
    t0 = time.perf_counter()
    yield extra
    rec = {"rule": rule, "experiment": experiment, "cell": cell, "startup_s": startup,
           "work_s": time.perf_counter() - t0, "cpu_s": _cpu(), "threads": int(threads), "end": time.time(), **extra}
    with open(path, "a") as f:  # one short line per job: appends from parallel jobs do not interleave
        f.write(json.dumps(rec) + "\n")
