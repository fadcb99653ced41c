"""The work behind each Snakemake rule, as plain functions (the scripts in ``scripts/``
only unpack the ``snakemake`` object and call these)."""

from __future__ import annotations

import contextlib
import json
import sys
from pathlib import Path
from typing import Callable

from .pipeline.loads import _load, loads_shared  # noqa: F401 - loads_shared: scripts/summarise.py
from .pipeline.cells import Experiment
from .files import read_cell, write_text
from .io import write_parquet


def _logger(log_path: str | None) -> Callable[[str], None]:
    fh = open(log_path, "a") if log_path else None  # noqa: SIM115 - closed at exit

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)
        if fh:
            fh.write(msg + "\n")
            fh.flush()
    return log


BACKENDS = ("loky", "threading", "multiprocessing", "dask")
#: the trial backend when the workflow's config key 'backend' is not given
DEFAULT_BACKEND = "loky"


@contextlib.contextmanager
def trial_backend(backend: str, threads: int, scheduler: str | None = None, log: Callable[[str], None] | None = None):
    """(backend, n_jobs) for the trials of a job.  ``dask`` runs them on a dask.distributed
    cluster: the scheduler at ``scheduler`` (e.g. one started on the cluster's nodes), else a
    LocalCluster of ``threads`` single-threaded worker processes started for this job."""
    if backend not in BACKENDS:
        raise ValueError(f"unknown trial backend {backend!r} (config key 'backend'; known: {', '.join(BACKENDS)})")
    if backend != "dask":
        yield backend, threads
        return
    from distributed import Client, LocalCluster

    if scheduler:
        with Client(scheduler) as client:
            if log:
                log(f"trials on the dask scheduler {scheduler} ({len(client.scheduler_info()['workers'])} workers)")
            yield "dask", -1
        return
    with LocalCluster(n_workers=max(1, threads), threads_per_worker=1, processes=True, dashboard_address=None) as lc, \
            Client(lc):
        if log:
            log(f"trials on a local dask cluster of {max(1, threads)} workers")
        yield "dask", -1


def cell_size_text(exp: Experiment, cell: str) -> str:
    """What one cell runs, in its protocol's words: a sensitivity cell's own size (e.g.
    ``training_rounds=5000`` of a 50,000-round run), not its main run's."""
    from .protocols import PROTOCOLS

    return PROTOCOLS[exp.cfg.experiment.protocol].size_text(exp.variant_of(exp.cell(cell))[0])


@contextlib.contextmanager
def _trial_failure_ends_the_job(log: Callable[[str], None]):
    """A failed trial (:class:`~rankrepro.pipeline.learner_checks.TrialFailed`: a learner's error
    or unusable output) ends the job with its one line, written last in the job's log and on
    stderr, and exit status 1 (no traceback: the line names the cell, trial, learner and cause)."""
    from .pipeline.learner_checks import TrialFailed

    try:
        yield
    except TrialFailed as e:
        log(f"error: {e}")
        raise SystemExit(1) from None


