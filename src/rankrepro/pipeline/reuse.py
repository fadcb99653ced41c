"""Cells the command line takes instead of computing them again.

The workflow reruns a cell only when its fingerprint file (:mod:`.freshness`) no longer
matches; ``rankrepro run`` and ``rankrepro arena`` follow the same rule with one cache for
every entry point.  Before computing a cell they look, in order, in

1. their own output folder (``--out``): a cell a previous run of the command wrote there, and
2. the outputs of the same scale the workflow keeps (:func:`.catalog.output_prefix`: the
   committed ``results/<paper>/<artefact>/cells/`` at paper scale, ``runs/<scale>/...``
   otherwise), under the working folder, and
3. the one cells file per artefact `make smoke` keeps (``batch_cells=paper``:
   ``runs/smoke/results/<paper>/<artefact>/all_cells.parquet``), for a cell its index
   (:mod:`.batchcache`) says was computed from the fingerprint and data it would have now,


for a results file whose fingerprint file is the one the cell would have now (its config
values, seeds, sizes, the code that computes it and the data it runs on) and names the sha256
of the results' bytes as they are (:func:`.freshness.is_current`): a results file edited by
hand or replaced is computed again (3.: the index names the file's sha256).  A cell found in 2. is copied
(from 3.: its rows, written as its own results file with a fingerprint file) (its bytes as they are, then
its fingerprint file); a cell computed gets its fingerprint file written beside it, so that the
next run reuses it.  Nothing here is imported by a protocol, a learner or a builder: it is not
part of any cell's code fingerprint (:mod:`.codeprint`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..files import atomic_write
from .catalog import output_prefix
from .cells import Experiment
from .freshness import is_current


@dataclass
class Source:
    """A folder of cells to reuse: ``label`` is how the log names it."""

    label: str
    cells: Path  # the experiment's cells/ folder there
    #: or the artefact's one cells file with its index (make smoke's all_cells.parquet, .batchcache)
    batch: Path | None = None


@dataclass
class Plan:
    """Per cell of one experiment, where its results come from."""

    #: cell id -> the source it is taken from and the results file whose fingerprint matches
    #: (from a batch source: the cell's rows, a DataFrame)
    reused: dict[str, tuple[Source, Any]] = field(default_factory=dict)
    #: the cells to compute, in the experiment's order
    computed: list[str] = field(default_factory=list)

    def summary(self, name: str, scale: str, n: int) -> str:
        """One log line: how many cells were reused, from where, and which were computed, e.g.
        ``harrington2003/table1 [paper]: 22 cells: 22 reused (results/), 0 computed``."""
        by: dict[str, int] = {}
        for src, _ in self.reused.values():
            by[src.label] = by.get(src.label, 0) + 1
        where = ", ".join(f"{k}" if len(by) == 1 else f"{v} from {k}" for k, v in by.items())
        text = f"{name} [{scale}]: {n} cells: {len(self.reused)} reused" + (f" ({where})" if where else "")
        text += f", {len(self.computed)} computed"
        if self.computed:
            shown = self.computed[:8]
            text += ": " + ", ".join(shown) + (f" and {len(self.computed) - 8} more" if len(self.computed) > 8 else "")
        return text


def sources(exp: Experiment, own_root: str | os.PathLike, base: str | os.PathLike = ".") -> list[Source]:
    """Where ``exp``'s cells may be found: the run's own output folder, then the outputs the
    workflow keeps at the experiment's scale under ``base`` (the working folder: the
    repository's root).  The same folder twice is one source."""
    rel = Path("results") / exp.paper / exp.artefact / "cells"
    kept_prefix = output_prefix(exp.scale)
    out = [Source(str(own_root), Path(own_root) / rel),
           Source(f"{kept_prefix}results/", Path(base) / kept_prefix / rel)]
    seen, unique = set(), []
    for s in out:
        key = os.path.realpath(s.cells)
        if key not in seen:
            seen.add(key)
            unique.append(s)
    for root, label in ((Path(own_root), str(own_root)), (Path(base) / kept_prefix, f"{kept_prefix}results/")):
        batch = root / rel.parent / "all_cells.parquet"
        if batch.is_file() and os.path.realpath(batch) not in seen:
            seen.add(os.path.realpath(batch))
            unique.append(Source(f"{label} all_cells.parquet", rel, batch=batch))
    return unique


def plan(exp: Experiment, data_id: str | None, places: list[Source]) -> Plan:
    """Per cell, the first source holding it current (:func:`.freshness.is_current`), else
    it is to be computed.  ``data_id``: the processed data's identity
    (:func:`.freshness.data_identity`; None when it cannot be told: nothing is reused)."""
    p = Plan()
    frames: dict[int, dict] = {}  # a batch source's current cells, read once

    def batch_rows(i: int, src: Source) -> dict:
        if i not in frames:
            from .batchcache import cell_prints, reusable_frames

            frames[i] = reusable_frames(exp, src.batch, data_id, cell_prints(exp))
        return frames[i]

    for c in exp.all_cells:
        hit = None
        if data_id is not None:
            for i, src in enumerate(places):
                if src.batch is not None:
                    if c.id in batch_rows(i, src):
                        hit = (src, batch_rows(i, src)[c.id])
                        break
                    continue
                out = src.cells / f"{c.id}.parquet"
                if is_current(exp, c.id, data_id, src.cells / f"{c.id}.fingerprint", out):
                    hit = (src, out)
                    break
        if hit is None:
            p.computed.append(c.id)
        else:
            p.reused[c.id] = hit
    return p


def fingerprint_of(results: str | os.PathLike) -> Path:
    """The fingerprint file beside a cell's results file."""
    results = Path(results)
    return results.with_name(results.name[: -len(".parquet")] + ".fingerprint")


def take(found: str | os.PathLike, dest: str | os.PathLike) -> bool:
    """Copy a current cell (results, then fingerprint file: a copy cut short leaves no
    fingerprint, so it is computed next time) to ``dest``; False when it is already there."""
    found, dest = Path(found), Path(dest)
    if os.path.realpath(found) == os.path.realpath(dest):
        return False
    fp_dest = fingerprint_of(dest)
    fp_dest.unlink(missing_ok=True)
    data, fp_text = found.read_bytes(), fingerprint_of(found).read_bytes()
    atomic_write(dest, lambda tmp: Path(tmp).write_bytes(data))
    atomic_write(fp_dest, lambda tmp: Path(tmp).write_bytes(fp_text))
    return True
