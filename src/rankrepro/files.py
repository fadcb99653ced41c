"""Reading and writing the project's own files (records, cells, fingerprints, manifests, the
kept catalog, resolved configs) with damage named: a file that does not parse, holds NaN or
is not what it should be raises :class:`DamagedFile` ("<path>: <what is wrong>"), and an OS
error while writing (a full disk, a read-only folder) raises :class:`WriteFailed`, one line
naming the file, after the temporary file is removed (:func:`rankrepro.io.atomic_write`).

Apart from :mod:`rankrepro.io` on purpose: that module is in every cell's code fingerprint
(:mod:`rankrepro.pipeline.codeprint`), this one in none."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any, Callable

from .io import atomic_write as _atomic_write


class DamagedFile(ValueError):
    """A project file that cannot be read as what it should be."""

    def __init__(self, path: str | os.PathLike, problem: str):
        self.path, self.problem = str(path), problem
        super().__init__(f"{path}: {problem}")


class RecordMismatch(ValueError):
    """Records the report refuses: edited since they were written, or whose cells changed
    (raised by :func:`rankrepro.report.html.build_report`; here, where the command line catches
    it without importing the report)."""


class WriteFailed(OSError):
    """An OS error while writing a file, naming it (the partial file removed)."""

    def __init__(self, path: str | os.PathLike, err: OSError):
        super().__init__(err.errno, f"cannot write {path}: {err.strerror or err}")
        self.path = str(path)

    def __str__(self) -> str:
        return self.strerror


class ReadFailed(OSError):
    """An OS error while reading a file (permission denied, an I/O error), naming it."""

    def __init__(self, path: str | os.PathLike, err: OSError):
        super().__init__(err.errno, f"cannot read {path}: {err.strerror or err}")
        self.path = str(path)

    def __str__(self) -> str:
        return self.strerror


def os_error_named(err: OSError) -> OSError:
    """``err`` as one line naming its file: :class:`WriteFailed` / :class:`ReadFailed` stay as
    they are; another OS error becomes a :class:`ReadFailed` of the file it names."""
    if isinstance(err, (WriteFailed, ReadFailed)):
        return err
    return ReadFailed(err.filename if err.filename is not None else "(no file named)", err)


def _no_constant(name: str) -> Any:
    raise ValueError(f"it holds {name}, which is not a JSON number (a damaged or hand-edited file?)")


def _finite_float(text: str) -> float:
    x = float(text)
    if not math.isfinite(x):
        raise ValueError(f"it holds {text}, which overflows to {x} (a damaged or hand-edited file?)")
    return x


def read_json(path: str | os.PathLike, what: str = "file", kind: type | None = dict) -> Any:
    """A JSON file of the project, parsed strictly (no NaN or Infinity); raises
    :class:`DamagedFile` naming the file and what is wrong."""
    p = Path(path)
    try:
        text = p.read_bytes().decode("utf-8")
    except FileNotFoundError:
        raise DamagedFile(p, f"the {what} is missing") from None
    except UnicodeDecodeError as e:
        raise DamagedFile(p, f"the {what} is not UTF-8 text (byte {e.start})") from None
    except OSError as e:
        raise DamagedFile(p, f"the {what} cannot be read: {e.strerror or e}") from None
    try:
        data = json.loads(text, parse_constant=_no_constant, parse_float=_finite_float)
    except json.JSONDecodeError as e:
        ends_early = e.pos >= len(text.rstrip()) or e.msg.startswith("Unterminated string")  # no closing quote
        cut = " (the file ends early: truncated?)" if ends_early else ""
        raise DamagedFile(p, f"the {what} is not valid JSON: {e.msg} at line {e.lineno} column {e.colno}{cut}") from None
    except (ValueError, RecursionError) as e:
        raise DamagedFile(p, f"the {what} is not valid JSON: {e}") from None
    if kind is not None and not isinstance(data, kind):
        raise DamagedFile(p, f"the {what} holds a {type(data).__name__}, not a JSON {'object' if kind is dict else kind.__name__}")
    return data


def atomic_write(path: str | os.PathLike, write: Callable[[str], None]) -> None:
    """:func:`rankrepro.io.atomic_write` with an OS error named: one line, the file's path."""
    try:
        _atomic_write(path, write)
    except WriteFailed:
        raise
    except OSError as e:
        raise WriteFailed(path, e) from None


def write_text(path: str | os.PathLike, text: str) -> None:
    atomic_write(path, lambda tmp: Path(tmp).write_text(text, encoding="utf-8"))


def read_cell(path: str | os.PathLike):
    """A cell's results (parquet) as a pandas frame; raises :class:`DamagedFile` naming the file
    when it is missing, truncated or not a parquet table."""
    import pandas as pd

    try:
        return pd.read_parquet(path)
    except FileNotFoundError:
        raise DamagedFile(path, "the cell's results are missing") from None
    except Exception as e:  # noqa: BLE001 - pyarrow raises several kinds for a damaged file
        first = (str(e).splitlines() or [type(e).__name__])[0]
        raise DamagedFile(path, f"the cell's results are not a readable parquet table ({type(e).__name__}: "
                                f"{first[:200]})") from None