def job_run_cell(experiment: str, cell: str, scale: str, config_dir: str, output: str, threads: int = 1,
                 log: str | None = None, data: list[str] | None = None, backend: str = DEFAULT_BACKEND,
                 scheduler: str | None = None, fingerprint: str | None = None, reuse: str | None = None,
                 twin: str | None = None, reread: str | None = None) -> None:
    """``reuse``: the main cell's results, for a sensitivity cell that only adds trials
    (:func:`~rankrepro.pipeline.cells.reused_trials`); ``twin``: the results of another
    experiment's cell that computes exactly the same (:func:`~rankrepro.pipeline.cells.twin_cells`),
    taken instead of computing them; ``reread``: the main cell's results, for a cell that reads
    its fits under other prediction settings (:func:`~rankrepro.pipeline.cells.reread_of`):
    the frame the main cell's job left for it (:mod:`~rankrepro.pipeline.handoff`) is taken,
    else it is computed.  A main cell whose fits other cells read leaves their frames."""
    # a main cell needs no variant; a sensitivity cell <base>~<choice>=<value> needs its own
    variant = tuple(cell.split("~", 1)[1].split("=", 1)) if "~" in cell else False
    exp = _load(experiment, scale, config_dir, sensitivity=variant)
    if not variant and not twin and not reuse and _may_be_read(exp, cell):
        # a main cell whose fits other cells may read (pipeline.cells.reread_of) needs the
        # variants to know them (a sensitivity cell's own job loads its variant only: the cells
        # that read its fits compute their own, unless a pack holds them with it)
        exp = _load(experiment, scale, config_dir, sensitivity=True)
    _cell_job(exp, cell, scale, output, _logger(log), threads=threads, data=data, backend=backend,
              scheduler=scheduler, fingerprint=fingerprint, reuse=reuse, twin=twin, reread=reread)


def _cell_job(exp: Experiment, cell: str, scale: str, output: str, logger: Callable[[str], None], threads: int = 1,
              data: list[str] | None = None, backend: str = DEFAULT_BACKEND, scheduler: str | None = None,
              fingerprint: str | None = None, reuse: str | None = None, twin: str | None = None,
              reread: str | None = None, kept=None, check_data: bool = True, read=None,
              keep: frozenset[str] = frozenset()) -> dict:
    """One cell's work, as its job does it (:func:`job_run_cell`; a pack's job,
    :func:`job_run_cells`, does it for each of its cells in one process): its trials computed
    (or taken from its twin ``twin``, or read off its main cell's fits), its results written to
    ``output``, then its fingerprint file.  ``kept``: the main cell's frame whose trials it takes
    over, when the caller has it already (else read from ``reuse``); ``check_data``: check the
    processed data file first (a pack's job checks it once for all its cells); ``read``: the
    frame another cell of the same pack computed for this one from its fits
    (:func:`~rankrepro.pipeline.cells.reread_of`), taken.  Returns the frames this cell's fits
    gave the cells that read them: those in ``keep`` (cells of the same pack) are returned to
    the caller, the others left for their own jobs (:mod:`~rankrepro.pipeline.handoff`)."""
    experiment = exp.name
    size = cell_size_text(exp, cell)
    logger(f"{experiment} [{scale}] {cell}: {size} on {threads} worker(s)" + (f" on {data[0]}" if data else "")
           + (f"; the main cell's trials taken from {reuse}" if reuse else ""))
    if reuse and kept is None:
        kept = read_cell(reuse)
    if data and not twin and check_data:  # before any trial: in the checkout, and the file its manifest names
        from .data.processed_check import check_processed

        check_processed(data[0])
    data_path = data[0] if data else None
    df, readers = None, {}
    if read is not None:
        from .pipeline.runner import from_reread

        df = from_reread(exp, cell, read)
        logger(f"{experiment} [{scale}] {cell}: its trials read off {reread_base(exp, cell)}'s fits in this job "
               "(only the prediction differs): taken, nothing fitted")
    elif twin:
        from .pipeline.runner import from_twin

        df = from_twin(exp, cell, read_cell(twin), twin_cell=Path(twin).stem)
        logger(f"{experiment} [{scale}] {cell}: the same computation as {twin} (same fingerprint, same data): "
               "its results taken, nothing computed")
    elif reread:
        from .pipeline.handoff import take

        df = take(exp, cell, data_path)
        base = _cell_words(Path(reread).stem)  # the input the workflow gave it: that cell's results
        logger(f"{experiment} [{scale}] {cell}: " + (
            f"its trials read off {base}'s fits by that cell's job (only the prediction differs): taken, "
            "nothing fitted" if df is not None else
            f"{base}'s job left no frame for it (that cell was not run now): computed"))
    if df is None:
        from .pipeline.runner import run_cell

        with _trial_failure_ends_the_job(logger), trial_backend(backend, threads, scheduler, logger) as (be, n_jobs):
            df = run_cell(exp, cell, n_jobs=n_jobs, backend=be, progress=logger,
                          data_path=data_path, reuse=kept, rereads=readers)
    write_parquet(df, output)
    if fingerprint:  # last: a cell without it is recomputed
        from .pipeline.freshness import write_fingerprint

        write_fingerprint(exp, cell, data_path, fingerprint)
    kept_here = {c: f for c, f in readers.items() if c in keep}
    readers = {c: f for c, f in readers.items() if c not in keep}
    if kept_here:
        logger(f"{experiment} [{scale}] {cell}: the same fits read for {', '.join(kept_here)} (cells of this job)")
    if readers:
        from .pipeline.handoff import leave

        left = leave(exp, readers, data_path, skip=_current_cells(exp, readers, Path(output).parent, data_path))
        if left:
            logger(f"{experiment} [{scale}] {cell}: the same fits read for {', '.join(left)} (left for their jobs)")
    return kept_here


