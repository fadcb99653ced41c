"""Reading the processed arrays, and the arrays derived from them that jobs keep beside them.

This is all the builders need of the data files (making them is :mod:`.preprocess`'s work):
a cell's code fingerprint (:mod:`rankrepro.pipeline.codeprint`) includes the modules its
builder imports, and reading a file is not making it.
"""

from __future__ import annotations

import functools
import hashlib
import json
import zipfile
from pathlib import Path
from typing import Callable

import numpy as np

from ..io import atomic_write


def read_npz(path: str | Path) -> dict[str, np.ndarray]:
    """Every array of an npz file; a file that is not one (truncated, corrupt, another
    format) is refused naming the file."""
    p = Path(path)
    try:
        with np.load(p, allow_pickle=False) as z:
            return {k: z[k] for k in z.files}
    except FileNotFoundError:
        raise
    except (OSError, ValueError, EOFError, KeyError, zipfile.BadZipFile) as e:
        raise ValueError(f"{p}: not a readable processed data file ({type(e).__name__}: {e}); "
                         "delete it and run the data rules again (snakemake data)") from None


@functools.lru_cache(maxsize=8)
def load_cached(path: str) -> dict[str, np.ndarray]:
    """The processed arrays at ``path``, kept for the life of the process (trials of one job
    share them)."""
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"{p}: run the data rules first (snakemake data)")
    return read_npz(p)


def derived_path(data_path: str, stem: str, key: list) -> Path:
    """Where :func:`derived_arrays` keeps the arrays of ``key``: beside the data."""
    return Path(data_path).with_name(f"{stem}-{hashlib.sha256(json.dumps(key).encode()).hexdigest()[:12]}.npz")


def derived_arrays(data_path: str, stem: str, key: list, compute: Callable[[], dict[str, np.ndarray]]
                   ) -> dict[str, np.ndarray]:
    """Arrays computed from the processed data at ``data_path`` that every job of an
    experiment needs alike (a kernel, a fitted embedding): computed once and kept beside the
    data as ``<stem>-<hash of key>.npz``, read back bit for bit by later jobs.  Rebuilt when
    the data are newer or the file cannot be read; not kept when the folder is read-only.
    ``key`` (JSON-serialisable) must name everything the arrays depend on, a version first."""
    if not Path(data_path).is_file():  # no data file to keep it beside (a test's stand-in)
        return compute()
    path = derived_path(data_path, stem, key)
    try:
        if path.is_file() and path.stat().st_mtime >= Path(data_path).stat().st_mtime:
            return read_npz(path)
    except (OSError, ValueError):
        pass  # unreadable: computed again below
    arrays = compute()

    def write(tmp: str) -> None:
        with open(tmp, "wb") as f:
            np.savez(f, **arrays)
    try:
        atomic_write(path, write)
    except OSError:
        pass
    return arrays
