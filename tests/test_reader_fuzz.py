"""Seeded mutation fuzzing of every reader: 1,200 malformed variants of a valid sample each.

A reader may do only one of two documented things with an input: return data that meets the
structural invariants (identifiers in 1..2^31-1, no duplicate record, each query's rows in one
block, finite values below 1e12, scores on the scale) or raise :class:`ReaderError` whose one-line
message starts with ``<file>:<line>:`` (or ``<file>:`` for the whole file), the line within the
file.  Any other exception, or an input taking over ``TIME_BOUND`` seconds, fails the test.
"""

from __future__ import annotations

import time
from collections import Counter

import numpy as np
import pytest
from scipy.io import savemat

from rankrepro.data import readers as R

N_INPUTS = 1200
TIME_BOUND = 2.0  # seconds per input: a hang guard, not a speed test

_F25 = " ".join(["0.5"] * 25)
SAMPLES = {
    "movielens_100k": "196\t242\t3\t881250949\n186\t302\t3\t891717742\n22\t377\t1\t878887116\n196\t377\t5\t881250950\n",
    "movielens_1m": "1::1193::5::978300760\n1::661::3::978302109\n2::914::4::978301968\n2::1193::1::978301969\n",
    "eachmovie": "1\t1\t0.8\t1\t1996-04-14 09:32:41\n1\t2\t0.4\t1\t1996-04-14 09:33:10\n"
                 "7\t1\t1\t1\t1996-05-01 10:00:00\n7\t3\t0\t0.5\t1996-05-01\n",
    "colon_table": "1::F::1::10::48067\n2::M::56::16::70072\n3::M::25::15::55117\n",
    "cfquery": "QN 00001\nQU What are the effects of calcium\n   on mucus?\nNR 00003\n"
               "RD  139 1222  151 2211\n     166 0001\n \nQN 00002\nQU Second query\nNR 00002\n"
               "RD  169 1000  139 0120\n",
    "ohsumed_queries": ".I  1\n.B\n60 year old menopausal woman\n.W\nEstrogen therapy\nand lipids\n"
                       ".I  2\n.B\npatient\n.W\nrequest text\n.I 3\n.W\nthird\n",
    "ohsumed_judged": "1 5 87049087 d\n1 12 87050001 n p\n2 7 87061234 - d n\n2 5 87049087 p\n",
    "letor": "2 qid:10 1:0.5 2:0.25 3:1 #docid = GX001 inc = 1\n0 qid:10 1:0.1 3:0.2 #docid = GX002\n"
             "1 qid:11 2:0.7 #docid = GX001\n0 qid:11 1:-3.5e2 2:7 3:0\n",
    "letor_sparse": "4 qid:1 5:0.5 700:1.0\n0 qid:1 1:0.25\n3 qid:2 2:1e-3 9:4\n",
    "letor2_tsv": f"1\t1_40626\t{_F25}\t2\n1\t1_11852\t{_F25.replace('0.5', '1', 3)}\t0\n"
                  f"2\t2_40626\t{_F25.replace('0.5', '-9.6', 2)}\t1\n",
}

READ = {
    "movielens_100k": R.read_movielens_100k, "movielens_1m": R.read_movielens_1m,
    "eachmovie": R.read_eachmovie_votes,
    "colon_table": lambda p: R.read_colon_table(p, ["UserID", "Gender", "Age", "Occupation", "Zip"]),
    "cfquery": R.read_cfquery, "ohsumed_queries": R.read_ohsumed_queries, "ohsumed_judged": R.read_ohsumed_judged,
    "letor": lambda p: R.read_letor(p, n_features=3, max_label=2),
    "letor_sparse": lambda p: R.read_letor(p),
    "letor2_tsv": lambda p: R.read_letor2_tsv(p, n_features=25, max_label=2),
}

#: values a careless or hostile edit puts in a field
NASTY = ["", " ", "0", "-1", "+7", "1.5", "99999999999999999999999", "9" * 5000, "2147483648", "1e400", "1e13",
         "-1e13", "nan", "NaN", "inf", "-inf", "1_0", "0x1A", "\u0663", "\u00b2", "5 5", "\t", "::", "qid:", "qid:0",
         "qid:-3", "#", "#docid = GX001", ".I", ".W", ".B", ".X", "QN", "RD", "NR", "QU", "d", "p", "x",
         "1:0.5", "0:1", "99:1", "3:nan", "2000-13-45", "now", "1996-04-14", "1_1", "1_", "_1", "\x00", "\xff",
         "1222", "9999", "12x2"]
SEPARATORS = ["\t", "::", " ", ":", "_", "#", "="]


