"""Readers of the official formats.  Each returns typed arrays or a DataFrame and rejects
malformed input with :class:`ReaderError`, which names the file and the (1-based) line.

Formats:

* MovieLens 100K ``u.data``: ``user<TAB>item<TAB>rating<TAB>timestamp``;
* MovieLens 1M ``ratings.dat``: ``UserID::MovieID::Rating::Timestamp``; ``users.dat``,
  ``movies.dat``: ``::``-separated; the BPMF copy ``moviedata.mat``: ``train_vec`` and
  ``probe_vec``, rows of (user, movie, rating), no timestamps;
* EachMovie ``Vote.txt``: ``Person_ID<TAB>Movie_ID<TAB>Score<TAB>Weight<TAB>Modified`` with
  Score in {0, 0.2, ..., 1};
* Cystic Fibrosis ``cfquery``: records ``QN``, ``QU``, ``NR``, ``RD``; RD lists
  ``<doc> <4 digits>`` pairs, one 0-2 score per judge (REW, REW's colleagues, REW's
  post-doctorate associate, JBW);
* OHSUMED ``queries``: ``.I``, ``.B``, ``.W`` fields; ``judged`` (readme item 11): per line a
  query number, a document sequential id, a MEDLINE UI and up to three judgments d/p/n
  (relevance1..3, '-' or absent when not judged) -- the readme does not print the column
  layout, so this layout is an assumption, stated wherever it is used;
* LETOR / SVMlight ``label qid:Q i:v ... [#comment]`` (LETOR 2.0-4.0, TD2003/TD2004, MQ2008,
  MSLR, Yahoo! LTR; sparse lines allowed), and the mirror's re-serialised LETOR 2.0 layout
  ``qid<TAB>qid_docid<TAB>n space-separated values<TAB>label``.
"""

from __future__ import annotations

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


#: identifiers (users, items, queries, documents) are integers in 1..ID_MAX
ID_MAX = 2**31 - 1
#: a feature value or weight beyond this magnitude is refused as absurd (no official file comes near)
ABSURD = 1e12
#: timestamps are seconds since 1970 up to 2**35 (the year 3058)
TIME_MAX = 2**35
#: the widest feature vector accepted when the format does not fix it
MAX_FEATURES = 100_000

STRUCTURE_POLICY = (
    "every record is checked: identifiers in 1..2^31-1, no duplicate record ((user, item), (query, doc) or "
    "(qid, docid)), each query's rows in one contiguous block, every value finite and below 1e12 in magnitude; "
    "any fault is an error naming file:line (none was found in the official files, so nothing is dropped, "
    "kept or merged)")

_INT_RE = re.compile(r"[+-]?[0-9]+")
_NUM_RE = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]{1,3})?")


def _lines(path: str | os.PathLike, encoding: str = "latin-1"):
    p = Path(path)
    if not p.is_file():
        raise ReaderError(p, 0, "no such file")
    with open(p, encoding=encoding, newline=None) as fh:
        for i, line in enumerate(fh, start=1):
            yield i, line.rstrip("\n")


def _int(path, i, tok, what, lo: int = -(2**62), hi: int = 2**62) -> int:
    t = tok.strip()
    if not _INT_RE.fullmatch(t):
        raise ReaderError(path, i, f"{what} {tok[:40]!r} is not an integer")
    if len(t) > 24:  # beyond any bound used here (and int() refuses over 4,300 digits)
        raise ReaderError(path, i, f"{what} {t[:24]}... ({len(t)} digits) outside {lo}..{hi}")
    v = int(t)
    if not lo <= v <= hi:
        raise ReaderError(path, i, f"{what} {v} outside {lo}..{hi}")
    return v


def _id(path, i, tok, what) -> int:
    return _int(path, i, tok, what, 1, ID_MAX)


