"""Reruns decided by content, not by file times.

Git does not keep file times, and Snakemake's own metadata (``.snakemake/``) is not
committed, so in a fresh clone the committed outputs look out of date to Snakemake (their
inputs, e.g. the freshly preprocessed data, are newer).  Each cell job therefore writes,
beside its results, a small *fingerprint file* ``cells/<cell>.fingerprint`` (committed with
them): the hash of everything that determines the cell's numbers (:func:`cell_fingerprint`)
and of the processed data it ran on.  When the workflow is parsed, :func:`sync` compares
each file with the fingerprint the cell would have now:

* equal: the cell's results are current; their file times are set to now, after the data's
  and, where every cell of an artefact is current and its record was built from the same
  resolved config, so are the record's, the figure's, those of the arena comparisons all of
  whose experiments are current (and whose record was made from the same family file), and
  finally the report's;
* different or missing (a config edit, other data, an interrupted job), or the results'
  bytes no longer those the fingerprint file names (``sha256``: a results file edited by hand
  or replaced): the fingerprint file is removed, so the cell job (its output) reruns; the results stay until it replaces
  them.

All of them get the same time, the moment of the comparison: Snakemake reruns a job only when
an input is strictly newer than its output, so equal times keep each output current, also where
the file system keeps whole seconds (both sides are cut alike), and every input that was not
re-dated was written before that moment.  Nothing is dated in the future: a job that finishes
within seconds of the start would otherwise leave an output older than its re-dated input, which
Snakemake refuses ("Output ... has older modification time than input").

The fingerprint covers the code too (:mod:`.codeprint`: the modules a cell's protocol,
learner and builder import, and the numeric libraries' versions): editing a learner reruns its
cells, editing the report reruns none.  ``rankrepro verify --stale --record`` checks that such
an edit moved no number and, where it did not, rewrites the fingerprint files.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path

from ..files import read_json, write_text
from .cells import Experiment, cell_fingerprint, config_fingerprint


def data_identity(used: str | None, root: str | os.PathLike = ".") -> str | None:
    """Hash of the processed data set's sources and preprocessing options ("" for generated
    data; None when the data set has not been preprocessed yet)."""
    if used is None:
        return ""
    return manifest_identity(Path(root) / "data" / "processed" / used / "manifest.json")


def data_path_identity(data_path: str | None) -> str:
    """:func:`data_identity` of the processed data file a job runs on (``data/processed/<name>/data.npz``;
    "" for generated data or a data set without a manifest)."""
    return (manifest_identity(Path(data_path).with_name("manifest.json")) or "") if data_path else ""


def manifest_identity(manifest: Path) -> str | None:
    if not manifest.is_file():
        return None
    m = read_json(manifest, "processed-data manifest")
    payload = json.dumps({"sources": m.get("sources"), "params": m.get("params")}, sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


def fingerprint_text(exp: Experiment, cell_id: str, data_id: str, sha256: str | None = None) -> str:
    """The fingerprint file's text; ``sha256``: that of the cell's results file (its bytes as
    written), which a current cell must still have (:func:`is_current`)."""
    fp = cell_fingerprint(*exp.variant_of(exp.cell(cell_id)))
    d = {"cell": cell_id, "fingerprint": fp, "data": data_id}
    if sha256 is not None:
        d["sha256"] = sha256
    return json.dumps(d, sort_keys=True) + "\n"


def is_current(exp: Experiment, cell_id: str, data_id: str, fp: Path, out: Path) -> bool:
    """Whether a cell's results ``out`` are current: its fingerprint file ``fp`` is the one the
    cell would have now (config, code, data) and names the sha256 of the results' bytes as they
    are (a results file edited by hand, or replaced, is not current: the workflow reruns it)."""
    if not (out.is_file() and fp.is_file()):
        return False
    try:
        kept = json.loads(fp.read_text())
        digest = kept["sha256"]
    except (OSError, ValueError, KeyError, TypeError):
        return False
    if fp.read_text() != fingerprint_text(exp, cell_id, data_id, digest):
        return False
    return hashlib.sha256(out.read_bytes()).hexdigest() == digest


def fingerprint_path(prefix: str, exp: Experiment, cell_id: str) -> str:
    return f"{prefix}results/{exp.paper}/{exp.artefact}/cells/{cell_id}.fingerprint"


def _touch(paths: list[Path], when: float) -> None:
    for p in paths:
        if p.is_file():
            os.utime(p, (when, when))


def sync(catalog: dict[str, Experiment], used: dict[str, str | None], prefix: str = "", batch: bool = False,
         root: str | os.PathLike = ".", comparisons: dict[str, tuple[list[str], str]] | None = None,
         remove: bool = True, kept: set[tuple[str, str]] | None = None) -> dict[str, int]:
    """Align file times with content (see the module docstring).  ``used``: experiment ->
    the processed data set it runs on (None: generated data); experiments missing from it
    are not run.  ``comparisons``: arena family -> (its experiments, the text of its family
    file ``config/arena/<family>.yaml``).  Returns the number of ``current`` and ``stale``
    cells.  With ``batch`` (one job per artefact, nothing committed) there is nothing to align.
    ``remove`` False (a dry run): a stale cell's fingerprint file is kept, and the cell is added to
    ``kept`` (experiment, cell id): the workflow plans it through :func:`stale_mark`."""
    root = Path(root)
    counts = {"current": 0, "stale": 0}
    kept = set() if kept is None else kept
    if batch:
        return counts
    now = time.time()  # after every input not re-dated here; equal times suffice (module docstring)
    all_current = True
    current: set[str] = set()  # the experiments whose cells and record are all current
    for name, exp in catalog.items():
        if name not in used:
            continue
        data_id = data_identity(used[name], root)
        if data_id is None:
            # the data are not made yet (e.g. `make data` is what runs now): nothing to compare
            # with, and nothing is removed; the next run compares once they exist
            all_current = False
            continue
        exp_current = True
        for c in exp.all_cells:
            fp = root / fingerprint_path(prefix, exp, c.id)
            out = root / f"{prefix}results/{exp.paper}/{exp.artefact}/cells/{c.id}.parquet"
            if is_current(exp, c.id, data_id, fp, out):
                # dated with every other output: a sensitivity cell is not older than the main cell
                # it may take trials from, nor a twin than the cell whose results it takes
                _touch([out, fp], now)
                counts["current"] += 1
            else:
                if remove:
                    fp.unlink(missing_ok=True)
                elif fp.is_file():  # kept by a dry run: a real run removes it and reruns the cell
                    kept.add((name, c.id))
                counts["stale"] += 1
                exp_current = False
        base = root / f"{prefix}results/{exp.paper}/{exp.artefact}"
        rec = base.with_suffix(".json")
        if exp_current and rec.is_file() and _record_fingerprint(rec) == config_fingerprint(exp):
            _touch([base.with_suffix(".csv"), base.with_suffix(".md"), rec], now)
            if exp.figure_file is not None:
                fig = root / f"{prefix}figures/{exp.paper}/{exp.figure_file}"
                _touch([fig.with_suffix(".png"), fig.with_suffix(".pdf")], now)
            current.add(name)
        else:
            all_current = False
    for family, (members, definition) in (comparisons or {}).items():
        # an arena comparison reads its experiments' cells and resolved configs and its family file
        rec = root / f"{prefix}results/arena/comparison/{family}.json"
        if all(m in current for m in members) and rec.is_file() and _record_field(rec, "config") == definition:
            _touch([rec.with_suffix(".md"), rec.with_suffix(".csv"), rec], now)
            fig = root / f"{prefix}figures/arena/comparison/cd_{family}"
            _touch([fig.with_suffix(".png"), fig.with_suffix(".pdf")], now)
        else:
            all_current = False
    if all_current:
        _touch([root / f"{prefix}results/report/index.html"], now)
    return counts


def write_fingerprint(exp: Experiment, cell_id: str, data_path: str | None, path: str | os.PathLike) -> None:
    """The fingerprint file of a cell just computed (``data_path``: its processed data)."""
    data_id = data_path_identity(data_path)
    # the results' bytes too: a results file edited or replaced afterwards is rerun (is_current)
    digest = hashlib.sha256(Path(path).with_suffix(".parquet").read_bytes()).hexdigest()
    write_text(path, fingerprint_text(exp, cell_id, data_id or "", digest))  # atomic: no partial file on a full disk


def _record_fingerprint(path: Path) -> str | None:
    return _record_field(path, "config_fingerprint")


def _record_field(path: Path, key: str):
    try:
        return json.loads(path.read_text()).get(key)
    except (OSError, ValueError, AttributeError):
        return None


def stale_mark(name: str, cell_id: str) -> str:
    """The mark a dry run gives a stale cell whose fingerprint file it keeps (a real run removes
    the file): an extra input of the cell's job, newer than its outputs, so that the plan shows
    the job while nothing under results/ is touched."""
    return f"{DRY_RUN_MARKS}/{name}/{cell_id}.stale"


#: the dry run's marks (:func:`stale_mark`), beside Snakemake's own records, made again by each dry run
DRY_RUN_MARKS = ".snakemake/rankrepro-dry-run"


def write_stale_marks(cells: set[tuple[str, str]], root: str | os.PathLike = ".") -> None:
    """The marks of ``cells`` (experiment, cell id), dated after every output the start aligned;
    the marks of an earlier dry run go first."""
    import shutil

    base = Path(root) / DRY_RUN_MARKS
    shutil.rmtree(base, ignore_errors=True)
    later = time.time() + 2
    for name, cell_id in cells:
        p = Path(root) / stale_mark(name, cell_id)
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("stale: a real run removes this cell's fingerprint file and computes it again\n")
        os.utime(p, (later, later))
