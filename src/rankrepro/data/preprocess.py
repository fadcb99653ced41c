"""Parse a verified data set once into ``data/processed/<name>/data.npz`` + ``manifest.json``.

The npz holds plain typed arrays that load in milliseconds; the manifest records the
source files' hashes and the preprocessing parameters, so a change of either rebuilds it
(Snakemake's input and params triggers).  Options the papers need:

* ratings: kept as given (user, item, score, time); filters (minimum ratings per user and
  per item) and centring (EachMovie's score - 0.5 with unseen = 0, MovieLens' analogue
  (score - 3) / 4) are applied by :mod:`rankrepro.data.ratings` with the experiment's
  parameters;
* LETOR: per-query min-max scaling of every feature to [0, 1] (``scaling: query_minmax``;
  a feature constant within a query becomes 0).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Iterator

import numpy as np

from . import ir_readers, readers
from .fetch import MANIFEST, ChecksumError, Paths, check_local
from ..checkout import LinkedFile, OutsideCheckout, data_folders_inside, refuse_outside, data_root
from ..files import ReadFailed, WriteFailed, atomic_write, os_error_named
from .registry import get
from .arrays import derived_arrays, derived_path, load_cached, read_npz  # noqa: F401 - their former home

PROCESSED = "data.npz"
PROCESSED_MANIFEST = "manifest.json"
DEFAULT_PARAMS = {"letor": {"scaling": "query_minmax"}}

_READERS = {
    "movielens_100k": readers.read_movielens_100k,
    "movielens_1m": readers.read_movielens_1m,
    "movielens_bpmf": readers.read_movielens_bpmf,
    "eachmovie": readers.read_eachmovie_votes,
    "cfquery": ir_readers.read_cfquery,
    "ohsumed_judged": ir_readers.read_ohsumed_judged,
    "ohsumed_queries": ir_readers.read_ohsumed_queries,
}


def query_minmax(X: np.ndarray, qid: np.ndarray) -> np.ndarray:
    """Scale every feature to [0, 1] within each query (constant features -> 0)."""
    from ..metrics import query_groups

    out = np.zeros_like(X, dtype=np.float64)
    for idx in query_groups(qid):
        block = X[idx]
        lo, hi = block.min(axis=0), block.max(axis=0)
        span = np.where(hi > lo, hi - lo, 1.0)
        out[idx] = np.where(hi > lo, (block - lo) / span, 0.0)
    return out


def _split_of(rel: str, layout: str) -> tuple[int, str]:
    """(fold, part) of a LETOR file: folds -> (k, train|valid|test); parts -> (0, S1..S5);
    yahoo -> (0, train|valid|test)."""
    name = Path(rel).name.lower()
    part = ("train" if re.search(r"train", name) else "valid" if re.search(r"vali", name)
            else "test" if "test" in name else Path(rel).stem)
    if layout == "folds":
        m = re.match(r"fold(\d+)/", rel.lower())
        return (int(m.group(1)) if m else 0), part
    if layout == "parts":
        return 0, Path(rel).stem
    return 0, part


def preprocess_params(name: str) -> dict[str, Any]:
    """The preprocessing options of a data set (a Snakemake param: changing them rebuilds)."""
    return dict(DEFAULT_PARAMS.get(get(name).kind, {}))


def _stderr(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def build(name: str, paths: Paths | None = None, params: dict[str, Any] | None = None,
          progress: Callable[[str], None] | None = None, source: str | os.PathLike | None = None
          ) -> dict[str, np.ndarray]:
    """The arrays of a data set from its raw files.  ``progress`` (default: stderr) gets a
    line per file read for data sets of several files (LETOR: 15 files, about 35 s), with
    the time so far and an ETA from the bytes still to read.  ``source``: the folder the data
    files are read from (default ``data/raw/<name>``; :func:`preprocess` passes the private
    copies whose bytes it hashed)."""
    progress = progress or _stderr
    entry = get(name)
    paths = paths or Paths()
    raw = Path(source) if source is not None else paths.raw / entry.name
    params = {**DEFAULT_PARAMS.get(entry.kind, {}), **(params or {})}
    if entry.kind == "ratings":
        r = _READERS[entry.reader](raw / entry.data_files[0])
        return {"user": r.user, "item": r.item, "score": r.score, "time": r.time, "scale": np.array(r.scale)}
    if entry.kind == "judgments":
        j = _READERS[entry.reader](raw / entry.data_files[0])
        return {"query": j.query, "doc": j.doc, "scores": j.scores, "judges": np.array(j.judges)}
    if entry.kind == "queries":
        q = _READERS[entry.reader](raw / entry.data_files[0])
        return {"id": q["id"].to_numpy(), "B": q["B"].to_numpy(dtype=str), "W": q["W"].to_numpy(dtype=str)}
    if entry.kind == "letor":
        nf, ml, layout = entry.params["n_features"], entry.params.get("max_label"), entry.params["layout"]
        Xs, ys, qs, docs, folds, parts, read = [], [], [], [], [], [], []
        sizes = [(raw / rel).stat().st_size for rel in entry.data_files]
        t0, done = time.perf_counter(), 0
        for k, rel in enumerate(entry.data_files):
            if entry.reader == "letor2_tsv":
                d = ir_readers.read_letor2_tsv(raw / rel, n_features=nf, max_label=ml)
            else:
                # every layout but Yahoo's SVMlight lists all features on each line (LETOR 3.0/4.0, MSLR)
                d = ir_readers.read_letor(raw / rel, n_features=nf, max_label=ml, dense=layout != "yahoo")
            fold, part = _split_of(rel, layout)
            read.append((str(raw / rel), fold, part, d))
            Xs.append(d.X)
            ys.append(d.y)
            qs.append(d.qid)
            docs.append(d.docid.astype(str))
            folds.append(np.full(d.y.size, fold, dtype=np.int8))
            parts.append(np.full(d.y.size, part))
            done += sizes[k]
            el = time.perf_counter() - t0
            progress(f"preprocessing {name}: {k + 1}/{len(sizes)} files read ({rel}, {d.y.size:,} documents), "
                     f"{el:.1f}s elapsed, ETA {eta_text(el / done * (sum(sizes) - done)) if done else '?'}")
        ir_readers.check_splits(read)  # no query in two parts of a split, nor in two folds' test sets
        X, qid = np.vstack(Xs), np.concatenate(qs)
        if params.get("scaling") == "query_minmax":
            progress(f"preprocessing {name}: scaling {X.shape[1]} features per query over {X.shape[0]:,} documents")
            X = query_minmax(X, qid)
        elif params.get("scaling") not in (None, "none"):
            raise ValueError(f"{name}: unknown scaling {params.get('scaling')!r} (none, query_minmax)")
        return {"X": X.astype(np.float32), "y": np.concatenate(ys).astype(np.int8), "qid": qid,
                "docid": np.concatenate(docs), "fold": np.concatenate(folds), "part": np.concatenate(parts)}
    raise ValueError(f"{name}: no preprocessing for kind {entry.kind!r}")


def eta_text(seconds: float) -> str:
    """A remaining time for a progress line: 42s, 3m05s, 1h02m."""
    s = max(0, int(round(seconds)))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


def _expected_sums(entry, raw_manifest: Path) -> dict[str, str]:
    """The sha256 each data file must have: the registry's, else (unpinned) the one recorded
    in the raw manifest when the file was fetched."""
    from ..files import read_json

    files = read_json(raw_manifest, "raw data manifest").get("files")
    files = files if isinstance(files, dict) else {}
    out = {}
    for rel in entry.data_files:
        want = entry.files.get(rel)
        if want is None:
            rec = files.get(rel)
            want = rec.get("sha256") if isinstance(rec, dict) else None
        if not want:
            raise ChecksumError(f"{raw_manifest}: records no sha256 of {rel}; run `rankrepro fetch {entry.name}`")
        out[rel] = want
    return out


_COPIES = re.compile(r"\.preprocess-.+-(\d+)-[^-]+")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process: alive
        return True
    return True


def remove_stale_copies(work: Path) -> list[Path]:
    """Remove the private copies (``.preprocess-<name>-<pid>-<random>``) under ``work`` whose
    process is gone (killed while preprocessing: SIGTERM or SIGKILL skips the cleanup); the
    removed folders.  A folder of an older naming without a pid is left alone."""
    gone = []
    for d in work.glob(".preprocess-*"):
        m = _COPIES.fullmatch(d.name)
        if m and d.is_dir() and not d.is_symlink() and not _alive(int(m.group(1))):
            shutil.rmtree(d, ignore_errors=True)
            gone.append(d)
    return gone


@contextlib.contextmanager
def _verified_copies(entry, raw: Path, want: dict[str, str], work: Path) -> Iterator[tuple[Path, dict[str, str]]]:
    """A private folder holding a copy of each data file of ``entry`` whose bytes were hashed
    as they were read (one read of each raw file), and their sums; a file whose bytes are not
    its expected sum is refused, naming it.  The readers then parse these copies: the bytes
    parsed are the bytes hashed, whatever happens to ``data/raw`` meanwhile."""
    work.mkdir(parents=True, exist_ok=True)
    remove_stale_copies(work)
    # the pid in the name: a folder a killed run left (SIGTERM, SIGKILL) is removed by a later run
    tmp = Path(tempfile.mkdtemp(prefix=f".preprocess-{entry.name}-{os.getpid()}-", dir=work))
    try:
        got: dict[str, str] = {}
        for rel in entry.data_files:
            src, dst = raw / rel, tmp / rel
            dst.parent.mkdir(parents=True, exist_ok=True)
            h = hashlib.sha256()
            if src.is_symlink():
                raise LinkedFile(src)
            try:
                fin = open(src, "rb")
            except OSError as e:
                raise ReadFailed(src, e) from None
            with fin, open(dst, "wb") as fout:
                while True:
                    try:
                        block = fin.read(1 << 20)
                    except OSError as e:
                        raise ReadFailed(src, e) from None
                    if not block:
                        break
                    h.update(block)
                    try:
                        fout.write(block)
                    except OSError as e:
                        raise WriteFailed(dst, e) from None
            got[rel] = h.hexdigest()
            if got[rel] != want[rel]:
                raise ChecksumError(f"preprocessing {entry.name}: {src} changed after it was verified: the bytes "
                                    f"read have sha256 {got[rel]}, not {want[rel]}; nothing was built from them; "
                                    f"run `rankrepro fetch {entry.name}` to replace it")
        yield tmp, got
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _naming_the_raw_file(e: BaseException, copies: Path, raw: Path) -> None:
    """A reader's message names the copy it parsed: name the raw file instead."""
    c, r = str(copies), str(raw)
    e.args = tuple(a.replace(c, r) if isinstance(a, str) else a for a in e.args)
    if isinstance(getattr(e, "path", None), str):
        e.path = e.path.replace(c, r)