def _float(path, i, tok, what, bound: float = ABSURD) -> float:
    t = tok.strip()
    if not _NUM_RE.fullmatch(t):
        kind = "is not finite" if t.lower().lstrip("+-") in ("nan", "inf", "infinity") else "is not a number"
        raise ReaderError(path, i, f"{what} {tok[:40]!r} {kind}")
    v = float(t)
    if not abs(v) <= bound:
        raise ReaderError(path, i, f"{what} {t[:40]} beyond the plausible magnitude {bound:g}")
    return v


class _Structure:
    """Whole-file checks while reading: duplicate keys and queries split into blocks."""

    def __init__(self, path, what: str):
        self.path, self.what = path, what
        self.seen: dict = {}
        self.closed: dict = {}
        self.block, self.block_line = None, 0

    def unique(self, i: int, key, label: str | None = None) -> None:
        first = self.seen.get(key)
        if first is not None:
            where = "earlier on the same line" if first == i else f"first at line {first}"
            raise ReaderError(self.path, i, f"duplicate {label or self.what} {key}: {where}")
        self.seen[key] = i

    def contiguous(self, i: int, q) -> None:
        if q == self.block:
            self.block_line = i
            return
        if self.block is not None:
            self.closed[self.block] = self.block_line
        if q in self.closed:
            raise ReaderError(self.path, i, f"query {q}: its rows are split into non-contiguous blocks "
                                            f"(an earlier block ends at line {self.closed[q]})")
        self.block, self.block_line = q, i


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


def _ratings(path, rows, scale, check) -> Ratings:
    if not rows:
        raise ReaderError(path, 0, "no ratings")
    a = np.array(rows, dtype=np.float64)
    return Ratings(a[:, 0].astype(np.int64), a[:, 1].astype(np.int64), a[:, 2], a[:, 3].astype(np.int64), scale)


def _check_score(path, i, v, allowed):
    if not any(abs(v - s) < 1e-9 for s in allowed):
        raise ReaderError(path, i, f"score {v!r} is not one of {allowed}")


def _rating_row(path, i, st: _Structure, user, item, r, t, scale, names=("user", "item", "rating", "timestamp")):
    u, m = _id(path, i, user, names[0]), _id(path, i, item, names[1])
    v = _float(path, i, r, names[2])
    _check_score(path, i, v, scale)
    st.unique(i, (u, m))
    return u, m, v, t


def read_movielens_100k(path) -> Ratings:
    rows = []
    scale = (1.0, 2.0, 3.0, 4.0, 5.0)
    st = _Structure(path, "(user, item) rating")
    for i, line in _lines(path):
        if not line.strip():
            continue
        tok = line.split("\t")
        if len(tok) != 4:
            raise ReaderError(path, i, f"expected 4 tab-separated fields (user item rating timestamp), got {len(tok)}")
        t = _int(path, i, tok[3], "timestamp", 0, TIME_MAX)
        rows.append(_rating_row(path, i, st, tok[0], tok[1], tok[2], t, scale))
    return _ratings(path, rows, scale, None)


def read_movielens_1m(path) -> Ratings:
    rows = []
    scale = (1.0, 2.0, 3.0, 4.0, 5.0)
    st = _Structure(path, "(UserID, MovieID) rating")
    for i, line in _lines(path):
        if not line.strip():
            continue
        tok = line.split("::")
        if len(tok) != 4:
            raise ReaderError(path, i, f"expected UserID::MovieID::Rating::Timestamp, got {len(tok)} fields")
        t = _int(path, i, tok[3], "Timestamp", 0, TIME_MAX)
        rows.append(_rating_row(path, i, st, tok[0], tok[1], tok[2], t, scale,
                                ("UserID", "MovieID", "rating", "Timestamp")))
    return _ratings(path, rows, scale, None)


_MI = {1: "i1", 2: "u1", 3: "i2", 4: "u2", 5: "i4", 6: "u4", 7: "f4", 9: "f8", 12: "i8", 13: "u8"}
_MX = {6: "f8", 7: "f4", 8: "i1", 9: "u1", 10: "i2", 11: "u2", 12: "i4", 13: "u4", 14: "i8", 15: "u8"}
_MAT_MAX_BYTES = 2**31  # a compressed element may not inflate beyond this (a zip bomb is refused)


