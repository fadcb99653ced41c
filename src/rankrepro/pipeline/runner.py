"""Run the Monte-Carlo trials of one sweep cell.

Seeding (:mod:`.seeding`): trial i of an experiment with root seed s draws its data from
``SeedSequence(s, spawn_key=(i, 0))`` — the same stream for every cell, so algorithms are
compared on common random numbers — and its algorithm randomness from
``SeedSequence(s, spawn_key=(i, 1, crc32(cell id)))``.  Nothing depends on ``n_jobs``,
the joblib backend or the order in which trials finish: results are bit-identical.
"""

from __future__ import annotations

import contextlib
import json
import time
from typing import Callable, Iterable

import pandas as pd
from joblib import Parallel, delayed, parallel_config

from ..data.preprocess import eta_text
from ..data.processed_check import check_processed
from ..data.status import data_status
from ..protocols import PROTOCOLS, Spec
from .cells import Cell, Experiment
from .seeding import cell_hash, trial_seeds  # noqa: F401 - cell_hash: part of this module's interface

RESULT_COLUMNS = ["paper", "artefact", "cell", "algorithm", "params", "trial", "metric", "round", "value"]


def trial_spec(exp: Experiment, cell: Cell, trial: int, data_path: str | None = None) -> Spec:
    """The spec of one trial, as the experiment's protocol builds it."""
    data_seed, algo_seed = trial_seeds(int(exp.cfg.experiment.seed), trial, cell.id)
    return PROTOCOLS[exp.cfg.experiment.protocol].spec(exp, cell, trial, data_path, data_seed, algo_seed)


_THREADPOOLS: tuple[int, object] | None = None


def _one_blas_thread():
    """threadpoolctl's limit to one BLAS thread, from a controller kept while no module was
    imported since it was made (making one scans the loaded libraries, ~2 ms, which trials of
    a few ms paid each time; an import may load another BLAS, which a new scan then finds)."""
    global _THREADPOOLS
    import sys

    if _THREADPOOLS is None or _THREADPOOLS[0] != len(sys.modules):
        from threadpoolctl import ThreadpoolController

        controller = ThreadpoolController()
        _THREADPOOLS = (len(sys.modules), controller)
    return _THREADPOOLS[1].limit(limits=1, user_api="blas")


def _run_one(protocol: str, spec: Spec, trial: int, where: str = "", others: list[Spec] | None = None):
    """Trial ``trial`` of ``spec``: ``(trial, rows)``; with ``others`` (specs read off the same
    fit, :func:`~rankrepro.pipeline.cells.reread_of`), ``(trial, (rows, [rows of each other]))``.  Any error, and any output of the learner
    its protocol cannot use (:mod:`.learner_checks`), is raised as one
    :class:`~rankrepro.pipeline.learner_checks.TrialFailed` line naming ``where`` (the
    experiment and cell), the trial and the learner."""
    # one BLAS thread per trial: trials run in parallel processes anyway, and a multithreaded
    # BLAS may sum in another order on another machine (results then differ in the last bits)
    from ..interrupt import prompt_interrupt

    from .learner_checks import checked, trial_failure
    from .targets import registered

    run = PROTOCOLS[protocol]  # imported first: its libraries are loaded before the limit is set
    if others:
        run = (lambda sp, _run=run.run_rereads: _run(sp, others))
    estimator = getattr(spec, "estimator", "")
    # a learner named by _target_ stands in the protocol's registry while its trial runs (also
    # in a worker process), and every learner by its checking class (the outputs the protocol
    # uses are checked); Ctrl-C / SIGTERM end the process at once, even inside a long compiled call
    try:
        with registered(protocol, estimator), checked(protocol, estimator), _one_blas_thread(), \
                prompt_interrupt():
            return trial, run(spec)
    except Exception as e:  # noqa: BLE001 - said in one line naming the cell and trial
        raise trial_failure(e, where, trial, estimator) from e


def default_data_path(exp: Experiment) -> str | None:
    """The processed data an experiment runs on: its own data set or the substitute, checked
    (:func:`~rankrepro.data.processed_check.check_processed`: inside the checkout, and the file
    its manifest's sha256 names), so no trial starts on altered data."""
    if exp.cfg.dataset.source is None:
        return None
    st = data_status(exp.cfg.dataset.source)
    if not st.runnable:
        raise FileNotFoundError(f"{exp.name}: {st.reason}. {st.how_to_obtain}")
    path = f"data/processed/{st.used}/data.npz"
    # in the checkout, and the very file its manifest names (a stamp spares the hash after the first run)
    check_processed(path)
    return path


