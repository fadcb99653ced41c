"""Readers of the official formats: the shared structural checks, and the rating files.
Each reader returns typed arrays or a DataFrame and rejects malformed input with
:class:`ReaderError`, which names the file and the (1-based) line.  The relevance judgments,
queries and LETOR files are read by :mod:`rankrepro.data.ir_readers`, with the same checks.

Formats here:

* MovieLens 100K ``u.data``: ``user<TAB>item<TAB>rating<TAB>timestamp``;
* MovieLens 1M ``ratings.dat``: ``UserID::MovieID::Rating::Timestamp``; ``users.dat``,
  ``movies.dat``: ``::``-separated; the BPMF copy ``moviedata.mat``: ``train_vec`` and
  ``probe_vec``, rows of (user, movie, rating), no timestamps;
* EachMovie ``Vote.txt``: ``Person_ID<TAB>Movie_ID<TAB>Score<TAB>Weight<TAB>Modified`` with
  Score in {0, 0.2, ..., 1}.

Structural checks (every reader; a failure is a :class:`ReaderError` naming the line):
ids are integers >= 1 (timestamps >= 0) within int64; numbers are finite and, for LETOR
features, within +-1e12 (:data:`ABSURD`); no record is given twice (the same (user, item),
(query, doc) or (qid, docid)); the rows of one query are contiguous (LETOR files, OHSUMED
``judged``); every query has its text (cfquery ``QU``, OHSUMED ``.B`` and ``.W``) and no
field is given twice.  None of these faults occurs in the official files of the mirror
(``tests/test_data_readers.py`` reads them when present), so every one is an error, not a
warning; the policy is recorded in each processed manifest (:data:`STRUCTURE_POLICY`).
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd


class ReaderError(ValueError):
    """Malformed input: ``path`` and ``line`` (1-based; 0 when the file as a whole is bad)."""

    def __init__(self, path: str | os.PathLike, line: int, message: str):
        self.path = str(path)
        self.line = line
        super().__init__(f"{path}:{line}: {message}" if line else f"{path}: {message}")


#: largest magnitude accepted for a LETOR feature value (real features stay below 1e10)
ABSURD = 1e12
INT64_MAX = 2**63 - 1
#: widest feature index accepted when the format does not fix the width
MAX_FEATURES = 100_000

#: what each reader checks on the file as a whole, and what it does on a fault
STRUCTURE_POLICY = {
    "ratings": "error on: a duplicate (user, item); an id below 1; a timestamp below 0",
    "judgments": "error on: a duplicate (query, doc); a query id given twice or its rows split into blocks; "
                 "an id below 1; a query without text or NR (cfquery)",
    "queries": "error on: a duplicate .I; an id below 1; a query without .B or .W text; a field given twice",
    "letor": f"error on: a duplicate (qid, docid) within a file; a query's rows split into non-contiguous "
             f"blocks; a qid below 1; a feature value not finite or beyond +-{ABSURD:g}",
}


def _lines(path: str | os.PathLike, encoding: str = "latin-1"):
    p = Path(path)
    if not p.is_file():
        raise ReaderError(p, 0, "no such file")
    with open(p, encoding=encoding, newline=None) as fh:
        for i, line in enumerate(fh, start=1):
            yield i, line.rstrip("\n")


def _int(path, i, tok, what, lo: int | None = None, hi: int = INT64_MAX) -> int:
    """An ASCII integer in [lo, hi] (lo None: -hi..hi); ids pass ``lo=1``."""
    try:
        if "_" in tok:
            raise ValueError
        v = int(tok)
    except ValueError:
        raise ReaderError(path, i, f"{what} {tok[:40]!r} is not an integer") from None
    if lo is not None and v < lo:
        raise ReaderError(path, i, f"{what} {v} is below {lo}")
    if abs(v) > hi:
        raise ReaderError(path, i, f"{what} {tok[:40]} is out of range (|{what}| <= {hi})")
    return v


def _float(path, i, tok, what, bound: float | None = None) -> float:
    try:
        if "_" in tok:
            raise ValueError
        v = float(tok)
    except ValueError:
        raise ReaderError(path, i, f"{what} {tok[:40]!r} is not a number") from None
    if not math.isfinite(v):
        raise ReaderError(path, i, f"{what} {tok[:40]!r} is not finite")
    if bound is not None and abs(v) > bound:
        raise ReaderError(path, i, f"{what} {tok[:40]} is beyond +-{bound:g} (absurd for this field)")
    return v


def _first_duplicate(keys: list[np.ndarray]) -> tuple[int, int] | None:
    """(first, second) row of the earliest repeat of a key tuple in row order, or None."""
    n = keys[0].size
    if n < 2:
        return None
    order = np.lexsort(keys[::-1])
    same = np.ones(n - 1, dtype=bool)
    for k in keys:
        ks = k[order]
        same &= ks[1:] == ks[:-1]
    if not same.any():
        return None
    # within a run of equal keys lexsort keeps row order, so order[pos] is an earlier copy
    pos = np.flatnonzero(same)
    j = int(np.argmin(order[pos + 1]))
    k = int(pos[j])
    while k > 0 and same[k - 1]:  # back to the start of the run of equal keys: the first copy
        k -= 1
    return int(order[k]), int(order[pos[j] + 1])


def _check_unique(path, keys: list[np.ndarray], lines: np.ndarray, what: str) -> None:
    """Error at the second occurrence of a repeated key tuple (``lines``: 1-based line of each row)."""
    dup = _first_duplicate(keys)
    if dup is not None:
        first, second = dup
        key = ", ".join(str(k[second]) for k in keys)
        raise ReaderError(path, int(lines[second]), f"duplicate {what} = ({key}), first at line {int(lines[first])}")


def _check_blocks(path, qid: np.ndarray, lines: np.ndarray, what: str = "query") -> None:
    """Error where a query's rows resume after another query's (its rows must be contiguous)."""
    if qid.size < 2:
        return
    starts = np.flatnonzero(np.r_[True, qid[1:] != qid[:-1]])
    q = qid[starts]
    order = np.argsort(q, kind="stable")
    rep = np.flatnonzero(q[order][1:] == q[order][:-1])
    if rep.size:
        j = int(min(order[rep + 1]))
        prev = int(np.flatnonzero(q[:j] == q[j])[0])
        raise ReaderError(path, int(lines[starts[j]]), f"rows of {what} {q[j]} resume here after other {what} rows "
                                                       f"(its block began at line {int(lines[starts[prev]])}); "
                                                       f"the rows of one {what} must be contiguous")


# -------------------------------------------------------------------------------------
# ratings
# -------------------------------------------------------------------------------------
@dataclass
class Ratings:
    """A rating table in file order.  ``time`` is -1 where the source has none."""

    user: np.ndarray
    item: np.ndarray
    score: np.ndarray
    time: np.ndarray
    scale: tuple[float, ...] = field(default=())

    def __len__(self) -> int:
        return self.user.size


def _ratings(path, cols, lines, scale) -> Ratings:
    u, m, r, t = cols
    if not u:
        raise ReaderError(path, 0, "no ratings")
    out = Ratings(np.array(u, dtype=np.int64), np.array(m, dtype=np.int64), np.array(r, dtype=np.float64),
                  np.array(t, dtype=np.int64), scale)
    _check_unique(path, [out.user, out.item], np.asarray(lines), "(user, item)")
    return out


def _check_score(path, i, v, allowed):
    if not any(abs(v - s) < 1e-9 for s in allowed):
        raise ReaderError(path, i, f"score {v!r} is not one of {allowed}")


def _read_rating_lines(path, sep, fields, names, scale, time_of):
    cols, lines = ([], [], [], []), []
    for i, line in _lines(path):
        if not line.strip():
            continue
        tok = line.split(sep)
        if len(tok) != fields:
            what = "tab-separated" if sep == "\t" else f"{sep!r}-separated"
            raise ReaderError(path, i, f"expected {fields} {what} fields ({' '.join(names)}), got {len(tok)}")
        u, m = _int(path, i, tok[0], names[0], lo=1), _int(path, i, tok[1], names[1], lo=1)
        r = _float(path, i, tok[2], names[2])
        _check_score(path, i, r, scale)
        t = time_of(i, tok)
        for c, v in zip(cols, (u, m, r, t)):
            c.append(v)
        lines.append(i)
    return _ratings(path, cols, lines, scale)


def read_movielens_100k(path) -> Ratings:
    return _read_rating_lines(path, "\t", 4, ("user", "item", "rating", "timestamp"), (1.0, 2.0, 3.0, 4.0, 5.0),
                              lambda i, tok: _int(path, i, tok[3], "timestamp", lo=0))


def read_movielens_1m(path) -> Ratings:
    return _read_rating_lines(path, "::", 4, ("UserID", "MovieID", "rating", "Timestamp"),
                              (1.0, 2.0, 3.0, 4.0, 5.0), lambda i, tok: _int(path, i, tok[3], "Timestamp", lo=0))


_MI = {1: "i1", 2: "u1", 3: "i2", 4: "u2", 5: "i4", 6: "u4", 7: "f4", 9: "f8", 12: "i8", 13: "u8"}
_MX_NUMERIC = set(range(6, 16))  # mxDOUBLE_CLASS .. mxUINT64_CLASS
_MAT_MAX_INFLATED = 1 << 30


class _MatError(Exception):
    pass


def _mat_tag(buf: bytes, pos: int, end: int, bo: str) -> tuple[int, int, int, int]:
    """(type, nbytes, data start, next element) of the element at ``pos`` (small format too)."""
    if pos + 8 > end:
        raise _MatError(f"element tag at byte {pos} runs past the end")
    t, n = np.frombuffer(buf, dtype=bo + "u4", count=2, offset=pos)
    t, n = int(t), int(n)
    if t >> 16:  # small data element: 2-byte size, 2-byte type, 4 bytes of data
        n, t = t >> 16, t & 0xFFFF
        if n > 4:
            raise _MatError(f"small element at byte {pos} claims {n} bytes")
        return t, n, pos + 4, pos + 8
    if pos + 8 + n > end:
        raise _MatError(f"element at byte {pos} claims {n} bytes, past the end of its container")
    return t, n, pos + 8, pos + 8 + n


def _mat_matrix(buf: bytes, pos: int, end: int, bo: str) -> tuple[str, np.ndarray | None]:
    """(name, array) of a miMATRIX body; array None for a class that is not a numeric matrix."""
    sub, base = [], pos
    while pos < end and len(sub) < 5:
        t, n, d, nxt = _mat_tag(buf, pos, end, bo)
        sub.append((t, n, d))
        pos = nxt + (-(nxt - base) % 8)  # sub-elements are padded to 8 bytes
    if len(sub) < 3 or sub[0][0] != 6 or sub[0][1] < 8 or sub[1][0] != 5:
        raise _MatError("matrix without array flags, dimensions and name")
    flags = int(np.frombuffer(buf, dtype=bo + "u4", count=1, offset=sub[0][2])[0])
    dims = np.frombuffer(buf, dtype=bo + "i4", count=sub[1][1] // 4, offset=sub[1][2])
    name = bytes(buf[sub[2][2]:sub[2][2] + sub[2][1]]).decode("latin-1")
    cls = flags & 0xFF
    if cls not in _MX_NUMERIC or flags & 0x0800 or len(sub) < 4:  # not a real numeric matrix
        return name, None
    t, n, d = sub[3]
    if t not in _MI:
        raise _MatError(f"variable {name!r}: data type {t} is not numeric")
    if (dims < 0).any():
        raise _MatError(f"variable {name!r}: negative dimension {dims.tolist()}")
    dt = np.dtype(bo + _MI[t])
    count = int(np.prod(dims.astype(object))) if dims.size else 0
    if n != count * dt.itemsize:
        raise _MatError(f"variable {name!r}: {n} data bytes for dimensions {dims.tolist()}")
    a = np.frombuffer(buf, dtype=dt, count=count, offset=d)
    return name, a.reshape(tuple(int(x) for x in dims), order="F").astype(np.float64)


def _read_mat5(path) -> dict[str, np.ndarray | None]:
    """The numeric matrices of a MATLAB 5/7 file (compressed or not).  A small parser of our
    own: scipy's loader can crash the interpreter on corrupt bytes; this one only raises."""
    import zlib

    buf = Path(path).read_bytes()
    if len(buf) < 128:
        raise _MatError("shorter than the 128-byte MATLAB 5 header")
    bo = {b"IM": "<", b"MI": ">"}.get(buf[126:128])
    if bo is None or not buf.startswith(b"MATLAB 5.0 MAT-file"):
        raise _MatError("not a MATLAB 5.0 MAT-file (header or endian indicator)")
    out: dict[str, np.ndarray | None] = {}
    pos, end = 128, len(buf)
    while pos < end:
        t, n, d, nxt = _mat_tag(buf, pos, end, bo)
        body, b0, b1 = buf, d, d + n
        if t == 15:  # miCOMPRESSED: one zlib stream holding one element
            z = zlib.decompressobj()
            try:
                body = z.decompress(buf[d:d + n], _MAT_MAX_INFLATED)
            except zlib.error as e:
                raise _MatError(f"compressed element at byte {pos}: {e}") from None
            if z.unconsumed_tail:
                raise _MatError(f"compressed element at byte {pos} inflates beyond {_MAT_MAX_INFLATED} bytes")
            t, n, b0, _ = _mat_tag(body, 0, len(body), bo)
            b1 = b0 + n
        if t == 14:
            name, a = _mat_matrix(body, b0, b1, bo)
            out[name] = a
        pos = nxt
    return out


