"""Readers on small files written in each official format, malformed input, and fuzzing."""
import random
import re
import signal
from pathlib import Path

import numpy as np
import pytest
from scipy.io import savemat

from rankrepro.data import ir_readers as IR
from rankrepro.data import readers as R

FIXTURES = {
    "u.data": ("movielens_100k", "196\t242\t3\t881250949\n186\t302\t3\t891717742\n22\t377\t1\t878887116\n"),
    "ratings.dat": ("movielens_1m", "1::1193::5::978300760\n1::661::3::978302109\n2::914::4::978301968\n"),
    "Vote.txt": ("eachmovie", "1\t1\t0.8\t1\t1996-04-14 09:32:41\n1\t2\t0.4\t1\t1996-04-14 09:33:10\n"
                              "7\t1\t1\t1\t1996-05-01 10:00:00\n"),
    "cfquery": ("cfquery", "QN 00001\nQU What are the effects of calcium\n   on mucus?\nNR 00003\n"
                           "RD  139 1222  151 2211\n     166 0001\n \nQN 00002\nQU Second query\nNR 00001\n"
                           "RD  169 1000\n"),
    "queries": ("ohsumed_queries", ".I 1\n.B\n60 year old menopausal woman\n.W\nEstrogen therapy\n"
                                   ".I 2\n.B\npatient\n.W\nrequest text\n"),
    "judged": ("ohsumed_judged", "1 5 87049087 d\n1 12 87050001 n p\n2 7 87061234 - d n\n"),
    "letor.txt": ("letor", "2 qid:10 1:0.5 2:0.25 3:1 #docid = GX001 inc = 1\n0 qid:10 1:0.1 3:0.2 #docid = GX002\n"
                           "1 qid:11 2:0.7\n"),
    "letor2.tsv": ("letor2_tsv", "1\t1_40626\t" + " ".join(["0.5"] * 25) + "\t2\n1\t1_11852\t"
                   + " ".join(["1"] * 25) + "\t0\n"),
}


def write(tmp_path, name):
    p = tmp_path / name
    p.write_text(FIXTURES[name][1])
    return p


def read(kind, path):
    return {
        "movielens_100k": R.read_movielens_100k, "movielens_1m": R.read_movielens_1m, "eachmovie": R.read_eachmovie_votes,
        "cfquery": IR.read_cfquery, "ohsumed_queries": IR.read_ohsumed_queries, "ohsumed_judged": IR.read_ohsumed_judged,
        "letor": lambda p: IR.read_letor(p, n_features=3, max_label=2),
        "letor2_tsv": lambda p: IR.read_letor2_tsv(p, n_features=25, max_label=2),
        "users_dat": lambda p: R.read_colon_table(p, ["UserID", "Gender", "Age", "Occupation", "Zip"]),
        "movies_dat": lambda p: R.read_colon_table(p, ["MovieID", "Title", "Genres"]),
        "movielens_bpmf": R.read_movielens_bpmf,
    }[kind](path)


def test_movielens_and_eachmovie(tmp_path):
    r = R.read_movielens_100k(write(tmp_path, "u.data"))
    assert r.user.tolist() == [196, 186, 22] and r.score.tolist() == [3, 3, 1] and r.time[0] == 881250949
    r = R.read_movielens_1m(write(tmp_path, "ratings.dat"))
    assert r.item.tolist() == [1193, 661, 914] and r.scale == (1, 2, 3, 4, 5)
    r = R.read_eachmovie_votes(write(tmp_path, "Vote.txt"))
    assert r.score.tolist() == [0.8, 0.4, 1.0] and r.user.tolist() == [1, 1, 7] and r.time[1] > r.time[0]