def reread_base(exp, cell: str) -> str:
    """The cell whose fits ``cell`` reads, in words for a log."""
    from .pipeline.cells import reread_of

    return _cell_words(reread_of(exp, exp.cell(cell)) or exp.cell(cell).base)


def _cell_words(cell_id: str) -> str:
    return f"main cell {cell_id}" if "~" not in cell_id else f"cell {cell_id}"


def job_run_cells(experiment: str, cells: list[str], scale: str, config_dir: str, folder: str, log_dir: str,
                  threads: int = 1, log: str | None = None, data: list[str] | None = None,
                  backend: str = DEFAULT_BACKEND, scheduler: str | None = None, twins: dict[str, str] | None = None,
                  done: list[dict] | None = None) -> None:
    """A pack of one experiment's cells in one process (:func:`~rankrepro.pipeline.schedule.cell_packs`:
    the workflow's job for cells of a few seconds each, whose start-up would otherwise cost
    about as much as their work).  Each cell is done exactly as its own job does it
    (:func:`_cell_job`): its results ``<folder>/<cell>.parquet``, its fingerprint file
    ``<folder>/<cell>.fingerprint`` and its log ``<log_dir>/<cell>.log`` are its own, as rule
    run_cell names them.  A cell whose results and fingerprint file are current
    (:func:`~rankrepro.pipeline.freshness.is_current`: the workflow keeps a pack's files while
    its job runs) is not computed again: an edit that changes one cell of a pack recomputes that
    cell.  ``twins``: cell -> its twin's results, for the cells taken from a twin.  ``done``: when
    given, each cell's own figures are appended to it (cell, seconds of work, computed or kept),
    for the pipeline benchmark."""
    import time

    # the variants of the pack's sensitivity cells only (building every variant of an
    # experiment with many open choices costs ~0.9 s, one variant ~0.1 s)
    variants = frozenset(tuple(c.split("~", 1)[1].split("=", 1)) for c in cells if "~" in c)
    exp = _load(experiment, scale, config_dir, sensitivity=variants or False)
    pack_log = _logger(log)
    twins = twins or {}
    data_path = data[0] if data else None
    current = _current_cells(exp, cells, Path(folder), data_path)
    pack_log(f"{experiment} [{scale}]: {len(cells)} cells in one job (a pack)"
             + (f", {len(current)} of them current, kept: {', '.join(c for c in cells if c in current)}"
                if current else ""))
    if data and set(cells) - current - set(twins):  # before any trial, as a cell's own job checks it
        from .data.processed_check import check_processed

        check_processed(data[0])
    # frames computed from another cell's fits for cells further on in this pack (pipeline.cells.reread_of)
    pending: dict = {}
    later = set(cells)
    for i, cell in enumerate(cells):
        later.discard(cell)
        if cell in current:
            if done is not None:
                done.append({"cell": cell, "work_s": 0.0, "kept": True})
            continue
        t0 = time.perf_counter()
        logger = _logger(str(Path(log_dir) / f"{cell}.log"))
        logger(f"{experiment} [{scale}] {cell}: cell {i + 1} of {len(cells)} of a pack (log of the pack: {log})")
        pending.update(_cell_job(exp, cell, scale, str(Path(folder) / f"{cell}.parquet"), logger, threads=threads,
                                 data=data, backend=backend, scheduler=scheduler,
                                 fingerprint=str(Path(folder) / f"{cell}.fingerprint"), twin=twins.get(cell),
                                 check_data=False, read=pending.pop(cell, None),
                                 keep=frozenset(later - current)))
        if done is not None:
            done.append({"cell": cell, "work_s": time.perf_counter() - t0, "kept": False})
        pack_log(f"{experiment} [{scale}] {cell}: done ({i + 1}/{len(cells)})")


