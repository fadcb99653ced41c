"""Readers of the relevance-judgment, query and learning-to-rank formats, with the structural
checks of :mod:`rankrepro.data.readers` (a malformed input is a :class:`ReaderError` naming
the file and the 1-based line).

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
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .readers import ABSURD, MAX_FEATURES, ReaderError, _check_blocks, _check_unique, _float, _int, _lines

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


_RD_PAIR = re.compile(r"^[012]{4}$")


def read_cfquery(path) -> Judgments:
    """Every RD record of every query; checks each query's NR against its RD count, that every
    query has QU text and NR, and that no QN, no field of a query and no (query, doc) repeats."""
    q_ids, docs, scores, lines = [], [], [], []
    seen_q: dict[int, int] = {}
    cur: dict | None = None
    field_ = None

    def close():
        if cur is None:
            return
        q, at = cur["q"], cur["line"]
        if not cur["QU"]:
            raise ReaderError(path, at, f"query {q} has no text (QU)")
        if cur["NR"] is None:
            raise ReaderError(path, at, f"query {q} has no NR record")
        if cur["NR"] != cur["n"]:
            raise ReaderError(path, at, f"query {q}: NR says {cur['NR']} documents, RD lists {cur['n']}")

    for i, line in _lines(path):
        if not line.strip():
            continue
        tag = line[:2] if line[:2].strip() else None
        body = line[2:] if tag else line
        if tag is not None and tag not in ("QN", "QU", "NR", "RD"):
            raise ReaderError(path, i, f"unknown field {tag!r}")
        if tag is not None:
            field_ = tag
            if tag != "QN":
                if cur is None:
                    raise ReaderError(path, i, f"{tag} before any QN")
                if tag in cur["tags"]:
                    raise ReaderError(path, i, f"field {tag} given twice for query {cur['q']}")
                cur["tags"].add(tag)
        if tag == "QN":
            close()
            q = _int(path, i, body.strip(), "QN", lo=1)
            if q in seen_q:
                raise ReaderError(path, i, f"query {q} given twice (first at line {seen_q[q]})")
            seen_q[q] = i
            cur = {"q": q, "line": i, "QU": "", "NR": None, "n": 0, "tags": set()}
        elif tag == "NR":
            cur["NR"] = _int(path, i, body.strip(), "NR", lo=0)
        elif field_ == "QU":
            if tag is None and cur is None:
                raise ReaderError(path, i, "text before any QN")
            cur["QU"] += body.strip()
        elif field_ == "RD":
            tok = body.split()
            if len(tok) % 2:
                raise ReaderError(path, i, "RD entries come in pairs '<doc> <4 scores>'")
            for d, s in zip(tok[::2], tok[1::2]):
                doc = _int(path, i, d, "document number", lo=1)
                if not _RD_PAIR.match(s):
                    raise ReaderError(path, i, f"relevance scores {s[:40]!r} must be four digits 0-2")
                q_ids.append(cur["q"])
                docs.append(doc)
                scores.append([int(c) for c in s])
                lines.append(i)
                cur["n"] += 1
        elif tag is None:
            raise ReaderError(path, i, "continuation line outside QU and RD" if cur else "text before any QN")
    close()
    if not q_ids:
        raise ReaderError(path, 0, "no RD records")
    out = Judgments(np.array(q_ids, dtype=np.int64), np.array(docs, dtype=np.int64),
                    np.array(scores, dtype=np.int8), ("REW", "REW colleagues", "REW post-doctorate", "JBW"))
    _check_unique(path, [out.query, out.doc], np.asarray(lines), "(query, doc)")
    return out


def read_ohsumed_queries(path) -> pd.DataFrame:
    """``.I`` id (>= 1, unique), ``.B`` patient information, ``.W`` request; both texts required."""
    rows, cur, field_, seen = [], None, None, {}

    def close():
        if cur is not None:
            for f in ("B", "W"):
                if not cur[f]:
                    raise ReaderError(path, cur["line"], f"query .I {cur['id']} has no .{f} text")
            cur["B"], cur["W"] = " ".join(cur["B"]), " ".join(cur["W"])

    for i, line in _lines(path):
        if line.startswith(".I"):
            tok = line.split()
            if len(tok) != 2 or tok[0] != ".I":
                raise ReaderError(path, i, "'.I' must be followed by one sequential identifier")
            close()
            q = _int(path, i, tok[1], ".I", lo=1)
            if q in seen:
                raise ReaderError(path, i, f"query .I {q} given twice (first at line {seen[q]})")
            seen[q] = i
            cur = {"id": q, "B": [], "W": [], "line": i, "fields": set()}
            rows.append(cur)
            field_ = None
        elif line.startswith((".B", ".W")):
            if cur is None:
                raise ReaderError(path, i, f"{line[:2]} before any .I")
            if line.strip() != line[:2]:
                raise ReaderError(path, i, f"{line[:2]} must stand alone on its line")
            field_ = line[1]
            if field_ in cur["fields"]:
                raise ReaderError(path, i, f"field .{field_} given twice for query .I {cur['id']}")
            cur["fields"].add(field_)
        elif line.startswith("."):
            raise ReaderError(path, i, f"unknown field {line.split()[0][:40]!r}")
        elif field_ is not None:
            if line.strip():
                cur[field_].append(line.strip())
        elif line.strip():
            raise ReaderError(path, i, "text outside .B and .W")
    close()
    if not rows:
        raise ReaderError(path, 0, "no queries")
    return pd.DataFrame([{"id": r["id"], "B": r["B"], "W": r["W"]} for r in rows])


_DPN = {"d": 2, "p": 1, "n": 0, "-": -1}


def read_ohsumed_judged(path) -> Judgments:
    """``judged``: query, document .I, MEDLINE UI, relevance1..3 (d/p/n, '-' or absent = not
    judged).  Scores: d = 2, p = 1, n = 0, -1 = not judged (the assumed column layout; a
    query's lines are taken to be contiguous and each (query, doc) to appear once)."""
    q, d, s, lines = [], [], [], []
    for i, line in _lines(path):
        if not line.strip():
            continue
        tok = line.split()
        if len(tok) < 4 or len(tok) > 6:
            raise ReaderError(path, i, f"expected query doc UI and 1-3 judgments, got {len(tok)} fields")
        qi = _int(path, i, tok[0], "query", lo=1)
        di = _int(path, i, tok[1], "document", lo=1)
        _int(path, i, tok[2], "MEDLINE UI", lo=1)
        js = []
        for t in tok[3:]:
            if t not in _DPN:
                raise ReaderError(path, i, f"judgment {t[:40]!r} is not d, p, n or -")
            js.append(_DPN[t])
        if all(j < 0 for j in js):
            raise ReaderError(path, i, "no judgment on the line")
        q.append(qi)
        d.append(di)
        s.append(js + [-1] * (3 - len(js)))
        lines.append(i)
    if not q:
        raise ReaderError(path, 0, "no judgments")
    out = Judgments(np.array(q, dtype=np.int64), np.array(d, dtype=np.int64), np.array(s, dtype=np.int8),
                    ("relevance1", "relevance2", "relevance3"))
    lines = np.asarray(lines)
    _check_blocks(path, out.query, lines)
    _check_unique(path, [out.query, out.doc], lines, "(query, doc)")
    return out


# -------------------------------------------------------------------------------------
# LETOR / SVMlight
# -------------------------------------------------------------------------------------
@dataclass
class LetorData:
    X: np.ndarray  # (n, n_features) float64, absent sparse entries = 0
    y: np.ndarray  # int labels
    qid: np.ndarray  # int query ids
    docid: np.ndarray  # str document ids ('' where the file gives none)
    line: np.ndarray | None = None  # the 1-based line of each row


def _ends_with_line_end(path, last: int) -> None:
    """A file whose last line has no line end was cut short (a partial download or copy): its
    last line may be a complete-looking part of a longer one, so it is refused, not read."""
    with open(path, "rb") as fh:
        fh.seek(0, os.SEEK_END)
        if fh.tell() == 0:
            return
        fh.seek(-1, os.SEEK_END)
        if fh.read(1) not in (b"\n", b"\r"):
            raise ReaderError(path, last, "the file ends inside this line (no line end after it): it was cut short, "
                                          "e.g. by a partial download or copy; fetch or copy it again")


_DOCID = re.compile(r"docid\s*=\s*(\S+)")


def _letor_structure(path, d: LetorData, lines: list[int]) -> LetorData:
    lines = np.asarray(lines)
    d.line = lines
    _check_blocks(path, d.qid, lines)
    has = np.array([x != "" for x in d.docid], dtype=bool)
    if has.any():
        _check_unique(path, [d.qid[has], d.docid[has].astype(str)], lines[has], "(qid, docid)")
    return d


def read_letor(path, n_features: int | None = None, max_label: int | None = None, dense: bool = False) -> LetorData:
    """``label qid:Q i:v ... [#comment]``.  ``n_features`` fixes the width (an index beyond it
    is an error); otherwise the largest index seen (at most :data:`MAX_FEATURES`).  Feature
    indices start at 1.  ``dense``: the format lists every feature on every line (LETOR 3.0 and
    4.0, MSLR-WEB), so a line with fewer is an error, not zeros (SVMlight files such as Yahoo's
    are sparse: a missing feature is 0)."""
    if dense and n_features is None:
        raise ValueError("a dense LETOR file needs its n_features")
    ys, qs, docs, rows, cols, vals, lines = [], [], [], [], [], [], []
    n = i = 0
    width_cap = n_features if n_features is not None else MAX_FEATURES
    label_cap = max_label if max_label is not None else 2**31 - 1
    for i, line in _lines(path):
        body, _, comment = line.partition("#")
        tok = body.split()
        if not tok:
            continue
        lab = _int(path, i, tok[0], "label")
        if lab < 0 or lab > label_cap:
            raise ReaderError(path, i, f"label {lab} outside 0..{label_cap}")
        if len(tok) < 2 or not tok[1].startswith("qid:"):
            raise ReaderError(path, i, "second field must be qid:<integer>")
        q = _int(path, i, tok[1][4:], "qid", lo=1)
        last = 0
        for t in tok[2:]:
            k, sep, v = t.partition(":")
            if not sep:
                raise ReaderError(path, i, f"feature {t[:40]!r} is not index:value")
            idx = _int(path, i, k, "feature index", lo=1)
            if idx <= last:
                raise ReaderError(path, i, f"feature index {idx} not increasing")
            if idx > width_cap:
                raise ReaderError(path, i, f"feature index {idx} beyond the {width_cap} features "
                                           f"{'of this format' if n_features is not None else 'accepted'}")
            last = idx
            rows.append(n)
            cols.append(idx - 1)
            vals.append(_float(path, i, v, f"feature {idx}", bound=ABSURD))
        if dense and len(tok) - 2 != n_features:
            raise ReaderError(path, i, f"{len(tok) - 2} of the {n_features} features listed: this format lists every "
                                       f"feature (1:v ... {n_features}:v), and a missing one would be read as 0")
        m = _DOCID.search(comment)
        docs.append(m.group(1) if m else "")
        ys.append(lab)
        qs.append(q)
        lines.append(i)
        n += 1
    if n == 0:
        raise ReaderError(path, 0, "no data lines")
    _ends_with_line_end(path, i)
    width = n_features if n_features is not None else (max(cols) + 1 if cols else 0)
    X = np.zeros((n, width))
    X[np.array(rows, dtype=np.int64), np.array(cols, dtype=np.int64)] = vals
    d = LetorData(X, np.array(ys, dtype=np.int64), np.array(qs, dtype=np.int64), np.array(docs, dtype=object))
    return _letor_structure(path, d, lines)


def read_letor2_tsv(path, n_features: int = 25, max_label: int = 2) -> LetorData:
    """The mirror's LETOR 2.0 OHSUMED layout: ``qid<TAB>qid_docid<TAB>values<TAB>label``; labels
    are the data set's grades 0..``max_label`` (OHSUMED's: 0, 1, 2)."""
    ys, qs, docs, X, lines = [], [], [], [], []
    label_cap = max_label
    i = 0
    for i, line in _lines(path):
        if not line.strip():
            continue
        tok = line.split("\t")
        if len(tok) != 4:
            raise ReaderError(path, i, f"expected 4 tab-separated fields (qid, qid_docid, features, label), "
                                       f"got {len(tok)}")
        q = _int(path, i, tok[0], "qid", lo=1)
        qd = tok[1].split("_", 1)
        if len(qd) != 2 or qd[0] != tok[0].strip() or not qd[1].strip() or qd[1] != qd[1].strip():
            raise ReaderError(path, i, f"document id {tok[1][:40]!r} must be '<qid>_<docid>' with qid {q}")
        vals = tok[2].split()
        if len(vals) != n_features:
            raise ReaderError(path, i, f"expected {n_features} feature values, got {len(vals)}")
        X.append([_float(path, i, v, f"feature {j + 1}", bound=ABSURD) for j, v in enumerate(vals)])
        lab = _int(path, i, tok[3], "label")
        if lab < 0 or lab > label_cap:
            raise ReaderError(path, i, f"label {lab} outside 0..{label_cap}")
        ys.append(lab)
        qs.append(q)
        docs.append(qd[1])
        lines.append(i)
    if not ys:
        raise ReaderError(path, 0, "no data lines")
    _ends_with_line_end(path, i)
    d = LetorData(np.array(X, dtype=np.float64), np.array(ys, dtype=np.int64), np.array(qs, dtype=np.int64),
                  np.array(docs, dtype=object))
    return _letor_structure(path, d, lines)


def check_splits(files: list[tuple[str, int, str, LetorData]]) -> None:
    """The queries of one split in one part only: (file, fold, part, data) of every file read.
    Within a fold (or the one split of the parts and Yahoo layouts) no query is in two parts (a
    validation query that is also a training query); across folds no query is in two test sets
    or two validation sets (folds whose test sets overlap test some queries twice and others
    never).  A fault is a :class:`ReaderError` at the later file's first line of the query."""
    seen: dict[tuple, tuple[str, int]] = {}  # (scope, qid) -> (file, line)
    for path, fold, part, d in files:
        scopes = [("fold", fold)]
        if part in ("test", "valid") and fold:
            scopes.append((part, 0))
        firsts = np.unique(d.qid, return_index=True)
        for scope in scopes:
            for q, j in zip(*firsts):
                other = seen.get((scope, int(q)))
                line = int(d.line[j]) if d.line is not None else 0
                if other is not None and other[0] != path:
                    where = (f"in two parts of fold {fold}" if scope[0] == "fold" and fold else
                             "in two parts of the split" if scope[0] == "fold" else
                             f"in the {'validation' if scope[0] == 'valid' else 'test'} sets of two folds")
                    raise ReaderError(path, line, f"qid {int(q)} is also in {other[0]} (line {other[1]}): a query "
                                                  f"{where}; the splits must not share queries")
                seen.setdefault((scope, int(q)), (path, line))