def read_mat_numeric(path) -> dict[str, np.ndarray]:
    """The real numeric 2-D matrices of a MATLAB v5 file (``-v6``/``-v7``, compressed or not),
    by name; other variables (text, cells, structs, sparse, complex) are skipped.

    Written out, rather than :func:`scipy.io.loadmat`, because a corrupted file can make
    scipy's compiled reader crash the process (a segmentation fault on about 2% of files with
    a few bytes zeroed); every length here is checked against the bytes that are there.
    """
    import struct
    import zlib

    p = Path(path)
    if not p.is_file():
        raise ReaderError(p, 0, "no such file")
    buf = p.read_bytes()
    if len(buf) < 128 or buf[126:128] not in (b"IM", b"MI") or not buf.startswith(b"MATLAB 5.0 MAT-file"):
        raise ReaderError(path, 0, "not a MATLAB 5.0 MAT-file (no v5 header: a v4 or v7.3/HDF5 file, or not MATLAB at all)")
    end = "<" if buf[126:128] == b"IM" else ">"

    def bad(msg):
        return ReaderError(path, 0, f"not a readable MATLAB file ({msg})")

    def element(b: bytes, off: int) -> tuple[int, bytes, int]:
        """(type, data, offset of the next element) of the data element at ``off``."""
        if off + 8 > len(b):
            raise bad(f"element tag cut at byte {off}")
        t, n = struct.unpack(end + "II", b[off:off + 8])
        if t >> 16:  # small data element: 2-byte length, 2-byte type, data in the tag's last 4 bytes
            n, t = t >> 16, t & 0xFFFF
            if n > 4:
                raise bad(f"small element of {n} bytes at byte {off}")
            return t, b[off + 4:off + 4 + n], off + 8
        if off + 8 + n > len(b):
            raise bad(f"element at byte {off} claims {n} bytes, {len(b) - off - 8} remain")
        nxt = off + 8 + n
        return t, b[off + 8:nxt], (nxt if t == 15 else nxt + (-nxt) % 8)

    def matrix(b: bytes):
        t, flags, off = element(b, 0)
        if t != 6 or len(flags) != 8:
            raise bad("array flags missing")
        cls = struct.unpack(end + "I", flags[:4])[0]
        is_complex, cls = bool(cls & 0x0800), cls & 0xFF
        t, dims, off = element(b, off)
        if t != 5 or not dims or len(dims) % 4:
            raise bad("dimensions missing")
        dims = struct.unpack(end + f"{len(dims) // 4}i", dims)
        t, name, off = element(b, off)
        if t != 1:
            raise bad("array name missing")
        name = name.decode("latin-1")
        if cls not in _MX or is_complex or len(dims) != 2 or min(dims) < 0:
            return name, None
        t, data, off = element(b, off)
        if t not in _MI:
            raise bad(f"variable {name!r}: data of unknown type {t}")
        itemsize = int(_MI[t][1])
        if len(data) != dims[0] * dims[1] * itemsize:
            raise bad(f"variable {name!r}: {len(data)} bytes for a {dims[0]}x{dims[1]} matrix")
        a = np.frombuffer(data, dtype=end + _MI[t]).astype(_MX[cls]).reshape(dims, order="F")
        return name, a

    out: dict[str, np.ndarray] = {}
    off = 128
    while off < len(buf):
        t, data, off = element(buf, off)
        if t == 15:
            z = zlib.decompressobj()
            try:
                data = z.decompress(data, _MAT_MAX_BYTES)
            except zlib.error as e:
                raise bad(f"compressed element: {e}") from None
            if z.unconsumed_tail:
                raise bad(f"a compressed element inflates beyond {_MAT_MAX_BYTES} bytes")
            t, data, _ = element(data, 0)
        if t != 14:
            raise bad(f"top-level element of type {t}, expected a matrix")
        name, a = matrix(data)
        if a is not None:
            out[name] = a
    return out