def read_movielens_bpmf(path) -> Ratings:
    """The BPMF ``moviedata.mat``: train_vec then probe_vec, in file order, no timestamps.
    A bad row is named as ``<variable> row <k>`` (the file has no lines)."""
    if not Path(path).is_file():
        raise ReaderError(path, 0, "no such file")
    try:
        m = _read_mat5(path)
    except _MatError as e:
        raise ReaderError(path, 0, f"not a readable MATLAB file ({e})") from None
    parts = []
    for key in ("train_vec", "probe_vec"):
        if key not in m:
            raise ReaderError(path, 0, f"variable {key!r} missing")
        a = m[key]
        if a is None:
            raise ReaderError(path, 0, f"{key} is not a real numeric matrix")
        if a.ndim != 2 or a.shape[1] != 3:
            raise ReaderError(path, 0, f"{key} must have 3 columns (user, movie, rating), has shape {a.shape}")
        if a.dtype.kind not in "iuf":
            raise ReaderError(path, 0, f"{key} must be numeric, is {a.dtype}")
        a = a.astype(np.float64)
        for c, what, lo, hi in ((0, "user", 1, 2**53), (1, "movie", 1, 2**53), (2, "rating", 1, 5)):
            col = a[:, c]
            bad = np.flatnonzero(~np.isfinite(col) | (col != np.round(col)) | (col < lo) | (col > hi))
            if bad.size:
                rng = "1..5" if c == 2 else f"{lo}..2**53"
                raise ReaderError(path, 0, f"{key} row {bad[0] + 1}: {what} {float(col[bad[0]])!r} is not an "
                                           f"integer or lies outside {rng}")
        parts.append(a.astype(np.int64))
    a = np.vstack(parts)
    if a.shape[0] == 0:
        raise ReaderError(path, 0, "no ratings")
    dup = _first_duplicate([a[:, 0], a[:, 1]])
    if dup is not None:
        n_train = parts[0].shape[0]
        at = [f"train_vec row {r + 1}" if r < n_train else f"probe_vec row {r - n_train + 1}" for r in dup]
        raise ReaderError(path, 0, f"{at[1]}: duplicate (user, movie) = ({a[dup[1], 0]}, {a[dup[1], 1]}), "
                                   f"first at {at[0]}")
    return Ratings(a[:, 0], a[:, 1], a[:, 2].astype(np.float64), np.full(len(a), -1, dtype=np.int64),
                   (1.0, 2.0, 3.0, 4.0, 5.0))