def _mutate_text(text: str, rng: np.random.Generator, pool: list[str]) -> str:
    lines = text.split("\n")
    for _ in range(int(rng.integers(1, 4))):
        if not lines:
            lines = [""]
        op = int(rng.integers(0, 11))
        i = int(rng.integers(0, len(lines)))
        if op == 0:  # replace a token by a nasty value
            seps = [s for s in SEPARATORS if s in lines[i]] or [" "]
            sep = seps[int(rng.integers(0, len(seps)))]
            tok = lines[i].split(sep)
            tok[int(rng.integers(0, len(tok)))] = NASTY[int(rng.integers(0, len(NASTY)))]
            lines[i] = sep.join(tok)
        elif op == 1:  # duplicate a line (a duplicate record)
            lines.insert(int(rng.integers(0, len(lines) + 1)), lines[i])
        elif op == 2:  # move a line elsewhere (splits a query's block)
            line = lines.pop(i)
            lines.insert(int(rng.integers(0, len(lines) + 1)), line)
        elif op == 3:
            del lines[i]
        elif op == 4:  # truncate the file
            flat = "\n".join(lines)
            lines = flat[: int(rng.integers(0, len(flat) + 1))].split("\n")
        elif op == 5:  # random junk line
            n = int(rng.integers(0, 30))
            lines.insert(i, "".join(chr(int(c)) for c in rng.integers(32, 256, size=n)))
        elif op == 6:  # flip, insert or delete one character
            s = lines[i]
            j = int(rng.integers(0, len(s) + 1))
            c = chr(int(rng.integers(1, 256)))
            lines[i] = s[:j] + c + s[j + 1:] if rng.random() < 0.5 else s[:j] + s[j + 1:]
        elif op == 7:  # a line of another format
            other = pool[int(rng.integers(0, len(pool)))].split("\n")
            lines.insert(i, other[int(rng.integers(0, len(other)))])
        elif op == 8:  # repeat the whole sample (every record twice)
            lines = lines + lines
        elif op == 9:  # separators changed
            a, b = (SEPARATORS[int(k)] for k in rng.integers(0, len(SEPARATORS), size=2))
            lines[i] = lines[i].replace(a, b)
        else:  # a nasty value appended to the line
            lines[i] = lines[i] + SEPARATORS[int(rng.integers(0, len(SEPARATORS)))] + NASTY[int(rng.integers(0, len(NASTY)))]
    return "\n".join(lines)


def _contiguous(q: np.ndarray) -> bool:
    starts = q[np.r_[True, q[1:] != q[:-1]]] if q.size else q
    return len(starts) == len(np.unique(starts))


def _unique_rows(*cols) -> bool:
    keys = list(zip(*[np.asarray(c).tolist() for c in cols]))
    return len(keys) == len(set(keys))


def _ids_ok(a) -> bool:
    a = np.asarray(a)
    return a.size > 0 and bool(np.all((a >= 1) & (a <= R.ID_MAX)))


def check_invariants(kind: str, out) -> None:
    """What a successful read promises (the documented structure of each format)."""
    if isinstance(out, R.Ratings):
        assert _ids_ok(out.user) and _ids_ok(out.item) and _unique_rows(out.user, out.item)
        assert np.all(np.isfinite(out.score)) and set(np.round(out.score, 6).tolist()) <= set(out.scale)
        assert np.all((out.time == -1) | ((out.time >= 0) & (out.time <= R.TIME_MAX)))
    elif isinstance(out, R.Judgments):
        assert _ids_ok(out.query) and _ids_ok(out.doc) and _unique_rows(out.query, out.doc)
        assert _contiguous(out.query)
        assert out.scores.shape == (out.query.size, len(out.judges)) and np.all(out.scores >= -1)
        assert np.all(out.scores.max(axis=1) >= 0)
    elif isinstance(out, R.LetorData):
        assert _ids_ok(out.qid) and _contiguous(out.qid) and out.X.shape[0] == out.y.size == out.qid.size
        assert np.all(np.isfinite(out.X)) and np.all(np.abs(out.X) <= R.ABSURD)
        assert np.all(out.y >= 0) and np.all(out.y <= (2 if kind in ("letor", "letor2_tsv") else 127))
        named = out.docid != ""
        assert _unique_rows(out.qid[named], out.docid[named])
    elif kind == "ohsumed_queries":
        assert _ids_ok(out["id"]) and out["id"].is_unique and (out["W"].str.len() > 0).all()
    elif kind == "colon_table":
        assert _ids_ok(out.iloc[:, 0]) and out.iloc[:, 0].is_unique
    else:  # pragma: no cover
        raise AssertionError(f"no invariant for {kind}")