def test_bpmf_mat(tmp_path):
    p = tmp_path / "moviedata.mat"
    savemat(p, {"train_vec": np.array([[1, 10, 5], [2, 10, 3]], dtype=np.uint16),
                "probe_vec": np.array([[1, 11, 1]], dtype=np.uint16)})
    r = R.read_movielens_bpmf(p)
    assert r.user.tolist() == [1, 2, 1] and r.item.tolist() == [10, 10, 11] and np.all(r.time == -1)
    savemat(p, {"train_vec": np.array([[1, 10, 9]], dtype=np.uint16), "probe_vec": np.zeros((0, 3))})
    with pytest.raises(R.ReaderError, match="outside 1..5"):
        R.read_movielens_bpmf(p)
    savemat(p, {"train_vec": np.array([[1, 10, 3]], dtype=np.uint16)})
    with pytest.raises(R.ReaderError, match="probe_vec"):
        R.read_movielens_bpmf(p)


def test_cfquery(tmp_path):
    j = IR.read_cfquery(write(tmp_path, "cfquery"))
    assert j.query.tolist() == [1, 1, 1, 2]
    assert j.doc.tolist() == [139, 151, 166, 169]
    assert j.scores.tolist() == [[1, 2, 2, 2], [2, 2, 1, 1], [0, 0, 0, 1], [1, 0, 0, 0]]
    assert len(j.judges) == 4


def test_cfquery_nr_mismatch(tmp_path):
    p = tmp_path / "cfquery"
    p.write_text("QN 00001\nQU q\nNR 00002\nRD  139 1222\n")
    with pytest.raises(R.ReaderError, match=r"cfquery:1: query 1: NR says 2 documents, RD lists 1"):
        IR.read_cfquery(p)


def test_ohsumed(tmp_path):
    q = IR.read_ohsumed_queries(write(tmp_path, "queries"))
    assert q["id"].tolist() == [1, 2] and q["W"][0] == "Estrogen therapy"
    j = IR.read_ohsumed_judged(write(tmp_path, "judged"))
    assert j.scores.tolist() == [[2, -1, -1], [0, 1, -1], [-1, 2, 0]]


def test_letor_formats(tmp_path):
    d = IR.read_letor(write(tmp_path, "letor.txt"), n_features=3, max_label=2)
    np.testing.assert_array_equal(d.X, [[0.5, 0.25, 1], [0.1, 0, 0.2], [0, 0.7, 0]])
    assert d.y.tolist() == [2, 0, 1] and d.qid.tolist() == [10, 10, 11] and d.docid.tolist() == ["GX001", "GX002", ""]
    d = IR.read_letor2_tsv(write(tmp_path, "letor2.tsv"))
    assert d.X.shape == (2, 25) and d.y.tolist() == [2, 0] and d.docid.tolist() == ["40626", "11852"]


def test_yahoo_sparse_line(tmp_path):
    p = tmp_path / "set1.train.txt"
    p.write_text("4 qid:1 5:0.5 700:1.0\n0 qid:1 1:0.25\n")
    d = IR.read_letor(p, n_features=700, max_label=4)
    assert d.X.shape == (2, 700) and d.X[0, 699] == 1.0 and d.X[0, 4] == 0.5


