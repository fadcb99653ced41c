"""TREC run files and per-query evaluation files of the committed LETOR cells, made on demand.

A LETOR cell (``experiment.protocol: letor``: Elsas et al.'s Table 4 and the arena's LETOR
experiments; Elsas et al.'s Fig. 1 and Table 5 record no test metric, and Shivaswamy & Joachims'
web search figures have no test ranking, only the regret of online rounds) keeps, per trial, each test query's MAP and NDCG@k (``query_<metric>``, the query
id in ``round``), not the test scores behind them: those exist only inside the trial
(:func:`rankrepro.protocols.letor.letor_trial`).  Writing them for every cell would add hundreds
of megabytes to the repository, so they are made here when asked for
(``rankrepro runfiles``, ``snakemake runfiles``):

* the trial is run again through the protocol's own code, from the committed config and the
  same seeds (:func:`rankrepro.pipeline.runner.trial_spec`, the same one-BLAS-thread setting as
  the workflow), with :func:`rankrepro.protocols.letor.per_query` watched while it runs: the
  protocol's last call, on :data:`~rankrepro.protocols.letor.TEST_METRICS`, receives the
  selected step's test scores, which are kept.  No line of the protocol changes, so nothing in
  a cell's fingerprint closure moves;
* every per-query value the rerun gives (and the values computed again from the kept scores)
  must equal the committed cell's bit for bit, or nothing is written for that trial: a run file
  is the committed run or it is not written;
* written per cell, fold and trial under ``OUT/<paper>/<artefact>/``:
  ``qrels/fold<f>.qrels`` (the fold's test labels: ``qid 0 docno label``),
  ``<cell>/trial<t>.fold<f>.run`` (``qid Q0 docno rank score tag``, the documents of each query
  in the protocol's order: score descending, ties in file order, as LETOR's evaluation script
  ranks them; scores written with the shortest decimal that reads back to the same double),
  ``<cell>/trial<t>.fold<f>.ranks.run`` (the same ranking scored n - rank + 1: trec_eval ranks
  it as LETOR does, see below) and
  ``<cell>/trial<t>.fold<f>.eval`` (``measure qid value`` as ``trec_eval -q`` prints it, with a
  last ``all`` line per measure: LETOR's MAP and NDCG@k, :mod:`rankrepro.metrics`, equal bit for
  bit to the committed ``query_*`` and ``test_*`` values); ``OUT/index.json`` lists every trial
  written (its files, the values checked, the queries with tied scores across labels) or not
  (and why).

Documents are named by their LETOR document id (``#docid`` of the data files: ``GX...`` for
MQ2008, the OHSUMED document number), so runs compare with another system's run on the same
data.  trec_eval ignores the rank column, keeps scores in single precision and orders tied
scores by document id (descending); LETOR keeps double precision and file order: on a query
whose tied documents (at float32) have different labels the two orders, and so trec_eval's MAP,
can differ (:func:`tie_queries` lists such queries).  The ``.ranks.run`` file carries the
protocol's order in its scores and gives trec_eval LETOR's ranking on every query.

What this relies on in the protocol: a trial's spec names its fold (``fold``) or folds
(``folds``), and :func:`~rankrepro.protocols.letor.letor_trial` evaluates the selected step's
test scores with one call of the module's ``per_query`` on ``TEST_METRICS`` per fold.  A
protocol whose trial is one seed over the five folds, calling ``letor_trial`` once per fold
(:mod:`rankrepro.protocols.letor_seeds`, Elsas et al.'s artefacts), gives one run file per fold of each seed
(``trial<seed>.fold<f>``); its trial's ``query_*`` rows then cover the five folds' queries and
each fold's mean is checked against ``fold_test_*`` (round = fold) instead of ``test_*``.
Were ``letor_trial`` to stop
calling ``per_query`` through its module (or to evaluate the test scores twice), the rerun
stops with a :class:`RunFileError` instead of writing a wrong run.
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable

import numpy as np
import pandas as pd

#: the protocols whose cells have a test ranking per query
RANKING_PROTOCOLS = ("letor", "letor_seeds")


class RunFileError(Exception):
    """A rerun trial does not give the committed values: no run file for it."""


class UnknownCell(LookupError):
    """A cell asked for (``cells``) that none of the experiments has."""


@dataclass
class TrialRun:
    """One trial rerun: the selected step's test scores and what they are scored against."""

    experiment: str
    cell: str
    trial: int
    fold: int
    scores: np.ndarray
    labels: np.ndarray
    qid: np.ndarray
    docid: np.ndarray
    #: the protocol's per-query values (queries in increasing id order)
    per_query: dict[str, np.ndarray]
    #: the rows the trial returned (metric, round, value)
    rows: list