def _may_be_read(exp, cell: str) -> bool:
    """Whether other cells of ``exp`` may read main cell ``cell``'s fits: its protocol reads one
    fit under several specs, its learner declares prediction-only parameters and the
    experiment has open protocol choices."""
    from .protocols import PROTOCOLS

    protocol = PROTOCOLS[exp.cfg.experiment.protocol]
    return (getattr(protocol, "run_rereads", None) is not None
            and bool(getattr(protocol.estimators.get(exp.cell(cell).estimator), "PREDICT_ONLY", ()))
            and bool(exp.cfg.experiment.get("sensitivity")))


def _current_cells(exp, ids, folder: Path, data_path: str | None) -> set[str]:
    """Which of the cells ``ids`` have current results in ``folder`` (no job will run them)."""
    from .pipeline.freshness import data_path_identity, is_current

    data_id = data_path_identity(data_path)
    return {c for c in ids if is_current(exp, c, data_id, folder / f"{c}.fingerprint", folder / f"{c}.parquet")}


def job_run_all_cells(experiment: str, scale: str, config_dir: str, output: str, threads: int = 1,
                      log: str | None = None, data: list[str] | None = None, backend: str = DEFAULT_BACKEND,
                      scheduler: str | None = None, reuse_cells: bool = True) -> None:
    """Every cell of one artefact in one process (the ``batch_cells`` option).  ``reuse_cells``:
    take the rows of the cells whose fingerprint and data did not change from the existing
    ``output`` (its index, :mod:`.pipeline.batchcache`) instead of computing them again."""
    import pandas as pd

    from .pipeline.runner import run_cell

    from .pipeline.batchcache import cell_prints, reusable_frames, write_cells_index
    from .pipeline.freshness import data_path_identity

    exp = _load(experiment, scale, config_dir)
    logger = _logger(log)
    if data:  # before any trial: in the checkout, and the file its manifest names
        from .data.processed_check import check_processed

        check_processed(data[0])
    # the cells computed before from the same fingerprint and data are taken from the existing
    # file (pipeline/batchcache.py): an edit of one cell recomputes that cell only
    data_id = data_path_identity(data[0] if data else None)
    prints = cell_prints(exp)
    kept = reusable_frames(exp, output, data_id, prints) if reuse_cells else {}
    logger(f"{experiment} [{scale}]: {len(exp.all_cells)} cells in one job"
           + (f", {len(kept)} of them unchanged since {output} was written: taken from it, "
              f"{len(exp.all_cells) - len(kept)} computed" if kept else ""))
    from .pipeline.cells import reused_trials

    frames: dict[str, pd.DataFrame] = {}
    read: dict[str, pd.DataFrame] = {}
    with _trial_failure_ends_the_job(logger), trial_backend(backend, threads, scheduler, logger) as (be, n_jobs):
        for c in exp.all_cells:  # main cells first: a sensitivity cell may reuse its main cell's trials
            if c.id in kept:
                frames[c.id] = kept[c.id]
                continue
            if c.id in read:  # read off its main cell's fits (pipeline.cells.reread_of), computed above
                frames[c.id] = read.pop(c.id)
                continue
            hit = reused_trials(exp, c)
            frames[c.id] = run_cell(exp, c.id, n_jobs=n_jobs, backend=be, progress=logger,
                                    data_path=data[0] if data else None, reuse=frames[hit[0]] if hit else None,
                                    rereads=read)
    write_parquet(pd.concat(list(frames.values()), ignore_index=True), output)
    write_cells_index(output, data_id, prints)  # last: a file without it is computed again