BAD = [
    ("letor.txt", "2 qid:x 1:0.5\n", 1, "qid"),
    ("letor.txt", "0 qid:1 1:0.5\n2 1:0.5 2:1\n", 2, "qid"),
    ("letor.txt", "0 qid:1 1:0.5 4:1\n", 1, "beyond the 3 features"),
    ("letor.txt", "0 qid:1 1:abc\n", 1, "not a number"),
    ("letor.txt", "0 qid:1 1:0.5\n1 qid:1 1:0.5 2:", 2, "not a number"),  # truncated
    ("letor.txt", "7 qid:1 1:0.5\n", 1, "label 7 outside"),
    ("letor.txt", "0 qid:1 2:0.5 1:0.1\n", 1, "not increasing"),
    ("letor2.tsv", "1\t1_2\t0.5 0.5\t2\n", 1, "expected 25 feature values"),
    ("letor2.tsv", "1\t2_2\t" + " ".join(["0"] * 25) + "\t2\n", 1, "must be '<qid>_<docid>'"),
    ("letor2.tsv", "1\t1_2\t" + " ".join(["0"] * 25) + "\n", 1, "expected 4 tab-separated"),
    ("u.data", "1\t2\t3\t4\n1\t2\t9\t4\n", 2, "score 9.0 is not one of"),
    ("u.data", "1\t2\t3\n", 1, "expected 4 tab-separated"),
    ("ratings.dat", "1::2::x::4\n", 1, "rating 'x' is not a number"),
    ("Vote.txt", "1\t2\t0.3\t1\t1996-01-01\n", 1, "score 0.3"),
    ("Vote.txt", "1\t2\t0.2\t1\tyesterday\n", 1, "not a date-time"),
    ("Vote.txt", "1\t2\t0.2\t1\tnow\n", 1, "Modified 'now' is not a date-time"),
    ("Vote.txt", "1\t2\t0.2\t1\t1996\n", 1, "Modified '1996' is not a date-time"),
    ("Vote.txt", "1\t2\t0.2\t1\t1996-13-40\n", 1, "not a date-time"),
    ("Vote.txt", "1\t2\t0.2\t-1\t1996-01-01\n", 1, "Weight -1 is negative"),
    ("cfquery", "QN 00001\nNR 00001\nRD  139 12x2\n", 3, "four digits 0-2"),
    ("cfquery", "QN 00001\nNR 00001\nRD  139\n", 3, "pairs"),
    ("cfquery", "RD  139 1222\n", 1, "RD before any QN"),
    ("cfquery", "QN 00001\nXX foo\n", 2, "unknown field"),
    ("judged", "1 2 3 x\n", 1, "judgment 'x'"),
    ("judged", "1 2 3\n", 1, "expected query doc UI"),
    ("queries", ".W\ntext\n", 1, "before any .I"),
]


@pytest.mark.parametrize("fixture,text,line,msg", BAD)
def test_malformed_input_names_file_and_line(tmp_path, fixture, text, line, msg):
    p = tmp_path / fixture
    p.write_text(text)
    with pytest.raises(R.ReaderError) as err:
        read(FIXTURES[fixture][0], p)
    assert err.value.path == str(p) and err.value.line == line
    assert f"{p}:{line}:" in str(err.value) and msg in str(err.value)


def test_empty_and_missing_files(tmp_path):
    p = tmp_path / "u.data"
    p.write_text("")
    with pytest.raises(R.ReaderError, match="no ratings"):
        R.read_movielens_100k(p)
    with pytest.raises(R.ReaderError, match="no such file"):
        IR.read_letor(tmp_path / "nope.txt")


# -------------------------------------------------------------------------------------
# structural faults of a whole file
# -------------------------------------------------------------------------------------
_L2 = lambda q, d, lab: f"{q}\t{q}_{d}\t" + " ".join(["0.5"] * 25) + f"\t{lab}\n"  # noqa: E731

