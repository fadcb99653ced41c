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


def _lines(path: str | os.PathLike, encoding: str = "latin-1"):
    p = Path(path)
    if not p.is_file():
        raise ReaderError(p, 0, "no such file")
    with open(p, encoding=encoding, newline=None) as fh:
        for i, line in enumerate(fh, start=1):
            yield i, line.rstrip("\n")


def _int(path, i, tok, what) -> int:
    try:
        return int(tok)
    except ValueError:
        raise ReaderError(path, i, f"{what} {tok!r} is not an integer") from None


def _float(path, i, tok, what) -> float:
    try:
        v = float(tok)
    except ValueError:
        raise ReaderError(path, i, f"{what} {tok!r} is not a number") from None
    if not np.isfinite(v):
        raise ReaderError(path, i, f"{what} {tok!r} is not finite")
    return v


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


def read_movielens_100k(path) -> Ratings:
    rows = []
    scale = (1.0, 2.0, 3.0, 4.0, 5.0)
    for i, line in _lines(path):
        if not line.strip():
            continue
        tok = line.split("\t")
        if len(tok) != 4:
            raise ReaderError(path, i, f"expected 4 tab-separated fields (user item rating timestamp), got {len(tok)}")
        u, m = _int(path, i, tok[0], "user"), _int(path, i, tok[1], "item")
        r = _float(path, i, tok[2], "rating")
        _check_score(path, i, r, scale)
        rows.append((u, m, r, _int(path, i, tok[3], "timestamp")))
    return _ratings(path, rows, scale, None)


def read_movielens_1m(path) -> Ratings:
    rows = []
    scale = (1.0, 2.0, 3.0, 4.0, 5.0)
    for i, line in _lines(path):
        if not line.strip():
            continue
        tok = line.split("::")
        if len(tok) != 4:
            raise ReaderError(path, i, f"expected UserID::MovieID::Rating::Timestamp, got {len(tok)} fields")
        r = _float(path, i, tok[2], "rating")
        _check_score(path, i, r, scale)
        rows.append((_int(path, i, tok[0], "UserID"), _int(path, i, tok[1], "MovieID"), r,
                     _int(path, i, tok[3], "Timestamp")))
    return _ratings(path, rows, scale, None)


def read_movielens_bpmf(path) -> Ratings:
    """The BPMF ``moviedata.mat``: train_vec then probe_vec, in file order, no timestamps."""
    from scipy.io import loadmat

    try:
        m = loadmat(path)
    except Exception as e:
        raise ReaderError(path, 0, f"not a readable MATLAB file ({e})") from None
    parts = []
    for key in ("train_vec", "probe_vec"):
        if key not in m:
            raise ReaderError(path, 0, f"variable {key!r} missing")
        a = np.asarray(m[key])
        if a.ndim != 2 or a.shape[1] != 3:
            raise ReaderError(path, 0, f"{key} must have 3 columns (user, movie, rating), has shape {a.shape}")
        parts.append(a.astype(np.int64))
    a = np.vstack(parts)
    bad = np.flatnonzero((a[:, 2] < 1) | (a[:, 2] > 5))
    if bad.size:
        raise ReaderError(path, 0, f"row {bad[0] + 1}: rating {a[bad[0], 2]} outside 1..5")
    return Ratings(a[:, 0], a[:, 1], a[:, 2].astype(np.float64), np.full(len(a), -1, dtype=np.int64),
                   (1.0, 2.0, 3.0, 4.0, 5.0))


def read_eachmovie_votes(path) -> Ratings:
    rows = []
    scale = (0.0, 0.2, 0.4, 0.6, 0.8, 1.0)
    for i, line in _lines(path):
        if not line.strip():
            continue
        tok = line.split("\t")
        if len(tok) != 5:
            raise ReaderError(path, i, f"expected 5 tab-separated fields (Person_ID Movie_ID Score Weight Modified), "
                                       f"got {len(tok)}")
        s = _float(path, i, tok[2], "Score")
        _check_score(path, i, s, scale)
        _float(path, i, tok[3], "Weight")
        # Modified is a date-time; keep the order of the file, parse to epoch seconds when possible
        try:
            t = int(pd.Timestamp(tok[4].strip()).timestamp())
        except Exception:  # pandas raises several types for unparseable dates
            raise ReaderError(path, i, f"Modified {tok[4]!r} is not a date-time") from None
        rows.append((_int(path, i, tok[0], "Person_ID"), _int(path, i, tok[1], "Movie_ID"), s, t))
    return _ratings(path, rows, scale, None)


