"""``rankrepro verify --records``: every committed record checked against its cells, cheaply.

The chain from a published-vs-reproduced number back to the trials it comes from has three
links, each checked here for *every* committed artefact (the sampled recomputation of cells,
:mod:`.verify`, checks the last one, cells against the code):

1. each cell file ``results/<paper>/<artefact>/cells/<cell>.parquet`` has the sha256 its
   fingerprint file (``<cell>.fingerprint``, key ``sha256``) and its record (``cells_sha256``)
   name: a hand-edited cell is caught (and the workflow reruns it, :mod:`.freshness`);
2. each record (``results/<paper>/<artefact>.json`` with its ``.csv`` and ``.md``, and the
   arena's ``results/arena/comparison/<family>.*``) is aggregated again from its cells with
   today's code into a scratch folder and compared byte for byte with the committed files: an
   edited mean, interval or verdict is caught, and so is aggregation code changed without the
   records being made again;
3. the only fields left out of that comparison are those that describe *when and where* the
   record was written, not what it says: ``git_commit`` (the commit at aggregation time; a
   record made from a dirty tree says ``+dirty`` and is named in a warning) and ``versions``
   (the interpreter, platform and library versions of the machine that aggregated; the code
   and numeric libraries the numbers come from are in ``code``, which is compared).

A record whose data set is absent here is aggregated again all the same (its cells are
committed): its ``dataset.sources`` (read from the processed data's manifest) is taken from
the committed record when the manifest is not here.  Its claim family (Holm) is the one the
record names (``claim_family.artefacts``), whose cells are committed too.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

from .cells import Experiment


def file_digest(path) -> str:
    """The sha256 of a file's bytes (the one function for it: verify and batchcache call it)."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()

#: record fields that say when and where a record was written, not what it says (module docstring)
UNCOMPARED = ("git_commit", "versions")
SCRATCH = Path("runs") / "verify-records"


@dataclass
class RecordProblem:
    path: str  # the file, relative to the checkout
    what: str  # what differs (the first differing key path, or the cell whose bytes changed)

    def __str__(self) -> str:
        return f"{self.path}: {self.what}"


def cell_file(root: Path, exp: Experiment, cell_id: str) -> Path:
    return root / "results" / exp.paper / exp.artefact / "cells" / f"{cell_id}.parquet"


def cells_sha256(paths) -> dict[str, str]:
    """A record's ``cells_sha256``: cell id (the file's stem) -> sha256 of the file's bytes, sorted."""
    return {Path(p).stem: file_digest(p) for p in sorted(paths, key=lambda p: Path(p).stem)}


def seal(record: dict) -> dict:
    """The record with ``record_sha256`` last: the sha256 of the record as the project writes it
    (:func:`rankrepro.io.dumps`) without that field.  It catches a record edited by hand (a mean,
    a verdict) wherever the record is read, in particular by the report, in microseconds; it is
    no secret (anyone can seal an edited record again): the check that cannot be fooled that
    way is aggregating the record again from its cells (:func:`check`)."""
    from ..io import dumps

    rest = {k: v for k, v in record.items() if k != "record_sha256"}
    return {**rest, "record_sha256": hashlib.sha256(dumps(rest).encode()).hexdigest()}