STRUCTURAL = [
    ("u.data", "1\t2\t3\t4\n5\t6\t1\t7\n1\t2\t4\t9\n", 3, "duplicate (user, item) = (1, 2), first at line 1"),
    ("ratings.dat", "1::2::3::4\n0::6::1::7\n", 2, "UserID 0 is below 1"),
    ("ratings.dat", "1::2::3::-4\n", 1, "Timestamp -4 is below 0"),
    ("u.data", "1\t99999999999999999999999\t3\t4\n", 1, "item 99999999999999999999999 is out of range"),
    ("u.data", "1\t1_0\t3\t4\n", 1, "item '1_0' is not an integer"),
    ("Vote.txt", "1\t1\t0.8\t1\t1996-04-14 09:32:41\n1\t1\t0.4\t1\t1996-04-14 09:33:10\n", 2, "duplicate (user, item)"),
    ("cfquery", "QN 00001\nQU a\nNR 00002\nRD  139 1222  139 0001\n", 4, "duplicate (query, doc) = (1, 139)"),
    ("cfquery", "QN 00001\nQU a\nNR 00001\nRD  139 1222\nQN 00001\nQU b\nNR 00001\nRD  140 1222\n", 5,
     "query 1 given twice (first at line 1)"),
    ("cfquery", "QN 00001\nNR 00001\nRD  139 1222\n", 1, "query 1 has no text (QU)"),
    ("cfquery", "QN 00001\nQU a\nRD  139 1222\n", 1, "query 1 has no NR record"),
    ("cfquery", "QN 00001\nQU a\nNR 00001\nNR 00001\nRD  139 1222\n", 4, "field NR given twice"),
    ("cfquery", "QN 0\nQU a\nNR 00001\nRD  139 1222\n", 1, "QN 0 is below 1"),
    ("cfquery", "QN 99999999999999999999\nQU a\nNR 00001\nRD  139 1222\n", 1, "out of range"),
    ("queries", ".I 1\n.B\nx\n.W\ny\n.I 1\n.B\nx\n.W\ny\n", 6, "query .I 1 given twice (first at line 1)"),
    ("queries", ".I 1\n.B\nx\n.W\n.I 2\n.B\nx\n.W\ny\n", 1, "query .I 1 has no .W text"),
    ("queries", ".I 1\n.B\nx\n.W\ny\n.W\nz\n", 6, "field .W given twice"),
    ("queries", ".I 0\n.B\nx\n.W\ny\n", 1, ".I 0 is below 1"),
    ("judged", "1 5 87049087 d\n1 5 87049088 n\n", 2, "duplicate (query, doc) = (1, 5), first at line 1"),
    ("judged", "1 5 87049087 d\n2 5 87049087 d\n1 6 87049088 n\n", 3, "rows of query 1 resume here"),
    ("judged", "1 5 0 d\n", 1, "MEDLINE UI 0 is below 1"),
    ("judged", "1 99999999999999999999 5 d\n", 1, "out of range"),
    ("letor.txt", "0 qid:1 1:0.5 #docid = A\n1 qid:2 1:0.5 #docid = B\n0 qid:1 1:0.1 #docid = C\n", 3,
     "rows of query 1 resume here after other query rows (its block began at line 1)"),
    ("letor.txt", "0 qid:1 1:0.5 #docid = A\n1 qid:1 1:0.7 #docid = A\n", 2, "duplicate (qid, docid) = (1, A)"),
    ("letor.txt", "0 qid:0 1:0.5\n", 1, "qid 0 is below 1"),
    ("letor.txt", "0 qid:1 1:2e12\n", 1, "feature 1 2e12 is beyond +-1e+12"),
    ("letor.txt", "0 qid:1 1:nan\n", 1, "not finite"),
    ("letor.txt", "0 qid:1 99999999999999999999:1\n", 1, "out of range"),
    ("letor2.tsv", _L2(1, 7, 0) + _L2(1, 7, 1), 2, "duplicate (qid, docid) = (1, 7)"),
    ("letor2.tsv", _L2(1, 7, 0) + _L2(2, 7, 1) + _L2(1, 8, 1), 3, "rows of query 1 resume here"),
    ("letor2.tsv", _L2(99999999999999999999, 7, 0), 1, "qid 99999999999999999999 is out of range"),
    ("letor2.tsv", _L2(1, 7, 99999999999999999999), 1, "label 99999999999999999999 is out of range"),
    ("letor2.tsv", _L2(1, 7, 3), 1, "label 3 outside 0..2"),
    ("letor2.tsv", _L2(1, "", 0), 1, "must be '<qid>_<docid>'"),
    ("users.dat", "1::F::1::10::48067\n1::M::56::16::70072\n", 2, "duplicate UserID = (1), first at line 1"),
]


@pytest.mark.parametrize("fixture,text,line,msg", STRUCTURAL)
def test_structural_faults_are_errors_at_their_line(tmp_path, fixture, text, line, msg):
    p = tmp_path / fixture
    p.write_text(text)
    with pytest.raises(R.ReaderError) as err:
        read(FIXTURES[fixture][0] if fixture in FIXTURES else "users_dat", p)
    assert err.value.line == line and str(err.value).startswith(f"{p}:{line}: ")
    assert msg in str(err.value)