#: what stops preprocessing with one line naming the file (and line): a malformed or changed data
#: file, a data folder leading out of the checkout, a read or write refused (a full disk)
REFUSED = (readers.ReaderError, ChecksumError, OutsideCheckout, ReadFailed, WriteFailed)


def preprocess(name: str, paths: Paths | None = None, params: dict[str, Any] | None = None,
               out_dir: str | os.PathLike | None = None, progress: Callable[[str], None] | None = None) -> Path:
    """:func:`_preprocess`, with an OS error (permission denied, a full disk) raised as one line
    naming the file (:class:`~rankrepro.files.ReadFailed` / :class:`~rankrepro.files.WriteFailed`),
    no partial file left."""
    try:
        return _preprocess(name, paths, params, out_dir, progress)
    except OSError as e:
        if isinstance(e, FileNotFoundError) and not isinstance(e, (ReadFailed, WriteFailed)) and e.filename is None:
            raise  # our own "not fetched" message, already naming the file
        raise os_error_named(e) from None


def _preprocess(name: str, paths: Paths | None = None, params: dict[str, Any] | None = None,
                out_dir: str | os.PathLike | None = None, progress: Callable[[str], None] | None = None) -> Path:
    """Read the verified raw files of ``name`` and write the npz and its manifest
    (``progress``: where the progress lines go, default stderr).

    Every raw data file is read once, hashed while read into a private copy, and parsed from
    that copy (a file swapped after its hash cannot slip in); the npz and the manifest (which
    names the npz's own sha256, checked before a run uses it:
    :func:`rankrepro.data.processed_check.check_processed`) are written to temporary files and
    renamed.  The data folders must resolve inside the checkout (no symbolic link leading
    out); an OS error (permission, a full disk) is one line naming the file."""
    progress = progress or _stderr
    t0 = time.perf_counter()

    entry = get(name)
    paths = paths or Paths()
    data_folders_inside(paths, entry.name)
    out = Path(out_dir) if out_dir else paths.processed / entry.name
    refuse_outside(out, data_root(paths.raw), f"the processed data folder of {name}")
    raw_manifest = paths.raw / entry.name / MANIFEST
    if not raw_manifest.is_file():
        raise FileNotFoundError(f"{raw_manifest}: data set {name} has not been fetched and verified")
    # every raw file hashed again, against the registry's sum (an unpinned one: the sum recorded
    # when it was fetched): a file edited after its verification is refused, by name
    local = check_local(entry, paths, rehash=True)
    if not local.ok:
        raise ChecksumError(f"preprocessing {name}: " + (local.problem or f"{raw_manifest} does not list every file")
                            + f"; run `rankrepro fetch {name}` to replace it")
    want = _expected_sums(entry, raw_manifest)
    progress(f"preprocessing {name} ({entry.title})")
    raw = paths.raw / entry.name
    with _verified_copies(entry, raw, want, out.parent) as (copies, sums):
        try:
            arrays = build(name, paths, params, progress, source=copies)
        except Exception as e:  # noqa: BLE001 - re-raised as it is, naming data/raw's file, not the copy
            _naming_the_raw_file(e, copies, raw)
            raise
    digest = hashlib.sha256()

    def write_npz(tmp: str) -> None:
        with open(tmp, "wb") as f:
            np.savez(f, **arrays)
        with open(tmp, "rb") as f:  # the sum of the bytes written, read back from the temporary file
            while block := f.read(1 << 20):
                digest.update(block)

    atomic_write(out / PROCESSED, write_npz)
    manifest = {
        "name": name, "title": entry.title, "kind": entry.kind,
        "params": {**DEFAULT_PARAMS.get(entry.kind, {}), **(params or {})},
        # the sums of the bytes parsed (each equal to the registry's, or the fetched unpinned sum)
        "sources": {rel: sums[rel] for rel in entry.data_files},
        # the processed file's own sum: a run refuses a data.npz that is not this one
        "sha256": digest.hexdigest(),
        "arrays": {k: {"shape": list(v.shape), "dtype": str(v.dtype)} for k, v in arrays.items()},
        # the structural checks the reader applied; all passed (a fault stops preprocessing)
        "structure": {"checks": readers.STRUCTURE_POLICY[entry.kind], "faults": 0},
    }
    atomic_write(out / PROCESSED_MANIFEST, lambda tmp: Path(tmp).write_text(json.dumps(manifest, indent=2)))
    from .processed_seal import seal

    seal(out, manifest)  # what this user's preprocessing made: a forged npz and sum cannot carry it
    progress(f"preprocessing {name}: done in {time.perf_counter() - t0:.1f}s")
    return out / PROCESSED