def run_cell(exp: Experiment, cell_id: str, n_jobs: int = 1, trials: Iterable[int] | None = None,
             backend: str = "loky", progress: Callable[[str], None] | None = None,
             data_path: str | None = None, reuse: pd.DataFrame | None = None,
             rereads: dict[str, pd.DataFrame] | None = None) -> pd.DataFrame:
    """All trials of one cell as a tidy frame (one row per trial, metric and round).

    ``reuse``: for a sensitivity cell that only runs more trials than its main cell
    (:func:`~rankrepro.pipeline.cells.reused_trials`), the main cell's frame: its trials
    are taken as they are (bit for bit what they would be here) and only the others run.
    ``rereads``: a dict this fills, for a cell whose fits other cells read under other
    prediction settings (:func:`~rankrepro.pipeline.cells.rereads_of`), with each such
    cell's frame, computed from this cell's fits (each trial fitted once)."""
    cell = exp.cell(cell_id)
    readers = []
    if rereads is not None and reuse is None:  # a cell that reads another's fits has no readers itself
        from .cells import rereads_of

        readers = [exp.cell(c) for c in rereads_of(exp, cell.id)]
    if data_path is None:
        data_path = default_data_path(exp)
    # a sensitivity cell runs its main cell under the variant config, on the main cell's
    # seeds (common random numbers): equal settings give bit-identical results
    run_exp, run_cell_ = exp.variant_of(cell)
    trials = list(range(run_exp.cell_trials(run_cell_))) if trials is None else list(trials)
    kept = None
    if reuse is not None:
        kept = _reusable(exp, cell, reuse)
        done = set(kept["trial"])
        trials = [t for t in trials if t not in done]
    protocol = run_exp.cfg.experiment.protocol
    specs = [(trial_spec(run_exp, run_cell_, t, data_path), t) for t in trials]
    # the readers' specs, trial by trial: the same trials, the same seeds (a sensitivity cell
    # runs on its main cell's), their own prediction settings
    other_specs = {t: [trial_spec(*exp.variant_of(r), t, data_path) for r in readers] for t in trials}
    t0 = time.perf_counter()
    results: dict[int, list] = {}
    report_every = max(1, len(trials) // 10)
    # "dask" is one of joblib's external backends: parallel_config registers it (it needs a
    # dask.distributed Client to be active, see jobs.trial_backend)
    from ..interrupt import workers_stop_with_the_job

    with parallel_config(backend=backend) if n_jobs != 1 else contextlib.nullcontext(), \
            workers_stop_with_the_job() if n_jobs != 1 else contextlib.nullcontext():
        par = Parallel(n_jobs=n_jobs, return_as="generator_unordered") if n_jobs != 1 else None
        where = f"{exp.name} [{exp.scale}] cell {cell.id}"
        gen = (par(delayed(_run_one)(protocol, s, t, where, other_specs[t]) for s, t in specs) if par is not None
               else (_run_one(protocol, s, t, where, other_specs[t]) for s, t in specs))
        read: dict[str, dict[int, list]] = {r.id: {} for r in readers}
        for done, (t, rows) in enumerate(gen, start=1):
            if readers:
                rows, theirs = rows
                for r, their_rows in zip(readers, theirs):
                    read[r.id][t] = their_rows
            results[t] = rows
            if progress and (done % report_every == 0 or done == len(trials)):
                el = time.perf_counter() - t0
                left = len(trials) - done
                # the trials of a cell cost alike: the mean so far times those left
                progress(f"{exp.name} [{exp.scale}] {cell.id}: {done}/{len(trials)} trials, {el:.1f}s elapsed, "
                         + (f"ETA {eta_text(el / done * left)}" if left else "done"))
    df = _frame(exp, cell, results)
    for r in readers:
        rereads[r.id] = _frame(exp, r, read[r.id])
    if kept is not None:
        params = json.dumps(cell.params, sort_keys=True)
        kept = kept.assign(cell=cell.id, params=params)
        df = _typed(pd.concat([kept, df], ignore_index=True).sort_values("trial", kind="stable", ignore_index=True))
    return df


def _frame(exp: Experiment, cell: Cell, results: dict[int, list]) -> pd.DataFrame:
    """One cell's tidy frame from its trials' rows."""
    params = json.dumps(cell.params, sort_keys=True)
    paper, artefact = exp.paper, exp.artefact  # read from the config once, not per row
    records = [(paper, artefact, cell.id, cell.algorithm, params, t, m, r, v)
               for t in sorted(results) for (m, r, v) in results[t]]
    return _typed(pd.DataFrame.from_records(records, columns=RESULT_COLUMNS))


def _typed(df: pd.DataFrame) -> pd.DataFrame:
    df["trial"] = df["trial"].astype("int64")
    df["round"] = df["round"].astype("Int64")
    df["value"] = df["value"].astype("float64")
    return df


def from_reread(exp: Experiment, cell_id: str, frame: pd.DataFrame) -> pd.DataFrame:
    """A cell's results as its main cell's job computed them from the same fits
    (:func:`~rankrepro.pipeline.cells.reread_of`), checked to be this cell's rows, with its
    parameters and exactly its trials."""
    cell = exp.cell(cell_id)
    rows = frame[RESULT_COLUMNS]
    var, var_cell = exp.variant_of(cell)
    want = list(range(var.cell_trials(var_cell)))
    params = json.dumps(cell.params, sort_keys=True)
    if (set(rows["cell"]) != {cell.id} or sorted(set(rows["trial"])) != want or set(rows["params"]) != {params}
            or set(rows["paper"]) != {exp.paper} or set(rows["artefact"]) != {exp.artefact}):
        raise ValueError(f"{exp.name} {cell.id}: the frame handed over is not this cell's {len(want)} trials with "
                         f"parameters {params} (cells {sorted(set(rows['cell']))}, trials {sorted(set(rows['trial']))})")
    return rows.reset_index(drop=True)


def from_twin(exp: Experiment, cell_id: str, frame: pd.DataFrame, twin_cell: str) -> pd.DataFrame:
    """A cell's results taken from its twin's (:func:`~rankrepro.pipeline.cells.twin_cells`:
    a cell with the same fingerprint on the same data, ``twin_cell`` of another experiment or
    another choice's cell of this one): the same rows, relabelled with this experiment's paper
    and artefact and this cell's id and algorithm; checked to be the twin cell's rows, with
    this cell's parameters and exactly its trials."""
    cell = exp.cell(cell_id)
    rows = frame[RESULT_COLUMNS]
    var, var_cell = exp.variant_of(cell)
    want = list(range(var.cell_trials(var_cell)))
    params = json.dumps(cell.params, sort_keys=True)
    if set(rows["cell"]) != {twin_cell} or sorted(set(rows["trial"])) != want or set(rows["params"]) != {params}:
        raise ValueError(f"{exp.name} {cell.id}: the frame to take is not twin cell {twin_cell}'s {len(want)} trials "
                         f"with parameters {params} (cells {sorted(set(rows['cell']))}, "
                         f"trials {sorted(set(rows['trial']))}, parameters {sorted(set(rows['params']))})")
    return rows.assign(paper=exp.paper, artefact=exp.artefact, cell=cell.id, algorithm=cell.algorithm
                       ).reset_index(drop=True)


def _reusable(exp: Experiment, cell: Cell, frame: pd.DataFrame) -> pd.DataFrame:
    """The main cell's trials a sensitivity cell takes over (checked: the cell may reuse
    them, and the frame is that main cell's, with exactly its trials)."""
    from .cells import reused_trials

    hit = reused_trials(exp, cell)
    if hit is None:
        raise ValueError(f"{exp.name} {cell.id}: differs from its main cell in more than the number of trials; "
                         "it cannot reuse the main cell's trials")
    base, n = hit
    rows = frame[RESULT_COLUMNS]
    if set(rows["cell"]) != {base} or sorted(set(rows["trial"])) != list(range(n)):
        raise ValueError(f"{exp.name} {cell.id}: the frame to reuse is not main cell {base}'s {n} trials "
                         f"(cells {sorted(set(rows['cell']))}, trials {sorted(set(rows['trial']))})")
    return rows.reset_index(drop=True)