def test_bpmf_structural_faults(tmp_path):
    p = tmp_path / "moviedata.mat"
    ok = np.array([[1, 10, 5], [2, 10, 3]], dtype=np.float64)
    cases = [
        ({"train_vec": ok, "probe_vec": np.array([[2, 10, 4.0]])}, "probe_vec row 1: duplicate (user, movie) = "
                                                                    "(2, 10), first at train_vec row 2"),
        ({"train_vec": np.array([[0, 10, 5.0]]), "probe_vec": ok}, "train_vec row 1: user 0.0 is not an integer"),
        ({"train_vec": ok, "probe_vec": np.array([[1, np.nan, 5]])}, "probe_vec row 1: movie nan"),
        ({"train_vec": ok, "probe_vec": np.array([[1, 11, 2.5]])}, "rating 2.5"),
        ({"train_vec": ok, "probe_vec": np.array([[1e30, 11, 2]])}, "user 1e+30"),
        ({"train_vec": np.zeros((0, 3)), "probe_vec": np.zeros((0, 3))}, "no ratings"),
    ]
    for arrays, msg in cases:
        savemat(p, arrays)
        with pytest.raises(R.ReaderError, match=re.escape(msg)):
            R.read_movielens_bpmf(p)
    p.write_bytes(b"MATLAB 5.0 MAT-file garbage" + bytes(range(256)))
    with pytest.raises(R.ReaderError, match="not a readable MATLAB file"):
        R.read_movielens_bpmf(p)


# -------------------------------------------------------------------------------------
# the official files: every structural check passes on the mirror's copies
# -------------------------------------------------------------------------------------
from conftest import NO_MIRROR, data_mirror  # noqa: E402

MIRROR = data_mirror()


@pytest.mark.parametrize("rel,kind,count", [("cystic-fibrosis/cfquery", "cfquery", 4_819),
                                            ("ohsumed-queries/queries", "ohsumed_queries", 106),
                                            ("letor2-ohsumed/Fold1/trainingset.txt", "letor2_tsv", 9_219),
                                            ("letor4-mq2008/S1.txt", "letor4", 2_933),
                                            ("movielens-100k/u.data", "movielens_100k", 100_000)])
def test_official_files_pass_the_structural_checks(rel, kind, count):
    if MIRROR is None:
        pytest.skip(NO_MIRROR)
    p = MIRROR / rel
    if not p.is_file():
        pytest.skip(f"needs {rel} in the data mirror {MIRROR}: not there")
    r = IR.read_letor(p, n_features=46, max_label=2) if kind == "letor4" else read(kind, p)
    n = r.y.size if isinstance(r, IR.LetorData) else r.query.size if isinstance(r, IR.Judgments) else len(r)
    assert n == count


# -------------------------------------------------------------------------------------
# seeded mutation fuzzing: 1,000 mutants of a valid sample per reader
# -------------------------------------------------------------------------------------
SAMPLES = {
    "movielens_100k": ("u.data", "".join(f"{u}\t{m}\t{(u * m) % 5 + 1}\t8812{u}{m}\n" for u in (1, 2, 7)
                                         for m in (3, 5, 11))),
    "movielens_1m": ("ratings.dat", "".join(f"{u}::{m}::{(u + m) % 5 + 1}::97830{u}{m}\n" for u in (1, 4)
                                            for m in (2, 9, 30))),
    "eachmovie": ("Vote.txt", "".join(f"{u}\t{m}\t{0.2 * ((u + m) % 6):.1f}\t1\t1996-04-1{m} 09:3{u}:41\n"
                                      for u in (1, 3) for m in (1, 2, 5))),
    "users_dat": ("users.dat", "1::F::1::10::48067\n2::M::56::16::70072\n3::M::25::15::55117\n"),
    "movies_dat": ("movies.dat", "1::Toy Story (1995)::Animation|Children's|Comedy\n2::Jumanji (1995)::Adventure\n"
                                 "3::Heat (1995)::Action|Crime|Thriller\n"),
    "cfquery": ("cfquery", FIXTURES["cfquery"][1] + "QN 00003\nQU Third\n   query text\nNR 00002\n"
                           "RD 1175 0100 1185 0001\n"),
    "ohsumed_queries": ("queries", FIXTURES["queries"][1] + ".I 3\n.B\n45 yo\nwoman\n.W\nthird request\n"),
    "ohsumed_judged": ("judged", "1 5 87049087 d\n1 12 87050001 n p\n2 7 87061234 - d n\n2 9 87061299 p\n"
                                 "3 1 87000001 n\n"),
    "letor": ("letor.txt", "2 qid:10 1:0.5 2:0.25 3:1 #docid = GX001 inc = 1\n0 qid:10 1:0.1 3:0.2 #docid = GX002\n"
                           "1 qid:11 2:0.7 #docid = GX003\n0 qid:11 1:1e3 #docid = GX004\n0 qid:12 3:-2.5\n"),
    "letor2_tsv": ("letor2.tsv", _L2(1, 40626, 2) + _L2(1, 11852, 0) + _L2(2, 500, 1) + _L2(3, 501, 0)),
    "movielens_bpmf": ("moviedata.mat", None),
}
EVIL = ["0", "-1", "1", "2", "5", "99999999999999999999999", "9" * 400, "1" + "0" * 5000, "nan", "inf", "-inf",
        "1e13", "-1e300", "1e400", "", " ", "1_0", "0x1F", "x", "0.2", "3.5", "qid:0", "qid:1", "1:0.5", "#",
        "_", "::", "\t", "\xb2", "\xa0", ".I", ".W", "QN", "RD", "d", "-", "2147483648", "9223372036854775808"]