def job_aggregate(experiment: str, scale: str, config_dir: str, cells: list[str], csv: str, md: str,
                  json_out: str, status: dict | None = None, siblings: list[str] = ()) -> None:
    """Aggregate the cells, or, when the data could not be had (``status['runnable']`` is
    false), write the artefact's not-run record.  ``siblings``: the cell files of the paper's
    other artefacts, whose claims join this one's in the family Holm adjusts over."""
    _aggregate(lambda name, sensitivity=True: _load(name, scale, config_dir, sensitivity=sensitivity), experiment,
               cells, csv, md, json_out, status, siblings)


def _aggregate(load: Callable[..., Experiment], experiment: str, cells: list[str], csv: str, md: str, json_out: str,
               status: dict | None, siblings: list[str], known: dict[str, list[float]] | None = None) -> None:
    from .report.aggregate import family_pvalues
    from .report.artefact import build_artefact, build_not_run, load_cells

    exp = load(experiment)
    if status is not None and not status.get("runnable", True):
        # the workflow never plans this for a reproduced record (rules/common.smk: kept_records)
        build_not_run(exp, status.get("reason", ""), status.get("how_to_obtain", ""), csv, md, json_out)
        return
    family = family_pvalues(_sibling_groups(siblings), lambda name: load(name, sensitivity=False), load_cells, known)
    build_artefact(exp, cells, csv, md, json_out, data=status, family=family)


def job_summarise(scale: str, config_dir: str, artefacts: list[dict], log: str | None = None,
                  comparisons: list[dict] = ()) -> None:
    """The records and figures of several artefacts in one process (``batch_cells``: one job
    per paper): each is what :func:`job_aggregate` and :func:`job_figure` write, the same bytes,
    but each experiment is read once and each sibling's claim p-values computed once.
    ``artefacts``: per artefact, ``experiment``, ``cells``, ``csv``, ``md``, ``json``,
    ``status``, ``siblings`` and, for a figure, ``png`` and ``pdf``.  ``comparisons``: arena
    families compared after them, as :func:`job_arena` does (``family``, ``cells``, ``json``,
    ``md``, ``csv``, ``png``)."""
    logger = _logger(log)
    loaded: dict[str, Experiment] = {}

    def load(name: str, sensitivity: bool = True) -> Experiment:
        # a sibling is read for its main cells and claims only, which the full experiment has too
        if name not in loaded:
            loaded[name] = _load(name, scale, config_dir)
        return loaded[name]

    from .pipeline.batchcache import canonical, read_index, stored_claims, write_record_index

    known: dict[str, list[float]] = {}
    # the claim p-values of the siblings whose cells this job does not change, as noted when their
    # records were made from the same cells (pipeline/batchcache.py): not computed again
    for a in artefacts:
        for name, paths in _sibling_groups(a.get("siblings", [])).items():
            if name not in known and len(paths) == 1 and (claims := stored_claims(paths[0])) is not None:
                known[name] = [tuple(x) for x in claims]
    # an artefact only pending on a sibling's new cells after the others (it compares their p-values)
    for a in sorted(artefacts, key=lambda a: bool(a.get("pending"))):
        groups = _sibling_groups(a.get("siblings", []))
        own = a["cells"][0] if len(a["cells"]) == 1 and a["cells"][0].endswith("all_cells.parquet") else None
        if a.get("pending") and own is not None:
            from .report.aggregate import family_pvalues
            from .report.artefact import load_cells

            family_pvalues(groups, lambda name: load(name, sensitivity=False), load_cells, known)
            used = (read_index(own) or {}).get("family")
            if used is not None and canonical(used) == canonical({n: known[n] for n in groups}):
                logger(f"{a['experiment']} [{scale}]: record kept (its cells, and its claim family's p-values, "
                       "did not change)")
                continue
        logger(f"{a['experiment']} [{scale}]: record" + (" and figure" if a.get("png") else ""))
        _aggregate(load, a["experiment"], a["cells"], a["csv"], a["md"], a["json"], a.get("status"),
                   a.get("siblings", []), known)
        if own is not None and (a.get("status") or {}).get("runnable", True):
            name = a["experiment"]
            if name not in known and groups:  # its siblings' records need its p-values
                from .report.aggregate import claim_pvalues
                from .report.artefact import load_cells

                known[name] = claim_pvalues(load(name, sensitivity=False), load_cells([own]))
            write_record_index(own, known.get(name), {n: known[n] for n in groups})
        if a.get("png"):
            from .report.figures import build_figure

            build_figure(load(a["experiment"]), a["csv"], a["png"], a["pdf"], a["json"])
    for c in comparisons:
        logger(f"arena/{c['family']} [{scale}]: comparison")
        _compare(load, c["family"], config_dir, c["cells"], c["json"], c["md"], c["csv"], c["png"])