def read_movielens_bpmf(path) -> Ratings:
    """The BPMF ``moviedata.mat``: train_vec then probe_vec, in file order, no timestamps."""
    m = read_mat_numeric(path)
    parts = []
    for key in ("train_vec", "probe_vec"):
        if key not in m:
            raise ReaderError(path, 0, f"numeric matrix {key!r} missing")
        a = np.asarray(m[key])
        if a.ndim != 2 or a.shape[1] != 3:
            raise ReaderError(path, 0, f"{key} must have 3 columns (user, movie, rating), has shape {a.shape}")
        with np.errstate(invalid="ignore"):
            bad = np.flatnonzero(~np.all(np.isfinite(a) & (a == np.round(a)) & (a >= 1) & (a <= ID_MAX), axis=1))
        if bad.size:
            raise ReaderError(path, 0, f"{key} row {bad[0] + 1}: {a[bad[0]].tolist()} is not three integers "
                                       f"in 1..{ID_MAX} (user, movie, rating)")
        parts.append((key, a.astype(np.int64)))
    a = np.vstack([p for _, p in parts])
    bad = np.flatnonzero((a[:, 2] < 1) | (a[:, 2] > 5))
    if bad.size:
        raise ReaderError(path, 0, f"row {bad[0] + 1}: rating {a[bad[0], 2]} outside 1..5")
    key = a[:, 0] * (ID_MAX + 1) + a[:, 1]
    order = np.argsort(key, kind="stable")
    d = np.flatnonzero(key[order][1:] == key[order][:-1])
    if d.size:
        second = order[d + 1]
        j = int(np.argmin(second))
        first, dup = int(order[d[j]]), int(second[j])
        raise ReaderError(path, 0, f"duplicate (user, movie) rating {tuple(a[dup, :2].tolist())}: rows {first + 1} "
                                   f"and {dup + 1} of train_vec then probe_vec")
    return Ratings(a[:, 0], a[:, 1], a[:, 2].astype(np.float64), np.full(len(a), -1, dtype=np.int64),
                   (1.0, 2.0, 3.0, 4.0, 5.0))


_DATETIME = re.compile(r"\d{4}-\d{2}-\d{2}(?:[ T]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?)?")


def read_eachmovie_votes(path) -> Ratings:
    rows = []
    scale = (0.0, 0.2, 0.4, 0.6, 0.8, 1.0)
    st = _Structure(path, "(Person_ID, Movie_ID) vote")
    for i, line in _lines(path):
        if not line.strip():
            continue
        tok = line.split("\t")
        if len(tok) != 5:
            raise ReaderError(path, i, f"expected 5 tab-separated fields (Person_ID Movie_ID Score Weight Modified), "
                                       f"got {len(tok)}")
        w = _float(path, i, tok[3], "Weight")
        if w < 0:
            raise ReaderError(path, i, f"Weight {w} is negative")
        # Modified is a date-time; keep the order of the file, parse to epoch seconds
        if not _DATETIME.fullmatch(tok[4].strip()):
            raise ReaderError(path, i, f"Modified {tok[4][:40]!r} is not a date-time (YYYY-MM-DD[ hh:mm[:ss]])")
        try:
            t = int(pd.Timestamp(tok[4].strip()).timestamp())
        except Exception:  # pandas raises several types for impossible dates (month 13, ...)
            raise ReaderError(path, i, f"Modified {tok[4]!r} is not a date-time") from None
        if not 0 <= t <= TIME_MAX:
            raise ReaderError(path, i, f"Modified {tok[4]!r} is before 1970 or after 3058")
        rows.append(_rating_row(path, i, st, tok[0], tok[1], tok[2], t, scale,
                                ("Person_ID", "Movie_ID", "Score", "Modified")))
    return _ratings(path, rows, scale, None)