JUNK_CHARS = "0123456789 \t:._-#=+eE|abcdfnpqidxQNRDUIWB\xa0\xb2\xff"


def _mutate(text: str, rng: random.Random) -> str:
    lines = text.splitlines()
    n_ops = rng.choice((1, 1, 1, 2, 3))
    for _ in range(n_ops):
        if not lines:
            lines = [""]
        i = rng.randrange(len(lines))
        op = rng.randrange(11)
        if op == 0:  # junk line
            lines[i] = "".join(rng.choice(JUNK_CHARS) for _ in range(rng.randrange(40)))
        elif op == 1:
            del lines[i]
        elif op == 2:  # a repeated record
            lines.insert(rng.randrange(len(lines) + 1), lines[i])
        elif op == 3:  # reorder: splits blocks
            j = rng.randrange(len(lines))
            lines[i], lines[j] = lines[j], lines[i]
        elif op == 4:  # truncate the file
            lines = lines[:i] + [lines[i][: rng.randrange(len(lines[i]) + 1)]]
        elif op in (5, 6, 7):  # replace one token by an evil value
            parts = re.split(r"([\t :_=]+)", lines[i])
            toks = [k for k in range(len(parts)) if k % 2 == 0]
            k = rng.choice(toks)
            parts[k] = rng.choice(EVIL)
            lines[i] = "".join(parts)
        elif op == 8:  # one character inserted, deleted or changed
            j = rng.randrange(len(lines[i]) + 1)
            lines[i] = lines[i][:j] + rng.choice(JUNK_CHARS) + lines[i][j + rng.randrange(2):]
        elif op == 9:  # a long repeated run (linear time expected)
            lines[i:i + 1] = [lines[i]] * rng.choice((20, 300))
        else:  # the same line under another id: a realistic near-duplicate
            lines[i] = re.sub(r"\d+", lambda m: str(int(m.group()) + rng.choice((-1, 1))), lines[i], count=1)
    return "\n".join(lines) + rng.choice(("\n", "", "\r\n"))


def _check_parsed(kind, r):
    """The documented invariants of a successful read."""
    def no_dup(*keys):
        assert R._first_duplicate([np.asarray(k) for k in keys]) is None

    def contiguous(q):
        starts = q[np.r_[True, q[1:] != q[:-1]]]
        assert np.unique(starts).size == starts.size

    if isinstance(r, R.Ratings):
        assert len(r) > 0 and r.user.min() >= 1 and r.item.min() >= 1
        assert np.isin(np.round(r.score, 6), np.round(r.scale, 6)).all()
        assert np.all((r.time >= 0) | (r.time == -1))
        no_dup(r.user, r.item)
    elif isinstance(r, IR.Judgments):
        assert r.query.min() >= 1 and r.doc.min() >= 1 and r.scores.max() <= 2 and r.scores.min() >= -1
        no_dup(r.query, r.doc)
        if kind == "ohsumed_judged":
            contiguous(r.query)
    elif isinstance(r, IR.LetorData):
        assert np.isfinite(r.X).all() and np.abs(r.X).max() <= R.ABSURD and r.qid.min() >= 1
        assert r.y.min() >= 0 and r.y.max() <= 2
        contiguous(r.qid)
        has = np.array([d != "" for d in r.docid], dtype=bool)
        no_dup(r.qid[has], r.docid[has].astype(str))
    else:  # DataFrame
        ids = r.iloc[:, 0].to_numpy()
        assert len(r) and ids.min() >= 1 and np.unique(ids).size == ids.size
        if kind == "ohsumed_queries":
            assert (r["B"].str.len() > 0).all() and (r["W"].str.len() > 0).all()