def _outcome(kind, read, path, n_lines) -> str:
    t0 = time.perf_counter()
    try:
        out = read(path)
    except R.ReaderError as e:
        msg = str(e)
        assert "\n" not in msg and msg.startswith(f"{path}:"), msg
        assert 0 <= e.line <= n_lines + 1, (e.line, n_lines, msg)
        result = "error"
    else:
        check_invariants(kind, out)
        result = "parsed"
    assert time.perf_counter() - t0 < TIME_BOUND, f"{kind}: input took over {TIME_BOUND} s"
    return result


@pytest.mark.parametrize("kind", sorted(SAMPLES))
def test_fuzz_text_reader(tmp_path, kind):
    read, text = READ[kind], SAMPLES[kind]
    path = tmp_path / "input.txt"
    path.write_text(text, encoding="latin-1")
    assert _outcome(kind, read, path, text.count("\n")) == "parsed"  # the sample itself is valid
    rng = np.random.default_rng(sorted(SAMPLES).index(kind))
    pool = list(SAMPLES.values())
    seen = Counter()
    for k in range(N_INPUTS):
        t = _mutate_text(text, rng, pool)
        path = tmp_path / f"input{k}.txt"  # a new file each time: rewriting one in place is slow on ext4
        path.write_bytes(t.encode("utf-8"))
        seen[_outcome(kind, read, path, t.count("\n") + 1)] += 1
    assert seen["error"] > N_INPUTS // 3 and seen["parsed"] > 10, seen  # both outcomes exercised


def _bpmf_inputs(rng: np.random.Generator):
    train = np.array([[1, 10, 5], [2, 10, 3], [2, 11, 4]], dtype=np.uint16)
    probe = np.array([[1, 11, 1]], dtype=np.uint16)
    bad_values = [0, -1, 6, 3.5, np.nan, np.inf, 1e20, 2.0**31, 2.0**63]
    for _ in range(N_INPUTS):
        op = int(rng.integers(0, 7))
        tr, pr = train.astype(np.float64), probe.astype(np.float64)
        if op == 0:
            tr[int(rng.integers(0, 3)), int(rng.integers(0, 3))] = bad_values[int(rng.integers(0, len(bad_values)))]
            yield {"train_vec": tr, "probe_vec": pr}
        elif op == 1:  # a duplicate (user, movie)
            pr = np.vstack([pr, tr[int(rng.integers(0, 3))]])
            yield {"train_vec": tr, "probe_vec": pr}
        elif op == 2:  # wrong shape, missing variable or wrong type
            yield [{"train_vec": tr[:, :2], "probe_vec": pr}, {"train_vec": tr}, {"train_vec": tr, "probe_vec": "text"},
                   {"train_vec": tr.ravel(), "probe_vec": pr}][int(rng.integers(0, 4))]
        elif op == 3:
            yield {"train_vec": train, "probe_vec": probe}
        else:  # bytes of a valid file corrupted: flipped, cut or zeroed
            yield ("bytes", op, int(rng.integers(0, 2**31)))


def test_fuzz_bpmf_mat(tmp_path):
    """Matrices with bad values, duplicates, wrong shapes; bytes of a valid file flipped, cut or
    zeroed (scipy's own loadmat crashes the process on some of these: the reader does not use it)."""
    path = tmp_path / "moviedata.mat"
    sample = {"train_vec": np.array([[1, 10, 5], [2, 10, 3]], dtype=np.uint16),
              "probe_vec": np.array([[1, 11, 1]], dtype=np.uint16)}
    valid = []
    for compress in (False, True):
        savemat(path, sample, do_compression=compress)
        valid.append(path.read_bytes())
    rng = np.random.default_rng(99)
    seen = Counter()
    for k, inp in enumerate(_bpmf_inputs(rng)):
        path = tmp_path / f"input{k}.mat"
        if isinstance(inp, tuple):
            _, op, seed = inp
            r = np.random.default_rng(seed)
            b = bytearray(valid[seed % 2])
            j = int(r.integers(0, len(b)))
            if op == 4:
                b[j] ^= 1 << int(r.integers(0, 8))
            elif op == 5:
                b = b[:j]
            else:
                b[j:j + int(r.integers(1, 64))] = bytes(min(64, len(b) - j))
            path.write_bytes(bytes(b))
        else:
            savemat(path, inp)
        seen[_outcome("movielens_bpmf", R.read_movielens_bpmf, path, 0)] += 1
    assert seen["error"] > N_INPUTS // 3 and seen["parsed"] > 10, seen


def test_huge_text_field_reads_in_linear_time(tmp_path):
    """200,000 lines of one query's text (the former quadratic join would take hours)."""
    p = tmp_path / "queries"
    p.write_text(".I 1\n.W\n" + "word " * 10 + "\n" + ("more query text here\n" * 200_000))
    t0 = time.perf_counter()
    q = R.read_ohsumed_queries(p)
    assert time.perf_counter() - t0 < 20 * TIME_BOUND
    assert len(q) == 1 and q["W"][0].count("more query text here") == 200_000