def _sibling_groups(paths: list[str]) -> dict[str, list[str]]:
    """Cell files by their experiment (``<paper>/<artefact>`` from results/<paper>/<artefact>/
    cells/<cell>.parquet or results/<paper>/<artefact>/all_cells.parquet)."""
    groups: dict[str, list[str]] = {}
    for p in paths:
        parts = Path(p).parts
        name = "/".join(parts[-4:-2]) if parts[-2] == "cells" else "/".join(parts[-3:-1])
        groups.setdefault(name, []).append(p)
    return groups


def job_fetch(dataset: str, log: str | None = None) -> None:
    from .data.fetch import fetch

    fetch(dataset, log=_logger(log))


def job_preprocess(dataset: str, options: dict | None = None, log: str | None = None) -> None:
    from .data.preprocess import REFUSED, preprocess

    logger = _logger(log)
    logger(f"preprocessing {dataset} with {options or {}}")
    try:
        preprocess(dataset, params=options, progress=logger)
    except REFUSED as e:  # the job ends with its one line (file and line), last in the log and on stderr
        logger(f"error: {e}")
        raise SystemExit(1) from None


#: the builders that keep arrays computed from the processed data beside it
#: (:func:`~rankrepro.data.arrays.derived_arrays`): the coactive movie setup (an ALS fit, ~10 s)
#: and the collaborative GP's kernel and tasks (~5 s)
KEEPING_BUILDERS = ("coactive_movies", "collab_gp")


def _keeping_runs(exp: Experiment) -> dict[str, tuple[Experiment, object]]:
    """The distinct dataset settings of an experiment whose builder keeps arrays (its main
    config and the sensitivity variants that change the dataset), as JSON text -> the
    (experiment, cell) a trial of which reads them."""
    from omegaconf import OmegaConf

    runs: dict[str, tuple[Experiment, object]] = {}
    for cell in exp.all_cells:
        run_exp, run_cell = exp.variant_of(cell)
        d = run_exp.cfg.dataset
        if d.builder in KEEPING_BUILDERS:
            key = json.dumps([d.builder, int(run_exp.cfg.experiment.seed), OmegaConf.to_container(d.params)],
                             sort_keys=True)
            runs.setdefault(key, (run_exp, run_cell))
    return runs