def read_colon_table(path, names: list[str]) -> pd.DataFrame:
    """``users.dat`` / ``movies.dat`` of MovieLens 1M (first field an integer id)."""
    rows = []
    for i, line in _lines(path):
        if not line.strip():
            continue
        tok = line.split("::")
        if len(tok) != len(names):
            raise ReaderError(path, i, f"expected {len(names)} '::'-separated fields, got {len(tok)}")
        rows.append([_int(path, i, tok[0], names[0]), *tok[1:]])
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


_RD_PAIR = re.compile(r"^\d+$")


def read_cfquery(path) -> Judgments:
    """Every RD record of every query; checks each query's NR against its RD count."""
    q_ids, docs, scores = [], [], []
    cur_q, cur_nr, cur_n, field_, start = None, None, 0, None, 0

    def close(i):
        if cur_q is not None and cur_nr is not None and cur_nr != cur_n:
            raise ReaderError(path, start, f"query {cur_q}: NR says {cur_nr} documents, RD lists {cur_n}")

    for i, line in _lines(path):
        if not line.strip():
            continue
        tag = line[:2] if line[:2].strip() else None
        body = line[2:] if tag else line
        if tag:
            field_ = tag
        if tag == "QN":
            close(i)
            cur_q, cur_nr, cur_n, start = _int(path, i, body.strip(), "QN"), None, 0, i
        elif tag == "NR":
            cur_nr = _int(path, i, body.strip(), "NR")
        elif field_ == "RD":
            if cur_q is None:
                raise ReaderError(path, i, "RD before any QN")
            tok = body.split()
            if len(tok) % 2:
                raise ReaderError(path, i, "RD entries come in pairs '<doc> <4 scores>'")
            for d, s in zip(tok[::2], tok[1::2]):
                doc = _int(path, i, d, "document number")
                if len(s) != 4 or not _RD_PAIR.match(s) or any(c not in "012" for c in s):
                    raise ReaderError(path, i, f"relevance scores {s!r} must be four digits 0-2")
                q_ids.append(cur_q)
                docs.append(doc)
                scores.append([int(c) for c in s])
                cur_n += 1
        elif tag not in ("QU", "NR", "QN", None):
            raise ReaderError(path, i, f"unknown field {tag!r}")
    close(0)
    if not q_ids:
        raise ReaderError(path, 0, "no RD records")
    return Judgments(np.array(q_ids, dtype=np.int64), np.array(docs, dtype=np.int64),
                     np.array(scores, dtype=np.int8), ("REW", "REW colleagues", "REW post-doctorate", "JBW"))


def read_ohsumed_queries(path) -> pd.DataFrame:
    rows, cur, field_ = [], None, None
    for i, line in _lines(path):
        if line.startswith(".I"):
            tok = line.split()
            if len(tok) != 2:
                raise ReaderError(path, i, "'.I' must be followed by one sequential identifier")
            cur = {"id": _int(path, i, tok[1], ".I"), "B": "", "W": ""}
            rows.append(cur)
            field_ = None
        elif line.startswith((".B", ".W")):
            if cur is None:
                raise ReaderError(path, i, f"{line[:2]} before any .I")
            field_ = line[1]
        elif line.startswith("."):
            raise ReaderError(path, i, f"unknown field {line.split()[0]!r}")
        elif field_ is not None:
            cur[field_] = (cur[field_] + " " + line.strip()).strip()
    if not rows:
        raise ReaderError(path, 0, "no queries")
    return pd.DataFrame(rows)