def read_colon_table(path, names: list[str]) -> pd.DataFrame:
    """``users.dat`` / ``movies.dat`` of MovieLens 1M (first field an integer id, unique)."""
    rows = []
    st = _Structure(path, names[0])
    for i, line in _lines(path):
        if not line.strip():
            continue
        tok = line.split("::")
        if len(tok) != len(names):
            raise ReaderError(path, i, f"expected {len(names)} '::'-separated fields, got {len(tok)}")
        k = _id(path, i, tok[0], names[0])
        st.unique(i, k)
        rows.append([k, *tok[1:]])
    if not rows:
        raise ReaderError(path, 0, "no records")
    return pd.DataFrame(rows, columns=names)


# -------------------------------------------------------------------------------------
# Cystic Fibrosis and OHSUMED
# -------------------------------------------------------------------------------------
@dataclass
class Judgments:
    """Judged query-document pairs; ``scores`` has one column per judge, -1 = not judged."""

    query: np.ndarray
    doc: np.ndarray
    scores: np.ndarray
    judges: tuple[str, ...]


_RD_SCORES = re.compile(r"[012]{4}")


def read_cfquery(path) -> Judgments:
    """Every RD record of every query; checks each query's NR against its RD count.  Each query
    has one QN (unique, >= 1), a QU text and one NR; documents are unique within a query."""
    q_ids, docs, scores = [], [], []
    cur: dict | None = None
    field_ = None
    queries = _Structure(path, "query number QN")
    pairs = _Structure(path, "(query, document) pair")

    def close():
        if cur is None:
            return
        if cur["nr"] is None:
            raise ReaderError(path, cur["line"], f"query {cur['q']}: no NR record")
        if not cur["qu"]:
            raise ReaderError(path, cur["line"], f"query {cur['q']}: no QU text")
        if cur["nr"] != cur["n"]:
            raise ReaderError(path, cur["line"], f"query {cur['q']}: NR says {cur['nr']} documents, RD lists {cur['n']}")

    for i, line in _lines(path):
        if not line.strip():
            continue
        tag = line[:2] if line[:2].strip() else None
        body = line[2:] if tag else line
        if tag is not None and tag not in ("QN", "QU", "NR", "RD"):
            raise ReaderError(path, i, f"unknown field {tag!r}")
        if tag is not None and tag != "QN" and cur is None:
            raise ReaderError(path, i, f"{tag} before any QN")
        if tag:
            if tag != "QN" and cur[tag]:
                raise ReaderError(path, i, f"query {cur['q']}: a second {tag} record")
            field_ = tag
        if tag == "QN":
            close()
            q = _id(path, i, body, "QN")
            queries.unique(i, q)
            cur = {"q": q, "nr": None, "n": 0, "line": i, "QU": False, "NR": False, "RD": False, "qu": ""}
        elif tag == "NR":
            cur["NR"] = True
            cur["nr"] = _int(path, i, body, "NR", 0, ID_MAX)
        elif field_ == "QU":
            cur["QU"] = True
            cur["qu"] += body.strip()
        elif field_ == "RD":
            cur["RD"] = True
            tok = body.split()
            if len(tok) % 2:
                raise ReaderError(path, i, "RD entries come in pairs '<doc> <4 scores>'")
            for d, sc in zip(tok[::2], tok[1::2]):
                doc = _id(path, i, d, "document number")
                if not _RD_SCORES.fullmatch(sc):
                    raise ReaderError(path, i, f"relevance scores {sc[:40]!r} must be four digits 0-2")
                pairs.unique(i, (cur["q"], doc))
                q_ids.append(cur["q"])
                docs.append(doc)
                scores.append([int(c) for c in sc])
                cur["n"] += 1
        else:  # a continuation line of QN or NR
            raise ReaderError(path, i, f"continuation line after {field_}: only QU and RD run over several lines")
    close()
    if not q_ids:
        raise ReaderError(path, 0, "no RD records")
    return Judgments(np.array(q_ids, dtype=np.int64), np.array(docs, dtype=np.int64),
                     np.array(scores, dtype=np.int8), ("REW", "REW colleagues", "REW post-doctorate", "JBW"))