def kept_array_builds(catalog: dict[str, Experiment], data_status: dict) -> list[list]:
    """[experiment, [builder, seed, dataset params] ...] of every experiment whose builder
    (or a sensitivity variant's) keeps arrays and whose data are here: what
    :func:`job_keep_arrays` builds (the workflow's params of the step, so that a changed seed
    or builder parameter runs it again)."""
    out = []
    for name, exp in sorted(catalog.items()):
        runs = _keeping_runs(exp)
        if runs and data_status[name].used:
            out.append([name, [json.loads(k) for k in runs]])
    return out


def kept_array_calls(exp: Experiment, data_path: str) -> dict[str, Callable[[], object]]:
    """One call per distinct dataset setting of ``exp`` (main config and variants) whose
    builder keeps arrays: the builder called as a trial of that setting calls it (the spec of
    trial 0 of a cell), which builds the kept file or reads it back."""
    from .data.builders import BUILDERS
    from .pipeline.runner import trial_spec

    calls = {}
    for key, (run_exp, run_cell) in _keeping_runs(exp).items():
        spec = trial_spec(run_exp, run_cell, 0, data_path)
        build = BUILDERS[spec.builder]
        if hasattr(spec, "split_seed"):  # the coactive movie protocol passes its split seed
            calls[key] = lambda b=build, s=spec: b(s.split_seed, data_path=s.data_path, **s.builder_params)
        else:
            calls[key] = lambda b=build, s=spec: b(data_path=s.data_path, **s.builder_params)
    return calls


def job_keep_arrays(experiments: list[str], scale: str, config_dir: str, data: dict[str, str], output: str,
                    log: str | None = None) -> None:
    """Build the arrays each experiment's builder keeps beside the data, for its main config
    and each variant that changes the dataset (:func:`kept_array_calls`), so that the first
    cell jobs (``make smoke`` after ``make data``, the first ``make reproduce``) read them
    instead of computing them.  ``data``: experiment -> its processed data file.  Writes
    ``output``: the seconds each took (built, or read back when kept already)."""
    import time

    from .data.processed_check import check_processed

    logger = _logger(log)
    seconds: dict[str, float] = {}
    for path in sorted(set(data.values())):  # in the checkout, and the files their manifests name
        check_processed(path)
    for name in experiments:
        for key, call in kept_array_calls(_load(name, scale, config_dir), data[name]).items():
            t0 = time.perf_counter()
            call()
            seconds[f"{name} {key}"] = round(time.perf_counter() - t0, 2)
            logger(f"{name}: {key} kept beside {data[name]} ({seconds[f'{name} {key}']:.1f} s; built or read back)")
    write_text(output, json.dumps({"seconds": seconds}, indent=1, sort_keys=True) + "\n")


def job_compile_kernels(output: str, log: str | None = None) -> None:
    """Compile the package's Numba kernels into Numba's on-disk cache (beside their modules),
    as the first run's cell jobs would otherwise do (~15 s over many jobs in a new clone): every
    learner of every protocol's registry runs the protocol's own calls on a tiny data set (the
    conformance suite's ``protocol calls`` check), which compiles each kernel for the argument
    types the protocols pass.  Writes ``output``: the seconds each learner took."""
    import time

    from .conformance import check_protocol, family_of
    from .protocols import PROTOCOLS

    logger = _logger(log)
    seconds: dict[str, float] = {}
    done: set[type] = set()
    for protocol in PROTOCOLS.values():
        for name, cls in protocol.estimators.items():
            family = family_of(cls)
            if cls in done or family is None:
                continue
            done.add(cls)
            t0 = time.perf_counter()
            check_protocol(cls, family)
            seconds[name] = round(time.perf_counter() - t0, 2)
            logger(f"{name}: its protocol's calls ran ({seconds[name]:.1f} s; kernels compiled or read back)")
    # the simulated user of the coactive movie protocol (protocols/coactive.py), whose kernel no
    # learner's calls reach: both of its questions, with the argument types that protocol passes
    import numpy as np

    from .algorithms.coactive import SortedUtilities

    t0 = time.perf_counter()
    U = np.random.default_rng(0).random((3, 7))
    sorted_u = SortedUtilities(U)
    sorted_u.feedback(np.ones_like(U, dtype=bool), np.argmax(U, axis=1), 0.5)
    sorted_u.best(np.ones_like(U, dtype=bool))
    seconds["coactive movie feedback"] = round(time.perf_counter() - t0, 2)
    # the finiteness check of large float inputs (algorithms/base.py: 65,536 values or more),
    # which the tiny data sets above never reach and the first smoke run compiled in a paper's job
    from .algorithms.base import _all_finite

    t0 = time.perf_counter()
    _all_finite(np.zeros(1 << 16))
    seconds["finiteness check of large inputs"] = round(time.perf_counter() - t0, 2)
    write_text(output, json.dumps({"seconds": seconds}, indent=1, sort_keys=True) + "\n")