_DPN = {"d": 2, "p": 1, "n": 0, "-": -1}


def read_ohsumed_judged(path) -> Judgments:
    """``judged``: query, document .I, MEDLINE UI, relevance1..3 (d/p/n, '-' or absent = not
    judged).  Scores: d = 2, p = 1, n = 0, -1 = not judged (the assumed column layout)."""
    q, d, s = [], [], []
    for i, line in _lines(path):
        if not line.strip():
            continue
        tok = line.split()
        if len(tok) < 4 or len(tok) > 6:
            raise ReaderError(path, i, f"expected query doc UI and 1-3 judgments, got {len(tok)} fields")
        q.append(_int(path, i, tok[0], "query"))
        d.append(_int(path, i, tok[1], "document"))
        _int(path, i, tok[2], "MEDLINE UI")
        js = []
        for t in tok[3:]:
            if t not in _DPN:
                raise ReaderError(path, i, f"judgment {t!r} is not d, p, n or -")
            js.append(_DPN[t])
        if all(j < 0 for j in js):
            raise ReaderError(path, i, "no judgment on the line")
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
    is an error); otherwise the largest index seen.  Feature indices start at 1."""
    ys, qs, docs, rows, cols, vals = [], [], [], [], [], []
    n = 0
    for i, line in _lines(path):
        body, _, comment = line.partition("#")
        tok = body.split()
        if not tok:
            continue
        lab = _int(path, i, tok[0], "label")
        if lab < 0 or (max_label is not None and lab > max_label):
            raise ReaderError(path, i, f"label {lab} outside 0..{max_label if max_label is not None else 'inf'}")
        if len(tok) < 2 or not tok[1].startswith("qid:"):
            raise ReaderError(path, i, "second field must be qid:<integer>")
        q = _int(path, i, tok[1][4:], "qid")
        last = 0
        for t in tok[2:]:
            k, sep, v = t.partition(":")
            if not sep:
                raise ReaderError(path, i, f"feature {t!r} is not index:value")
            idx = _int(path, i, k, "feature index")
            if idx <= last:
                raise ReaderError(path, i, f"feature index {idx} not increasing")
            if n_features is not None and idx > n_features:
                raise ReaderError(path, i, f"feature index {idx} beyond the {n_features} features of this format")
            last = idx
            rows.append(n)
            cols.append(idx - 1)
            vals.append(_float(path, i, v, f"feature {idx}"))
        m = _DOCID.search(comment)
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


def read_letor2_tsv(path, n_features: int = 25) -> LetorData:
    """The mirror's LETOR 2.0 OHSUMED layout: ``qid<TAB>qid_docid<TAB>values<TAB>label``."""
    ys, qs, docs, X = [], [], [], []
    for i, line in _lines(path):
        if not line.strip():
            continue
        tok = line.split("\t")
        if len(tok) != 4:
            raise ReaderError(path, i, f"expected 4 tab-separated fields (qid, qid_docid, features, label), "
                                       f"got {len(tok)}")
        q = _int(path, i, tok[0], "qid")
        qd = tok[1].split("_", 1)
        if len(qd) != 2 or qd[0] != tok[0].strip():
            raise ReaderError(path, i, f"document id {tok[1]!r} must be '<qid>_<docid>' with qid {q}")
        vals = tok[2].split()
        if len(vals) != n_features:
            raise ReaderError(path, i, f"expected {n_features} feature values, got {len(vals)}")
        X.append([_float(path, i, v, f"feature {j + 1}") for j, v in enumerate(vals)])
        lab = _int(path, i, tok[3], "label")
        if lab < 0:
            raise ReaderError(path, i, f"label {lab} is negative")
        ys.append(lab)
        qs.append(q)
        docs.append(qd[1])
    if not ys:
        raise ReaderError(path, 0, "no data lines")
    return LetorData(np.array(X, dtype=np.float64), np.array(ys, dtype=np.int64), np.array(qs, dtype=np.int64),
                     np.array(docs, dtype=object))