def read_ohsumed_queries(path) -> pd.DataFrame:
    """``.I <id>`` then ``.B`` and ``.W`` fields (each at most once, text on the following lines);
    ids unique and >= 1; a query without ``.W`` text is an error."""
    rows, cur, field_ = [], None, None
    ids = _Structure(path, "query .I")

    def close():
        if cur is not None and not cur["W"]:
            raise ReaderError(path, cur["line"], f"query {cur['id']}: no .W text")

    for i, line in _lines(path):
        if line.startswith("."):
            head = line.split(maxsplit=1)[0]
            if head == ".I":
                tok = line.split()
                if len(tok) != 2:
                    raise ReaderError(path, i, "'.I' must be followed by one sequential identifier")
                close()
                cur = {"id": _id(path, i, tok[1], ".I"), "B": [], "W": [], "line": i, "seen": set()}
                ids.unique(i, cur["id"])
                rows.append(cur)
                field_ = None
            elif head in (".B", ".W") and line.strip() == head:
                if cur is None:
                    raise ReaderError(path, i, f"{head} before any .I")
                field_ = head[1]
                if field_ in cur["seen"]:
                    raise ReaderError(path, i, f"query {cur['id']}: a second {head}")
                cur["seen"].add(field_)
            else:
                raise ReaderError(path, i, f"unknown field {head[:40]!r}")
        elif not line.strip():
            continue
        elif field_ is None:
            raise ReaderError(path, i, "text outside a .B or .W field")
        else:
            cur[field_].append(line.strip())
    close()
    if not rows:
        raise ReaderError(path, 0, "no queries")
    return pd.DataFrame([{"id": r["id"], "B": " ".join(r["B"]), "W": " ".join(r["W"])} for r in rows],
                        columns=["id", "B", "W"])


_DPN = {"d": 2, "p": 1, "n": 0, "-": -1}


def read_ohsumed_judged(path) -> Judgments:
    """``judged``: query, document .I, MEDLINE UI, relevance1..3 (d/p/n, '-' or absent = not
    judged).  Scores: d = 2, p = 1, n = 0, -1 = not judged (the assumed column layout).  Each
    (query, document) once; a query's lines in one block."""
    q, d, s = [], [], []
    st = _Structure(path, "(query, document) judgment")
    for i, line in _lines(path):
        if not line.strip():
            continue
        tok = line.split()
        if len(tok) < 4 or len(tok) > 6:
            raise ReaderError(path, i, f"expected query doc UI and 1-3 judgments, got {len(tok)} fields")
        qq, dd = _id(path, i, tok[0], "query"), _id(path, i, tok[1], "document")
        _id(path, i, tok[2], "MEDLINE UI")
        js = []
        for t in tok[3:]:
            if t not in _DPN:
                raise ReaderError(path, i, f"judgment {t[:40]!r} is not d, p, n or -")
            js.append(_DPN[t])
        if all(j < 0 for j in js):
            raise ReaderError(path, i, "no judgment on the line")
        st.contiguous(i, qq)
        st.unique(i, (qq, dd))
        q.append(qq)
        d.append(dd)
        s.append(js + [-1] * (3 - len(js)))
    if not q:
        raise ReaderError(path, 0, "no judgments")
    return Judgments(np.array(q, dtype=np.int64), np.array(d, dtype=np.int64), np.array(s, dtype=np.int8),
                     ("relevance1", "relevance2", "relevance3"))


# -------------------------------------------------------------------------------------
# LETOR / SVMlight
# -------------------------------------------------------------------------------------
@dataclass
class LetorData:
    X: np.ndarray  # (n, n_features) float64, absent sparse entries = 0
    y: np.ndarray  # int labels
    qid: np.ndarray  # int query ids
    docid: np.ndarray  # str document ids ('' where the file gives none)


_DOCID = re.compile(r"docid\s*=\s*(\S+)")