def job_keep_catalog(scale: str, config_dir: str, output: str, log: str | None = None) -> None:
    """Compose and check the catalog of another scale (`make smoke`'s) and keep it in the
    catalog cache (:func:`rankrepro.pipeline.catalog.load_catalog`), as that scale's first
    workflow start would otherwise do (~10 s).  Writes ``output``: the scale, the cache key and
    the seconds it took."""
    import time

    from .pipeline.catalog import catalog_key, default_cache_dir, load_catalog

    t0 = time.perf_counter()
    cat = load_catalog(scale, config_dir=config_dir, cache_dir=default_cache_dir())
    seconds = round(time.perf_counter() - t0, 2)
    _logger(log)(f"the {scale} catalog ({len(cat)} experiments) kept in {default_cache_dir()} ({seconds:.1f} s; "
                 "composed or read back)")
    write_text(output, json.dumps({"scale": scale, "key": catalog_key(Path(config_dir).resolve(), scale),
                                        "seconds": seconds}, indent=1) + "\n")


def job_figure(experiment: str, scale: str, config_dir: str, summary_csv: str, png: str, pdf: str,
               record: str | None = None) -> None:
    from .report.figures import build_figure

    exp = _load(experiment, scale, config_dir)
    if exp.cfg.experiment.figure is None:
        raise ValueError(f"{experiment} is not a figure experiment")
    build_figure(exp, summary_csv, png, pdf, record)


def job_arena(family: str, scale: str, config_dir: str, cell_paths: list[str], out_json: str, out_md: str,
              out_csv: str, out_png: str) -> None:
    """One arena family's comparison (rankrepro.report.arena) from its experiments' cell files
    (one file per cell, or one per experiment when the cells ran batched)."""
    _compare(lambda name: _load(name, scale, config_dir), family, config_dir, cell_paths, out_json, out_md, out_csv,
             out_png)


def _compare(load: Callable[[str], Experiment], family: str, config_dir: str, cell_paths: list[str], out_json: str,
             out_md: str, out_csv: str, out_png: str) -> None:
    from .config_files import list_experiments
    from .report.arena import build_comparison, load_arena

    arena = load_arena(family, config_dir, list_experiments(config_dir))
    exps = {name: load(name) for name in arena.experiments}
    cells = {name: [p for p in cell_paths if f"/{exps[name].paper}/{exps[name].artefact}/" in p] for name in arena.experiments}
    build_comparison(arena, exps, cells, out_json, out_md, out_csv, out_png)


def job_report(json_paths: list[str], png_paths: list[str], scale: str, output: str,
               kept: dict[str, str] | None = None) -> None:
    """``kept``: the artefacts whose reproduced record is kept because their data are absent
    here (name -> why), said in their sections."""
    from .report.html import build_report

    pngs = {}
    for p in png_paths:
        parts = Path(p).with_suffix("").parts
        pngs["/".join(parts[-2:])] = p
    build_report(list(json_paths), pngs, output, scale, kept=kept)