@contextlib.contextmanager
def _watched_per_query():
    """Record every call of the LETOR protocol's ``per_query`` (its arguments and result)
    while the block runs; the protocol's module is restored afterwards."""
    from ..protocols import letor as L

    calls: list[tuple[np.ndarray, np.ndarray, np.ndarray, tuple, dict]] = []
    original = L.per_query

    def watched(scores, labels, qid, metrics=L.TEST_METRICS):
        out = original(scores, labels, qid, metrics)
        calls.append((np.array(scores, dtype=np.float64, copy=True), np.asarray(labels).copy(),
                      np.asarray(qid).copy(), tuple(metrics), out))
        return out

    L.per_query = watched
    try:
        yield calls
    finally:
        L.per_query = original


def fold_test_docids(data_path: str, fold: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(docid, label, qid) of a fold's test part, in the rows' order of
    :func:`rankrepro.data.letor.letor_fold` (the same selection; the caller checks labels and
    query ids against the protocol's)."""
    from ..data.arrays import load_cached
    from ..data.registry import MQ2008_FOLDS

    d = load_cached(data_path)
    if "docid" not in d:
        raise RunFileError(f"{data_path}: no document ids in the processed data (preprocess it again)")
    if np.any(d["fold"] > 0):
        m = (d["fold"] == fold) & (d["part"] == "test")
    else:
        m = np.isin(d["part"], MQ2008_FOLDS[fold][2])
    return d["docid"][m].astype(str), d["y"][m].astype(np.int64), d["qid"][m]


def rerun_trial(exp, cell_id: str, trial: int, data_path: str) -> list[TrialRun]:
    """Trial ``trial`` of cell ``cell_id`` run again as the workflow runs it, with the selected
    step's test scores kept: one :class:`TrialRun` per fold the trial runs (``letor``: its one
    fold; a protocol whose trial runs :func:`~rankrepro.protocols.letor.letor_trial` on several
    folds, in the order of its spec's ``folds``: one per fold)."""
    from ..protocols.letor import TEST_METRICS
    from ..pipeline.runner import _run_one, trial_spec

    protocol = exp.cfg.experiment.protocol
    if protocol not in RANKING_PROTOCOLS:
        raise RunFileError(f"{exp.name}: protocol {protocol!r} has no test ranking per query")
    run_exp, run_cell = exp.variant_of(exp.cell(cell_id))
    spec = trial_spec(run_exp, run_cell, trial, data_path)
    folds = tuple(getattr(spec, "folds", None) or (spec.fold,))
    with _watched_per_query() as calls:
        _, rows = _run_one(protocol, spec, trial)
    test = [c for c in calls if c[3] == tuple(TEST_METRICS)]
    if len(test) != len(folds):
        raise RunFileError(f"{exp.name} {cell_id} trial {trial}: expected {len(folds)} evaluation(s) of the selected "
                           f"test scores (folds {folds}), saw {len(test)} (has the LETOR protocol changed?)")
    out = []
    for fold, (scores, labels, qid, _, pq) in zip(folds, test):
        docid, y, q = fold_test_docids(data_path, int(fold))
        if not (np.array_equal(y, labels) and np.array_equal(q, qid)):
            raise RunFileError(f"{exp.name} {cell_id} trial {trial}: fold {fold}'s test rows differ from the protocol's")
        out.append(TrialRun(exp.name, cell_id, trial, int(fold), scores, labels, qid, docid, pq, list(rows)))
    return out


def _bits(a) -> np.ndarray:
    return np.asarray(a, dtype=np.float64).view(np.int64)


#: the committed rows a rerun is checked against: per query, per trial, per fold of a trial
CHECKED = ("query_", "test_", "fold_test_")


def check_against(runs: list[TrialRun], committed: pd.DataFrame) -> int:
    """Check the folds of one rerun trial against the committed cell's rows of that trial:
    every ``query_*``, ``test_*`` (and ``fold_test_*``, where a trial spans folds) value the
    rerun gives, bit for bit; and per fold, the per-query values computed again from the kept
    scores against the committed ``query_*`` values of the fold's queries and their mean against
    the committed fold value (``fold_test_*`` at round = fold, or ``test_*`` for a one-fold
    trial).  Returns the number of committed values compared; raises :class:`RunFileError`."""
    from ..metrics import per_query
    from .. import metric_names as _metric_names  # noqa: F401 - every registered metric name

    run0 = runs[0]
    where = f"{run0.experiment} {run0.cell} trial {run0.trial}"
    want = committed[committed["trial"] == run0.trial]
    want = want[want["metric"].str.startswith(CHECKED)]
    if want.empty:
        raise RunFileError(f"{where}: no committed per-query values")
    got = {(m, -1 if r is None else int(r)): v for m, r, v in run0.rows if m.startswith(CHECKED)}
    keys = [(m, -1 if pd.isna(r) else int(r)) for m, r in zip(want["metric"], want["round"])]
    if set(keys) != set(got):
        raise RunFileError(f"{where}: the rerun's rows are not the committed ones")
    a = want["value"].to_numpy(np.float64)
    b = np.array([got[k] for k in keys], dtype=np.float64)
    if not np.array_equal(_bits(a), _bits(b)):
        n = int((_bits(a) != _bits(b)).sum())
        raise RunFileError(f"{where}: {n} value(s) differ from the committed cell (largest difference "
                           f"{np.max(np.abs(a - b)):.3g})")
    value = dict(zip(keys, a))
    for run in runs:
        again = per_query(run.scores, run.labels, run.qid, tuple(run.per_query))
        qids = np.unique(run.qid)
        for m, v in again.items():
            if not np.array_equal(_bits(v), _bits(run.per_query[m])):
                raise RunFileError(f"{where} fold {run.fold}: {m} from the kept scores differs")
            if (f"query_{m}", int(qids[0])) in value:
                if not np.array_equal(_bits([value[(f"query_{m}", int(q))] for q in qids]), _bits(v)):
                    raise RunFileError(f"{where} fold {run.fold}: {m} differs from the committed query values")
            mean_key = (f"fold_test_{m}", run.fold) if len(runs) > 1 else (f"test_{m}", -1)
            if mean_key in value and not np.array_equal(_bits(value[mean_key]), _bits(float(v.mean()))):
                raise RunFileError(f"{where} fold {run.fold}: the mean of {m} differs from the committed {mean_key[0]}")
    return len(keys)


def ranked(run: TrialRun) -> list[tuple[int, np.ndarray]]:
    """Per query (increasing id): the row indices in the protocol's ranking (score descending,
    ties in file order: :func:`rankrepro.metrics.ranked_labels`)."""
    from ..metrics import query_groups
    from .. import metric_names as _metric_names  # noqa: F401 - every registered metric name

    out = []
    for idx in query_groups(run.qid):
        order = np.argsort(-run.scores[idx], kind="stable")
        out.append((int(run.qid[idx[0]]), idx[order]))
    return out


def tie_queries(run: TrialRun) -> list[int]:
    """The queries on which tied scores join documents of different labels, ties as trec_eval
    sees them: it keeps a run's scores in single precision (float), so scores equal once rounded
    to float32 tie there, and it orders them by document id, not by our rank column.  On these
    queries trec_eval's (and every tool built on it: pytrec_eval, repro_eval) ranking, and so its
    values, may differ from LETOR's."""
    out = []
    for q, idx in ranked(run):
        s, y = run.scores[idx].astype(np.float32), run.labels[idx]
        vals, count = np.unique(s, return_counts=True)
        if any(np.unique(y[s == v]).size > 1 for v in vals[count > 1]):
            out.append(q)
    return out


def run_tag(exp_name: str, cell: str) -> str:
    return f"rankrepro:{exp_name}:{cell}"


def _fmt(v: float) -> str:
    return repr(float(v))


def write_trial(run: TrialRun, out: Path, paper: str, artefact: str) -> dict[str, Path]:
    """Write the qrels of the trial's fold (once), its two run files and its evaluation file:
    ``.run`` with the model's scores, ``.ranks.run`` the same ranking with each document's score
    replaced by (documents of the query) - rank + 1, distinct small integers, so that trec_eval
    (single precision, ties by document id) ranks exactly as LETOR does."""
    base = out / paper / artefact
    qrels = base / "qrels" / f"fold{run.fold}.qrels"
    if not qrels.is_file():
        qrels.parent.mkdir(parents=True, exist_ok=True)
        lines = [f"{int(q)} 0 {d} {int(y)}\n" for q, d, y in zip(run.qid, run.docid, run.labels)]
        _atomic(qrels, "".join(lines))
    folder = base / run.cell
    folder.mkdir(parents=True, exist_ok=True)
    stem = f"trial{run.trial}.fold{run.fold}"
    paths = {"qrels": qrels, "run": folder / f"{stem}.run", "ranks_run": folder / f"{stem}.ranks.run",
             "eval": folder / f"{stem}.eval"}
    tag = run_tag(run.experiment, run.cell)
    lines, rank_lines = [], []
    for q, idx in ranked(run):
        lines += [f"{q} Q0 {run.docid[i]} {r} {_fmt(run.scores[i])} {tag}\n" for r, i in enumerate(idx, start=1)]
        rank_lines += [f"{q} Q0 {run.docid[i]} {r} {idx.size - r + 1} {tag}:ranks\n" for r, i in enumerate(idx, start=1)]
    _atomic(paths["run"], "".join(lines))
    _atomic(paths["ranks_run"], "".join(rank_lines))
    qids = np.unique(run.qid)
    ev = []
    for m, v in run.per_query.items():
        ev += [f"{m}\t{int(q)}\t{_fmt(x)}\n" for q, x in zip(qids, v)]
        ev.append(f"{m}\tall\t{_fmt(float(v.mean()))}\n")
    _atomic(paths["eval"], "".join(ev))
    return paths


def _atomic(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text)
    tmp.replace(path)


def read_eval(path: str | Path) -> dict[str, dict[str, float]]:
    """An evaluation file as {measure: {qid or 'all': value}}."""
    out: dict[str, dict[str, float]] = {}
    for line in Path(path).read_text().splitlines():
        m, q, v = line.split("\t")
        out.setdefault(m, {})[q] = float(v)
    return out


# ------------------------------------------------------------------------------------
# every cell of the committed LETOR experiments
# ------------------------------------------------------------------------------------
def ranking_experiments(root: Path = Path(".")) -> list[str]:
    """The committed experiments whose protocol ranks test queries and which record test metrics
    (from their resolved configs): Elsas et al.'s Fig. 1 keeps only validation curves, so its
    cells hold no per-query value a run file could be checked against, and it is left out."""
    from omegaconf import OmegaConf

    out = []
    for p in sorted((root / "results").glob("*/*.config.yaml")):
        cfg = OmegaConf.load(p)
        metrics = OmegaConf.select(cfg, "experiment.metrics") or []
        if (OmegaConf.select(cfg, "experiment.protocol") in RANKING_PROTOCOLS
                and any(str(m).startswith("test_") for m in metrics)):
            out.append(f"{p.parent.name}/{p.name[:-len('.config.yaml')]}")
    return out


def committed_experiment(name: str, root: Path = Path("."), scale: str = "paper"):
    """The experiment as its committed cells were made: from the resolved config written beside
    its record (``results/<name>.config.yaml`` under ``root``)."""
    from ..pipeline.catalog import load_resolved

    path = root / "results" / f"{name}.config.yaml"
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no record of {name} at {scale} scale here")
    return load_resolved(path, name, scale)


def _update_index(out: Path, done: list) -> None:
    """``OUT/index.json``: every trial and fold written (or not, and why), merged with what an
    earlier run wrote there; rewritten after each cell, so an interrupted run leaves it true."""
    index = out / "index.json"
    out.mkdir(parents=True, exist_ok=True)
    old = json.loads(index.read_text()) if index.is_file() else []
    keyed = {(w["experiment"], w["cell"], w["trial"], w["fold"]): w for w in old}
    keyed.update({(w.experiment, w.cell, w.trial, w.fold): w.__dict__ for w in done})
    # a trial written now replaces its earlier failure (fold -1), and the other way round
    for w in done:
        if w.problem:
            keyed = {k: v for k, v in keyed.items() if k[:3] != (w.experiment, w.cell, w.trial) or k[3] == -1}
        else:
            keyed.pop((w.experiment, w.cell, w.trial, -1), None)
    _atomic(index, json.dumps([keyed[k] for k in sorted(keyed)], indent=1) + "\n")


@dataclass
class Written:
    experiment: str
    cell: str
    trial: int
    fold: int
    files: dict
    values_checked: int
    #: the queries with tied scores across labels (where trec_eval may rank otherwise)
    tie_queries: list[int]
    problem: str = ""


def write_runfiles(names: Iterable[str] | None = None, out: str | Path = "runs/runfiles", *,
                   cells: Iterable[str] | None = None, trials: Iterable[int] | None = None,
                   scale: str = "paper", root: str | Path | None = None, data_path: str | None = None,
                   echo: Callable[[str], None] = print) -> list[Written]:
    """Run files of every committed cell (or ``cells``) and trial (or ``trials``) of the named
    LETOR experiments (default: all of them) of a scale (paper: the committed ``results/``;
    another scale: ``runs/<scale>/results/``, as the workflow writes it; ``root`` overrides
    where).  The processed data are read from ``data_path`` or ``data/processed/`` of the
    working folder.  A trial whose rerun does not give the committed values is reported
    (``problem``) and written nowhere; a cell of ``cells`` that none of the experiments has is
    :class:`UnknownCell`, before anything runs."""
    import difflib

    from ..pipeline.catalog import output_prefix
    from ..pipeline.runner import default_data_path

    root = Path(root) if root is not None else Path(output_prefix(scale) or ".")
    out = Path(out)
    ranking = ranking_experiments(root)
    for name in names or []:  # an experiment without test rankings has nothing to write: said before anything runs
        if name not in ranking and (root / "results" / f"{name}.config.yaml").is_file():
            raise UnknownCell(f"{name} keeps no per-query test values (no test ranking): run files are made of "
                              f"{', '.join(ranking) or 'no committed experiment here'}")
    exps = [committed_experiment(name, root, scale) for name in (list(names) if names else ranking)]
    known = sorted({c.id for exp in exps for c in exp.all_cells})
    for cid in cells or []:
        if cid not in known:
            near = difflib.get_close_matches(cid, known, n=1)
            raise UnknownCell(f"no cell {cid!r} in {', '.join(e.name for e in exps) or 'any LETOR experiment'}"
                              + (f" (did you mean {near[0]!r}?)" if near else "")
                              + f": the cells are the files of {root / 'results' / '<paper>' / '<artefact>' / 'cells'}")
    done: list[Written] = []
    for exp in exps:
        name = exp.name
        dp = data_path or default_data_path(exp)
        want_cells = list(cells) if cells else [c.id for c in exp.all_cells]
        for cid in want_cells:
            path = root / "results" / exp.paper / exp.artefact / "cells" / f"{cid}.parquet"
            if not path.is_file():
                echo(f"{name} {cid}: no committed cell, skipped")
                continue
            committed = pd.read_parquet(path)
            if not committed["metric"].str.startswith("query_").any():
                echo(f"{name} {cid}: the cell keeps no per-query value to check a run against, skipped")
                if cells:  # asked for by name: a run file that cannot be made is a failure
                    done.append(Written(name, cid, -1, -1, {}, 0, [], "no per-query values"))
                continue
            for t in (list(trials) if trials is not None else sorted(set(committed["trial"]))):
                try:
                    runs = rerun_trial(exp, cid, int(t), dp)
                    n = check_against(runs, committed)
                except RunFileError as e:
                    echo(f"{name} {cid} trial {t}: NOT WRITTEN: {e}")
                    done.append(Written(name, cid, int(t), -1, {}, 0, [], str(e)))
                    continue
                for run in runs:
                    files = write_trial(run, out, exp.paper, exp.artefact)
                    ties = tie_queries(run)
                    echo(f"{name} {cid} trial {t} (fold {run.fold}): {n} committed values equal bit for bit; "
                         f"{files['run']}" + (f" ({len(ties)} queries with tied scores across labels)" if ties else ""))
                    done.append(Written(name, cid, int(t), run.fold, {k: str(v) for k, v in files.items()}, n, ties))
            _update_index(out, done)
    return done


__all__ = ["RANKING_PROTOCOLS", "RunFileError", "TrialRun", "UnknownCell", "check_against", "committed_experiment",
           "fold_test_docids", "ranked", "ranking_experiments", "read_eval", "rerun_trial", "tie_queries",
           "write_runfiles", "write_trial"]
