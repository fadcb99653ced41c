"""Readers on small files written in each official format, malformed input, and fuzzing."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.io import savemat

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
        "cfquery": R.read_cfquery, "ohsumed_queries": R.read_ohsumed_queries, "ohsumed_judged": R.read_ohsumed_judged,
        "letor": lambda p: R.read_letor(p, n_features=3, max_label=2),
        "letor2_tsv": lambda p: R.read_letor2_tsv(p, n_features=25),
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
    j = R.read_cfquery(write(tmp_path, "cfquery"))
    assert j.query.tolist() == [1, 1, 1, 2]
    assert j.doc.tolist() == [139, 151, 166, 169]
    assert j.scores.tolist() == [[1, 2, 2, 2], [2, 2, 1, 1], [0, 0, 0, 1], [1, 0, 0, 0]]
    assert len(j.judges) == 4


def test_cfquery_nr_mismatch(tmp_path):
    p = tmp_path / "cfquery"
    p.write_text("QN 00001\nQU q\nNR 00002\nRD  139 1222\n")
    with pytest.raises(R.ReaderError, match=r"cfquery:1: query 1: NR says 2 documents, RD lists 1"):
        R.read_cfquery(p)


def test_ohsumed(tmp_path):
    q = R.read_ohsumed_queries(write(tmp_path, "queries"))
    assert q["id"].tolist() == [1, 2] and q["W"][0] == "Estrogen therapy"
    j = R.read_ohsumed_judged(write(tmp_path, "judged"))
    assert j.scores.tolist() == [[2, -1, -1], [0, 1, -1], [-1, 2, 0]]


def test_letor_formats(tmp_path):
    d = R.read_letor(write(tmp_path, "letor.txt"), n_features=3, max_label=2)
    np.testing.assert_array_equal(d.X, [[0.5, 0.25, 1], [0.1, 0, 0.2], [0, 0.7, 0]])
    assert d.y.tolist() == [2, 0, 1] and d.qid.tolist() == [10, 10, 11] and d.docid.tolist() == ["GX001", "GX002", ""]
    d = R.read_letor2_tsv(write(tmp_path, "letor2.tsv"))
    assert d.X.shape == (2, 25) and d.y.tolist() == [2, 0] and d.docid.tolist() == ["40626", "11852"]


def test_yahoo_sparse_line(tmp_path):
    p = tmp_path / "set1.train.txt"
    p.write_text("4 qid:1 5:0.5 700:1.0\n0 qid:1 1:0.25\n")
    d = R.read_letor(p, n_features=700, max_label=4)
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
        R.read_letor(tmp_path / "nope.txt")


_junk = st.text(alphabet=st.characters(codec="latin-1", exclude_characters="\n\r\x0b\x0c\x1c\x1d\x1e\x85"),
                max_size=40)


@pytest.mark.parametrize("fixture", sorted(FIXTURES))
@given(data=st.data())
def test_fuzz_readers_fail_only_with_reader_error(tmp_path_factory, fixture, data):
    """Replace, truncate or insert a random line: the reader parses or raises ReaderError."""
    kind, text = FIXTURES[fixture]
    lines = text.splitlines()
    i = data.draw(st.integers(0, len(lines) - 1))
    op = data.draw(st.sampled_from(["replace", "truncate", "insert", "mutate"]))
    junk = data.draw(_junk)
    if op == "replace":
        lines[i] = junk
    elif op == "insert":
        lines.insert(i, junk)
    elif op == "truncate":
        lines = lines[:i] + [lines[i][: data.draw(st.integers(0, len(lines[i])))]]
    else:
        j = data.draw(st.integers(0, max(0, len(lines[i]) - 1)))
        lines[i] = lines[i][:j] + junk + lines[i][j + 1:]
    p = tmp_path_factory.mktemp("fuzz") / fixture
    p.write_text("\n".join(lines) + "\n", encoding="latin-1")
    try:
        read(kind, p)
    except R.ReaderError as e:
        assert str(p) in str(e)