def _committed_text(p: Path) -> str | None:
    """The text git's HEAD holds for ``p`` (None outside a repository or when HEAD has none):
    Snakemake removes a job's outputs before the job runs, so a record being aggregated again
    by the workflow is compared with its committed version."""
    import subprocess

    try:
        r = subprocess.run(["git", "show", f"HEAD:./{p.name}"], cwd=p.parent, capture_output=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return r.stdout.decode("utf-8", "replace") if r.returncode == 0 else None


def write_sealed(path, record: dict, aggregated: bool = True) -> bool:
    """Write ``record`` sealed (:func:`seal`) to ``path``, unless the file there (or, when the
    workflow removed it before the job, its committed version) already says the same: equal but
    for :data:`UNCOMPARED` (when and where it was written).  Then that text is kept (written back
    as it was), with the commit and machine that first wrote that content: re-aggregating one
    artefact rewrites none of its siblings' records whose content did not change -- unless that
    commit was a modified tree's ("+dirty") and this one is clean.  Returns
    whether new content was written.  ``aggregated``: the record was made from its cells here (an
    aggregation job): noted as such (:func:`note_aggregated`)."""
    from ..files import atomic_write
    from ..io import dumps

    p = Path(path)
    on_disk = p.is_file()
    try:
        text = p.read_text() if on_disk else (_committed_text(p) if p.parent.is_dir() else None)
    except OSError:
        text = None
    if text is not None:
        try:
            old = json.loads(text)
        except ValueError:
            old = None
        if isinstance(old, dict) and seal_problem(old) is None:
            # the figures' hashes are the figure job's, after the aggregation: an aggregation that
            # says what the record says keeps them (its figure is the same)
            skip = (*UNCOMPARED, "record_sha256", *(() if FIGURES in record else (FIGURES,)))
            strip = lambda d: {k: v for k, v in d.items() if k not in skip}  # noqa: E731
            # a stamp of a modified tree ("+dirty") gives way to a clean one for the same content:
            # the record then names a commit a reader can check out
            dirty_kept = (str(old.get("git_commit", "")).endswith("+dirty")
                          and not str(record.get("git_commit", "")).endswith("+dirty"))
            if strip(old) == json.loads(dumps(strip(record))) and not dirty_kept:
                if aggregated:  # what was aggregated here says what the kept text says
                    note_aggregated(old)
                if on_disk:
                    os.utime(p)  # its time is the job's, as if written (Snakemake plans by file times)
                else:
                    atomic_write(p, lambda tmp: Path(tmp).write_text(text))
                return False
    sealed = seal(record)
    atomic_write(p, lambda tmp: Path(tmp).write_text(dumps(sealed)))
    if aggregated:
        note_aggregated(sealed)
    return True


#: a record's field naming its figure files' sha256 (file name -> sha256), written by the figure job
FIGURES = "figures_sha256"


def figure_files(record_json: str | os.PathLike, record: dict) -> dict[str, Path]:
    """The figure files a record's artefact has (PNG and PDF, by file name), where the pipeline
    writes them in the record's output tree: ``figures/<paper>/<figure_file>.*`` for an
    artefact, ``figures/arena/comparison/<figure>`` for an arena comparison; none without a figure."""
    rj = Path(record_json)
    if record.get("kind") == "comparison":
        if not record.get("figure"):
            return {}
        stem, folder = Path(str(record["figure"])).stem, rj.parents[3] / "figures" / "arena" / "comparison"
    elif record.get("figure_file") and record.get("status") == "ran":
        stem, folder = str(record["figure_file"]), rj.parents[2] / "figures" / str(record["paper"])
    else:
        return {}
    return {f"{stem}{ext}": folder / f"{stem}{ext}" for ext in (".png", ".pdf")}


def record_figures(record_json: str | os.PathLike, written: list | None = None) -> dict:
    """Name the sha256 of the figure files of the record at ``record_json`` (``written``: the
    files just drawn, else :func:`figure_files`) in it (:data:`FIGURES`) and seal it again
    (:func:`write_sealed`); the files are then dated with the record (the figure job's outputs
    no older than this input of it).  Returns the record."""
    from ..files import read_json

    p = Path(record_json)
    rec = read_json(p, "record")
    files = {Path(f).name: Path(f) for f in written} if written else figure_files(p, rec)
    files = {n: f for n, f in files.items() if f.is_file()}
    if not files:
        return rec
    here = aggregated_here(rec)  # only a record aggregated here stays noted so with its figures' hashes
    rec = {k: v for k, v in rec.items() if k not in (FIGURES, "record_sha256")}
    rec[FIGURES] = {n: file_digest(f) for n, f in sorted(files.items())}
    write_sealed(p, rec, aggregated=here)
    t = p.stat().st_mtime
    for f in files.values():
        os.utime(f, (t, t))
    return rec


def figure_problems(record_json: str | os.PathLike, record: dict, embedded: str | os.PathLike | None = None,
                    strict: bool = True) -> list[str]:
    """Each figure file of the record whose bytes are not those the record names (one line
    naming the file: a figure swapped for another, or edited), and ``embedded`` (the PNG a
    report embeds for the record) when the record names no such file.  ``strict``: a record
    with a figure that names no hashes at all is a problem too (else nothing is checked)."""
    out = []
    files = figure_files(record_json, record)
    named = record.get(FIGURES)
    if embedded is not None and Path(embedded).name not in files:
        out.append(f"{embedded}: the report would embed it for {record_json}, which names no such figure")
    if not files:
        return out
    if not isinstance(named, dict):
        return out + ([f"{record_json}: names no {FIGURES} (made before records named their figures' hashes: "
                       "aggregate it again, with its figure)"] if strict else [])
    for n, f in files.items():
        if embedded is not None and Path(embedded).name == n:
            f = Path(embedded)
        if not f.is_file():
            if n.endswith(".png") or n in named:
                out.append(f"{f}: missing (named by {record_json})")
        elif n not in named:
            out.append(f"{f}: {record_json} names no sha256 for it")
        elif (got := file_digest(f)) != named[n]:
            out.append(f"{f}: its bytes are not those {record_json} names (sha256 {got[:12]}, the record names "
                       f"{str(named[n])[:12]}): a figure swapped or edited")
    return out


def _aggregated_mark(record: dict) -> Path | None:
    """Where this machine notes that a record with this ``record_sha256`` was aggregated from its
    cells here: an empty file named by the hash in the user's cache folder
    (:func:`~rankrepro.pipeline.catalog.default_cache_dir`, outside every checkout: no commit
    can plant one)."""
    import re

    from .catalog import default_cache_dir

    h = record.get("record_sha256") if isinstance(record, dict) else None
    if not isinstance(h, str) or not re.fullmatch(r"[0-9a-f]{64}", h):
        return None
    return default_cache_dir() / "aggregated" / h


def note_aggregated(record: dict) -> None:
    """Note that ``record`` (sealed) was made, or made again and found identical, from its cells
    on this machine (by an aggregation job or ``rankrepro verify --records``).  Best effort: a
    cache folder that cannot be written notes nothing (the report then says the record was not
    aggregated here)."""
    mark = _aggregated_mark(record)
    if mark is None:
        return
    try:
        mark.parent.mkdir(parents=True, exist_ok=True)
        mark.touch()
    except OSError:
        pass


def aggregated_here(record: dict) -> bool:
    """Whether this machine made this very record (its ``record_sha256``) from its cells, or
    aggregated it again and found it identical (:func:`note_aggregated`)."""
    mark = _aggregated_mark(record)
    return mark is not None and mark.is_file()


def seal_problem(record: dict) -> str | None:
    """None when ``record_sha256`` is the record's (:func:`seal`), else what is wrong."""
    if not isinstance(record, dict) or "record_sha256" not in record:
        return "has no record_sha256 (made before records were sealed, or the field removed)"
    if seal(record)["record_sha256"] != record["record_sha256"]:
        return "its content is not what was written (record_sha256 does not match: edited by hand?)"
    return None


def record_cell_files(record_json: str | Path, names) -> dict[str, Path]:
    """Where the cells a record names (``cells_sha256``) are: ``<artefact>/cells/<cell>.parquet``
    beside the record, or ``<artefact>/all_cells.parquet`` when the cells ran batched."""
    base = Path(record_json).with_suffix("")
    return {n: base / "all_cells.parquet" if n == "all_cells" else base / "cells" / f"{n}.parquet" for n in names}


def record_problems(record_json: str | Path, record: dict) -> list[str]:
    """What the report checks of a record before showing it (cheap: a hash of the record and of
    each cell file it names): its seal, and each cell's bytes against ``cells_sha256``."""
    out = []
    if (why := seal_problem(record)) is not None:
        out.append(f"{record_json}: {why}")
    if record.get("status") == "ran" and record.get("kind") != "comparison":
        named = record.get("cells_sha256")
        if not isinstance(named, dict) or not named:
            out.append(f"{record_json}: names no cells_sha256 (the content hash of each cell it was aggregated from)")
            return out
        for n, p in record_cell_files(record_json, named).items():
            if not p.is_file():
                out.append(f"{p}: missing (named by {record_json})")
            elif file_digest(p) != named[n]:
                out.append(f"{p}: its bytes are not those {record_json} was aggregated from (sha256 "
                           f"{file_digest(p)[:12]}, the record names {str(named[n])[:12]})")
    return out


def first_difference(a, b, path: str = "") -> str | None:
    """The first key path where two parsed JSON values differ (None when equal), with both values
    (shortened)."""
    if isinstance(a, dict) and isinstance(b, dict):
        for k in list(dict.fromkeys([*a, *b])):
            if k not in a:
                return f"{path}.{k}: not in the committed file"
            if k not in b:
                return f"{path}.{k}: not made by aggregating the cells again"
            d = first_difference(a[k], b[k], f"{path}.{k}")
            if d:
                return d
        if list(a) != list(b):
            return f"{path}: the keys are in another order"
        return None
    if isinstance(a, list) and isinstance(b, list):
        for i, (x, y) in enumerate(zip(a, b)):
            d = first_difference(x, y, f"{path}[{i}]")
            if d:
                return d
        if len(a) != len(b):
            return f"{path}: {len(a)} items committed, {len(b)} made again"
        return None
    if a != b or type(a) is not type(b):
        return f"{path or '.'}: committed {_short(a)}, made again {_short(b)}"
    return None


def _short(x) -> str:
    s = json.dumps(x)
    return s if len(s) <= 80 else s[:77] + "..."


def first_line_difference(a: str, b: str) -> str | None:
    la, lb = a.splitlines(), b.splitlines()
    for i, (x, y) in enumerate(zip(la, lb), start=1):
        if x != y:
            return f"line {i}: committed {_short(x)}, made again {_short(y)}"
    if len(la) != len(lb):
        return f"{len(la)} lines committed, {len(lb)} made again"
    if a != b:
        return "the same lines, other bytes (line ends or a final newline)"
    return None


def check_cells(exp: Experiment, rec: dict, root: Path, rel) -> list[RecordProblem]:
    """Link 1: each cell's bytes against its fingerprint file's and the record's sha256."""
    out = []
    named = rec.get("cells_sha256")
    if not isinstance(named, dict):
        out.append(RecordProblem(rel(root / "results" / f"{exp.name}.json"),
                                 "names no cells_sha256 (made before records named their cells' hashes)"))
        named = {}
    for c in exp.all_cells:
        p = cell_file(root, exp, c.id)
        if not p.is_file():
            out.append(RecordProblem(rel(p), "missing"))
            continue
        digest = file_digest(p)
        fp = p.with_suffix(".fingerprint")
        if (why := _fingerprint_problem(fp, digest)) is not None:
            out.append(RecordProblem(rel(p), f"its bytes (sha256 {digest[:12]}) {why}"))
        if named and named.get(c.id) != digest:
            out.append(RecordProblem(rel(p), f"its bytes (sha256 {digest[:12]}) are not those its record names "
                                             f"({str(named.get(c.id))[:12]})"))
    if named and set(named) != {c.id for c in exp.all_cells}:
        out.append(RecordProblem(rel(root / "results" / f"{exp.name}.json"),
                                 f"cells_sha256 names {sorted(set(named) ^ {c.id for c in exp.all_cells})[:3]} "
                                 "which are not (or not all) the experiment's cells"))
    return out


def _fingerprint_problem(fp: Path, digest: str) -> str | None:
    """What is wrong with a cell's fingerprint file ``fp`` for results of sha256 ``digest``
    (None: it names them), said without a placeholder such as ``None``."""
    if not fp.is_file():
        return (f"cannot be checked: its fingerprint file {fp.name} is missing (the workflow removes it from a "
                "cell that no longer matches it, an edited one among them, and reruns the cell)")
    try:
        kept = json.loads(fp.read_text()).get("sha256")
    except (OSError, ValueError, AttributeError):
        return f"cannot be checked: its fingerprint file {fp.name} is not readable JSON (damaged?)"
    if not isinstance(kept, str):
        return f"cannot be checked: its fingerprint file {fp.name} names no sha256"
    return None if kept == digest else f"are not those its fingerprint file names ({kept[:12]})"


def compare_files(committed: Path, made: Path, rel) -> list[RecordProblem]:
    """Link 2: a file made again against the committed one (JSON: parsed, :data:`UNCOMPARED`
    apart, then byte for byte; other files byte for byte)."""
    if not made.is_file():
        return [RecordProblem(rel(committed), "not made by aggregating the cells again")]
    a, b = committed.read_text(), made.read_text()
    if committed.suffix == ".json":
        try:
            ja = json.loads(a)
        except ValueError as e:
            return [RecordProblem(rel(committed), f"not valid JSON ({e})")]
        jb = json.loads(b)
        if isinstance(ja, dict) and isinstance(jb, dict):
            for k in UNCOMPARED:
                if k in ja and k in jb:
                    jb[k] = ja[k]
            if "record_sha256" in jb:  # sealed again over the fields taken from the committed record
                jb = seal(jb)
        d = first_difference(ja, jb)
        if d:
            return [RecordProblem(rel(committed), d)]
        # the same content: then the same bytes, as the project writes them
        from ..io import dumps

        if a != dumps(jb):
            return [RecordProblem(rel(committed), "the same content written otherwise (hand-formatted?)")]
        return []
    d = first_line_difference(a, b)
    return [RecordProblem(rel(committed), d)] if d else []
