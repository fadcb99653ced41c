"""Ctrl-C and SIGTERM stop a running trial at once.

Python turns SIGINT into KeyboardInterrupt only when the interpreter next runs bytecode: a
trial inside one long compiled call (a Ranking SVM's coordinate descent at C = 1 runs 11 s in
one numba call) would run on for seconds after Ctrl-C or Snakemake's "Terminating processes".
While a trial computes, :func:`prompt_interrupt` gives both signals their default action, so
the kernel ends the process (the job process, or the joblib worker running the trial)
immediately.  Nothing is lost: a job writes its results only after its last trial, through an
atomic rename, so an interrupted job leaves no partial output; it reruns next time.
"""

from __future__ import annotations

import contextlib
import signal
import threading


@contextlib.contextmanager
def prompt_interrupt():
    """Within the block (main thread only; a signal handler can be set nowhere else), SIGINT
    and SIGTERM terminate the process at once.  A signal the process ignores (a background
    job started with SIGINT ignored) stays ignored.  The previous handlers come back after."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    saved = {}
    for sig in (signal.SIGINT, signal.SIGTERM):
        old = signal.getsignal(sig)
        if old is not signal.SIG_IGN:
            saved[sig] = old
            signal.signal(sig, signal.SIG_DFL)
    try:
        yield
    finally:
        for sig, old in saved.items():
            signal.signal(sig, old if old is not None else signal.SIG_DFL)


@contextlib.contextmanager
def workers_stop_with_the_job():
    """Around the wait for joblib workers: SIGTERM sent to the job alone (a scheduler's
    cancel) raises KeyboardInterrupt there, so joblib aborts and terminates its workers
    instead of leaving them orphaned inside a long trial."""
    if threading.current_thread() is not threading.main_thread() or \
            signal.getsignal(signal.SIGTERM) is signal.SIG_IGN:
        yield
        return
    old = signal.getsignal(signal.SIGTERM)

    def stop(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old if old is not None else signal.SIG_DFL)
