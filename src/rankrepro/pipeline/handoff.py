"""The results a main cell's job computes for the cells that read its fits, handed to their jobs.

A sensitivity cell that differs from its main cell only in how the fitted model predicts
(:func:`.cells.reread_of`: Yu et al.'s ``ordinal_predict=median``) needs no fit of its own:
the main cell's job reads each trial's fit under both rules (:func:`.runner.run_cell` with
``rereads``) and leaves the reader's frame here; the workflow runs the reader's job after its
main cell's (its main cell's results are its input) and the job takes the frame instead of
fitting again.  A frame is filed under everything that determines the reader's numbers -- its
experiment, scale, id, fingerprint (config values, seeds, sizes, code: :func:`.cells.cell_fingerprint`)
and the identity of the data it runs on -- so a frame left by other code, configs or data is
never found; a reader that finds none (its main cell was current and not run, or another run
took the frame) computes its trials itself, the same numbers.  The frames live in the cache
folder (:func:`.catalog.default_cache_dir`, ``rereads/``), never under ``results/``, and are
removed when taken.  Nothing here is imported by a protocol or a learner: it is in no cell's
code fingerprint.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from .catalog import default_cache_dir
from .cells import Experiment, cell_fingerprint
from .freshness import data_path_identity


def handoff_path(exp: Experiment, cell_id: str, data_path: str | None, cache_dir: str | os.PathLike | None = None) -> Path:
    """Where the frame of reader ``cell_id`` computed on ``data_path`` is left."""
    key = json.dumps([exp.name, exp.scale, cell_id, cell_fingerprint(*exp.variant_of(exp.cell(cell_id))),
                      data_path_identity(data_path)])
    digest = hashlib.sha256(key.encode()).hexdigest()[:32]
    return Path(cache_dir or default_cache_dir()) / "rereads" / f"{digest}.parquet"


def leave(exp: Experiment, frames: dict, data_path: str | None, skip: set[str] = frozenset()) -> list[str]:
    """Leave each reader's frame (``frames``: cell id -> frame) for its job; ``skip``: readers
    whose results are current (no job will ask).  Returns the ids left."""
    from ..io import write_parquet

    left = []
    for cid, df in frames.items():
        if cid in skip:
            continue
        path = handoff_path(exp, cid, data_path)
        path.parent.mkdir(parents=True, exist_ok=True)
        write_parquet(df, path)
        left.append(cid)
    return left


def take(exp: Experiment, cell_id: str, data_path: str | None):
    """The frame left for reader ``cell_id`` (checked: its rows, parameters and trials), or
    None; the file is removed once read."""
    from ..files import read_cell
    from .runner import from_reread

    path = handoff_path(exp, cell_id, data_path)
    if not path.is_file():
        return None
    try:
        frame = from_reread(exp, cell_id, read_cell(path))
    finally:
        path.unlink(missing_ok=True)
    return frame
