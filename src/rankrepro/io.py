"""Writing files: atomic writes (temporary file, then rename), parquet tables and JSON with
NaN written as null.  A leaf module: it imports nothing from the package, so the data layer,
the pipeline and the report can all use it."""

from __future__ import annotations

import json
import math
import os
import tempfile
from pathlib import Path
from typing import Any, Callable


def atomic_write(path: str | os.PathLike, write: Callable[[str], None]) -> None:
    """Write through a temporary file in the same folder, then rename: a reader never sees
    a partial file, and an interrupted run leaves none behind."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix="." + path.name + ".", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        write(tmp)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp creates 0600; results are for sharing
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_parquet(df: Any, path: str | os.PathLike) -> None:
    """A pandas frame as parquet, atomically."""
    atomic_write(path, lambda tmp: df.to_parquet(tmp, index=False))


def write_text(path: str | os.PathLike, text: str) -> None:
    atomic_write(path, lambda tmp: Path(tmp).write_text(text, encoding="utf-8"))


def _clean(o: Any) -> Any:
    import numpy as np

    if isinstance(o, dict):
        return {str(k): _clean(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [_clean(v) for v in o]
    if o is None or type(o).__name__ == "NAType":
        return None
    if isinstance(o, (bool, np.bool_)):
        return bool(o)
    if isinstance(o, (int, np.integer)):
        return int(o)
    if isinstance(o, (float, np.floating)):
        return float(o) if math.isfinite(o) else None
    return o


def dumps(obj: Any) -> str:
    """JSON with NaN/inf written as null."""
    return json.dumps(_clean(obj), indent=2, allow_nan=False)