def rederived_problem(name: str, npz: Path, data_root: Path) -> str | None:
    """None when the arrays of ``npz`` are those its data set's verified raw files give (made
    again, as preprocessing makes them), else what differs (or why they cannot be made)."""
    paths = Paths.under(data_root)
    try:
        entry = get(name)
    except KeyError:
        return f"'{name}' is no data set of the registry"
    manifest = json.loads((npz.parent / PROCESSED_MANIFEST).read_text())
    local = check_local(entry, paths, rehash=True)
    if not local.ok:
        return f"its raw files cannot vouch for it ({local.problem or 'not all fetched and verified'})"
    try:
        want = _expected_sums(entry, paths.raw / entry.name / MANIFEST)
        if manifest.get("sources") != want:
            return "its manifest names other raw files than data/raw holds"
        with _verified_copies(entry, paths.raw / entry.name, want, npz.parent.parent) as (copies, _):
            made = build(name, paths, manifest.get("params"), progress=lambda m: None, source=copies)
    except (ChecksumError, readers.ReaderError, OSError) as e:
        return f"its raw files cannot vouch for it ({e})"
    have = read_npz(npz)
    if sorted(have) != sorted(made):
        return f"it holds the arrays {sorted(have)}, the raw files give {sorted(made)}"
    for k in made:
        a, b = np.asarray(have[k]), np.asarray(made[k])
        if a.dtype != b.dtype or a.shape != b.shape or not np.array_equal(a, b):
            return f"its array '{k}' is not what the raw files give"
    return None


class CorruptData(ValueError):
    """A processed file that cannot be read; the message names it."""


def load(name: str, paths: Paths | None = None, path: str | os.PathLike | None = None) -> dict[str, np.ndarray]:
    """The processed arrays of ``name`` (fast: one npz read).  A file that cannot be read
    raises :class:`CorruptData` naming it."""
    p = Path(path) if path else (paths or Paths()).processed / name / PROCESSED
    if not p.is_file():
        raise FileNotFoundError(f"{p}: run the data rules first (snakemake data) to build {name}")
    try:
        return read_npz(p)
    except ValueError as e:  # read_npz names the file and says how to rebuild it
        raise CorruptData(str(e)) from None