#: EachMovie's Modified: a calendar date and time; pandas alone would also take 'now', 'today'
#: or a bare year, which are not dates of a vote
_DATETIME = re.compile(r"\d{4}-\d{2}-\d{2}(?:[ T]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?)?")


def _eachmovie_time(path, i, tok) -> int:
    # Modified is a date-time; keep the order of the file, parse to epoch seconds
    if not _DATETIME.fullmatch(tok[4].strip()):
        raise ReaderError(path, i, f"Modified {tok[4][:40]!r} is not a date-time (YYYY-MM-DD[ hh:mm[:ss]])")
    try:
        t = int(pd.Timestamp(tok[4].strip()).timestamp())
    except Exception:  # pandas raises several types for impossible dates (month 13, ...)
        raise ReaderError(path, i, f"Modified {tok[4][:40]!r} is not a date-time") from None
    if t < 0:
        raise ReaderError(path, i, f"Modified {tok[4][:40]!r} is before 1970")
    return t


def read_eachmovie_votes(path) -> Ratings:
    def time_of(i, tok):
        w = _float(path, i, tok[3], "Weight")
        if w < 0:
            raise ReaderError(path, i, f"Weight {w:g} is negative")
        return _eachmovie_time(path, i, tok)

    return _read_rating_lines(path, "\t", 5, ("Person_ID", "Movie_ID", "Score", "Weight", "Modified"),
                              (0.0, 0.2, 0.4, 0.6, 0.8, 1.0), time_of)


def read_colon_table(path, names: list[str]) -> pd.DataFrame:
    """``users.dat`` / ``movies.dat`` of MovieLens 1M (first field an integer id >= 1, unique)."""
    rows, lines = [], []
    for i, line in _lines(path):
        if not line.strip():
            continue
        tok = line.split("::")
        if len(tok) != len(names):
            raise ReaderError(path, i, f"expected {len(names)} '::'-separated fields, got {len(tok)}")
        rows.append([_int(path, i, tok[0], names[0], lo=1), *tok[1:]])
        lines.append(i)
    if not rows:
        raise ReaderError(path, 0, "no records")
    df = pd.DataFrame(rows, columns=names)
    _check_unique(path, [df[names[0]].to_numpy(dtype=np.int64)], np.asarray(lines), names[0])
    return df