def read_letor(path, n_features: int | None = None, max_label: int | None = None) -> LetorData:
    """``label qid:Q i:v ... [#comment]``.  ``n_features`` fixes the width (an index beyond it
    is an error); otherwise the largest index seen (at most MAX_FEATURES).  Feature indices
    start at 1; qids >= 1; a query's lines form one block; a (qid, docid) pair appears once
    (when the comment names the document); |value| <= 1e12."""
    ys, qs, docs, rows, cols, vals = [], [], [], [], [], []
    n = 0
    width_max = n_features if n_features is not None else MAX_FEATURES
    top = max_label if max_label is not None else 127
    st = _Structure(path, "(qid, docid) pair")
    for i, line in _lines(path):
        body, _, comment = line.partition("#")
        tok = body.split()
        if not tok:
            continue
        lab = _int(path, i, tok[0], "label", -(2**62), 2**62)
        if not 0 <= lab <= top:
            raise ReaderError(path, i, f"label {lab} outside 0..{top}")
        if len(tok) < 2 or not tok[1].startswith("qid:"):
            raise ReaderError(path, i, "second field must be qid:<integer>")
        q = _id(path, i, tok[1][4:], "qid")
        last = 0
        for t in tok[2:]:
            k, sep, v = t.partition(":")
            if not sep:
                raise ReaderError(path, i, f"feature {t[:40]!r} is not index:value")
            idx = _int(path, i, k, "feature index")
            if idx <= last:
                raise ReaderError(path, i, f"feature index {idx} not increasing")
            if idx > width_max:
                what = "of this format" if n_features is not None else "accepted without a fixed width"
                raise ReaderError(path, i, f"feature index {idx} beyond the {width_max} features {what}")
            last = idx
            rows.append(n)
            cols.append(idx - 1)
            vals.append(_float(path, i, v, f"feature {idx}"))
        m = _DOCID.search(comment)
        st.contiguous(i, q)
        if m:
            st.unique(i, (q, m.group(1)))
        docs.append(m.group(1) if m else "")
        ys.append(lab)
        qs.append(q)
        n += 1
    if n == 0:
        raise ReaderError(path, 0, "no data lines")
    width = n_features if n_features is not None else (max(cols) + 1 if cols else 0)
    X = np.zeros((n, width))
    X[np.array(rows, dtype=np.int64), np.array(cols, dtype=np.int64)] = vals
    return LetorData(X, np.array(ys, dtype=np.int64), np.array(qs, dtype=np.int64), np.array(docs, dtype=object))


def read_letor2_tsv(path, n_features: int = 25, max_label: int | None = None) -> LetorData:
    """The mirror's LETOR 2.0 OHSUMED layout: ``qid<TAB>qid_docid<TAB>values<TAB>label``, with the
    same structural checks as :func:`read_letor` (docids integers >= 1)."""
    ys, qs, docs, X = [], [], [], []
    top = max_label if max_label is not None else 127
    st = _Structure(path, "(qid, docid) pair")
    for i, line in _lines(path):
        if not line.strip():
            continue
        tok = line.split("\t")
        if len(tok) != 4:
            raise ReaderError(path, i, f"expected 4 tab-separated fields (qid, qid_docid, features, label), "
                                       f"got {len(tok)}")
        q = _id(path, i, tok[0], "qid")
        qd = tok[1].split("_", 1)
        if len(qd) != 2 or qd[0] != tok[0].strip():
            raise ReaderError(path, i, f"document id {tok[1][:40]!r} must be '<qid>_<docid>' with qid {q}")
        doc = _id(path, i, qd[1], "docid")
        vals = tok[2].split()
        if len(vals) != n_features:
            raise ReaderError(path, i, f"expected {n_features} feature values, got {len(vals)}")
        X.append([_float(path, i, v, f"feature {j + 1}") for j, v in enumerate(vals)])
        lab = _int(path, i, tok[3], "label")
        if not 0 <= lab <= top:
            raise ReaderError(path, i, f"label {lab} outside 0..{top}")
        st.contiguous(i, q)
        st.unique(i, (q, doc))
        ys.append(lab)
        qs.append(q)
        docs.append(qd[1])
    if not ys:
        raise ReaderError(path, 0, "no data lines")
    return LetorData(np.array(X, dtype=np.float64), np.array(ys, dtype=np.int64), np.array(qs, dtype=np.int64),
                     np.array(docs, dtype=object))