class _Hang(Exception):
    pass


def _on_alarm(signum, frame):
    raise _Hang()


def _bpmf_mutant(rng: random.Random, p: Path) -> None:
    tr = np.array([[1, 10, 5], [2, 10, 3], [2, 11, 1]], dtype=np.float64)
    pr = np.array([[1, 11, 4], [3, 12, 2]], dtype=np.float64)
    arrays = {"train_vec": tr, "probe_vec": pr}
    op = rng.randrange(6)
    a = arrays[rng.choice(("train_vec", "probe_vec"))]
    if op == 0:
        a[rng.randrange(a.shape[0]), rng.randrange(3)] = rng.choice((0, -1, 0.5, 6, np.nan, np.inf, 1e30, 2.0**60))
    elif op == 1:
        arrays["probe_vec"] = np.vstack([pr, tr[rng.randrange(3)]])
    elif op == 2:
        arrays[rng.choice(("train_vec", "probe_vec"))] = rng.choice((np.zeros((2, 2)), np.zeros(3), np.array(["a"])))
    elif op == 3:
        del arrays[rng.choice(("train_vec", "probe_vec"))]
    savemat(p, arrays)
    if op >= 4:  # byte-level corruption of the file
        b = bytearray(p.read_bytes())
        for _ in range(rng.randrange(1, 8)):
            b[rng.randrange(len(b))] = rng.randrange(256)
        p.write_bytes(bytes(b[: rng.randrange(len(b) + 1)]) if op == 5 else bytes(b))


N_FUZZ = 1000


@pytest.mark.parametrize("kind", sorted(SAMPLES))
def test_fuzz_reader_documented_outcomes_only(tmp_path, kind):
    """1,000 seeded mutants of a valid sample: each either parses into data that satisfies
    every documented invariant, or raises ReaderError 'file:line: ...' (line within the file);
    never another exception, never more than 2 s (SIGALRM breaks a hang)."""
    fname, text = SAMPLES[kind]
    reader = lambda f: read(kind, f)  # noqa: E731
    p = tmp_path / fname
    if text is not None:  # the valid sample itself parses
        p.write_text(text, encoding="latin-1")
        _check_parsed(kind, reader(p))
    old = signal.signal(signal.SIGALRM, _on_alarm)
    outcomes = {"parsed": 0, "error": 0}
    try:
        for seed in range(N_FUZZ):
            rng = random.Random(f"{kind}-{seed}")
            p = tmp_path / f"{seed}-{fname}"  # a new file each time: rewriting one in place is slow on ext4
            if text is None:
                _bpmf_mutant(rng, p)
                n_lines = 0
            else:
                mutant = _mutate(text, rng)
                p.write_bytes(mutant.encode("latin-1"))
                n_lines = len(mutant.encode("latin-1").decode("latin-1").splitlines())
            signal.setitimer(signal.ITIMER_REAL, 2.0)
            try:
                r = reader(p)
            except R.ReaderError as e:
                outcomes["error"] += 1
                assert e.path == str(p) and 0 <= e.line <= max(n_lines, 1), (seed, str(e))
                assert str(e).startswith(f"{p}:{e.line}: " if e.line else f"{p}: "), (seed, str(e))
                continue
            except _Hang:
                pytest.fail(f"{kind} seed {seed}: no result within 2 s")
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
                p.unlink()
            outcomes["parsed"] += 1
            _check_parsed(kind, r)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    # both outcomes occur: the mutants are neither all trivially broken nor all harmless
    assert outcomes["parsed"] > 20 and outcomes["error"] > 200, outcomes
