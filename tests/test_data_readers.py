"""Readers on small files written in each official format, malformed input, and fuzzing."""
import numpy as np
import pytest
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
        "letor2_tsv": lambda p: R.read_letor2_tsv(p, n_features=25, max_label=2),
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
    savemat(p, {"train_vec": np.array([[1, 10, 3], [2, 10, 3.5]]), "probe_vec": np.array([[1, 10, 1]])})
    with pytest.raises(R.ReaderError, match=r"train_vec row 2: \[2.0, 10.0, 3.5\] is not three integers"):
        R.read_movielens_bpmf(p)
    savemat(p, {"train_vec": np.array([[1, 10, 3], [2, 10, 3]]), "probe_vec": np.array([[1, 10, 1]])})
    with pytest.raises(R.ReaderError, match=r"duplicate \(user, movie\) rating \(1, 10\): rows 1 and 3"):
        R.read_movielens_bpmf(p)
    p.write_bytes(b"not a mat file")
    with pytest.raises(R.ReaderError, match="not a MATLAB 5.0 MAT-file"):
        R.read_movielens_bpmf(p)


def test_bpmf_reader_agrees_with_scipy(tmp_path):
    """The own MAT v5 reader and scipy.io.loadmat read the same matrices (compressed or not)."""
    from scipy.io import loadmat

    rng = np.random.default_rng(3)
    mats = {"a": rng.integers(0, 60000, size=(50, 3)).astype(np.uint16), "b": rng.normal(size=(4, 7)),
            "c": np.arange(6, dtype=np.int64).reshape(2, 3), "d": np.zeros((0, 3)), "e": np.float32([[1.5]])}
    for compress in (False, True):
        p = tmp_path / f"m{compress}.mat"
        savemat(p, {**mats, "text": "skipped", "cell": np.array([1, "x"], dtype=object)}, do_compression=compress)
        ours, ref = R.read_mat_numeric(p), loadmat(p)
        assert sorted(ours) == sorted(mats)
        for k in mats:
            np.testing.assert_array_equal(ours[k], ref[k])
            assert ours[k].shape == ref[k].shape


def test_letor_parts_of_a_fold_are_disjoint(tmp_path):
    from rankrepro.data.preprocess import _check_disjoint

    files = ["Fold1/trainingset.txt", "Fold1/testset.txt", "Fold2/trainingset.txt"]
    _check_disjoint(tmp_path, files, [(1, "train"), (1, "test"), (2, "train")], [np.array([1, 2]), np.array([3]),
                                                                                    np.array([1, 3])])
    with pytest.raises(R.ReaderError, match="Fold1/testset.txt: query 2 is also in Fold1/trainingset.txt"):
        _check_disjoint(tmp_path, files, [(1, "train"), (1, "test"), (2, "train")],
                        [np.array([1, 2]), np.array([2, 3]), np.array([1])])


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
    # huge integers: an error naming the line, never a bare OverflowError
    ("letor2.tsv", "99999999999999999999\t99999999999999999999_2\t" + " ".join(["0"] * 25) + "\t2\n", 1,
     "qid 99999999999999999999 outside 1..2147483647"),
    ("cfquery", "QN 123456789012345678901234\n", 1, "QN 123456789012345678901234 outside 1..2147483647"),
    ("judged", "1 2 99999999999999999999 d\n", 1, "MEDLINE UI 99999999999999999999 outside"),
    ("letor.txt", "0 qid:1 1:0.5\n0 qid:99999999999 1:0.5\n", 2, "qid 99999999999 outside 1..2147483647"),
    ("u.data", "1\t2\t3\t1e5\n", 1, "timestamp '1e5' is not an integer"),
    ("u.data", "1\t1_0\t3\t5\n", 1, "item '1_0' is not an integer"),
    # ids below 1
    ("u.data", "0\t2\t3\t4\n", 1, "user 0 outside 1.."),
    ("judged", "1 0 87049087 d\n", 1, "document 0 outside 1.."),
    ("queries", ".I 0\n.W\ntext\n", 1, ".I 0 outside 1.."),
    ("letor.txt", "0 qid:0 1:0.5\n", 1, "qid 0 outside 1.."),
    ("letor2.tsv", "1\t1_0\t" + " ".join(["0"] * 25) + "\t2\n", 1, "docid 0 outside 1.."),
    # duplicate records
    ("u.data", "1\t2\t3\t4\n5\t2\t3\t4\n1\t2\t4\t9\n", 3, "duplicate (user, item) rating (1, 2): first at line 1"),
    ("ratings.dat", "1::2::3::4\n1::2::3::4\n", 2, "duplicate (UserID, MovieID) rating (1, 2)"),
    ("Vote.txt", "1\t2\t0.2\t1\t1996-01-01\n1\t2\t0.4\t1\t1996-01-02\n", 2, "duplicate (Person_ID, Movie_ID)"),
    ("cfquery", "QN 00001\nQU q\nNR 00002\nRD  139 1222  139 0000\n", 4, "duplicate (query, document) pair (1, 139): earlier on the same"),
    ("judged", "1 5 87049087 d\n1 5 87049087 n\n", 2, "duplicate (query, document) judgment (1, 5)"),
    ("letor.txt", "0 qid:1 1:0.5 #docid = A\n1 qid:1 1:0.1 #docid = A\n", 2, "duplicate (qid, docid) pair (1, 'A')"),
    ("letor2.tsv", "1\t1_2\t" + " ".join(["0"] * 25) + "\t2\n1\t1_2\t" + " ".join(["1"] * 25) + "\t0\n", 2,
     "duplicate (qid, docid) pair (1, 2): first at line 1"),
    ("queries", ".I 1\n.W\na\n.I 1\n.W\nb\n", 4, "duplicate query .I 1"),
    ("cfquery", "QN 00001\nQU q\nNR 00001\nRD  139 1222\nQN 00001\nQU q\nNR 00001\nRD  140 1222\n", 5,
     "duplicate query number QN 1"),
    # a query's rows split into non-contiguous blocks
    ("letor.txt", "0 qid:1 1:0.5\n0 qid:2 1:0.5\n1 qid:1 1:0.1\n", 3, "query 1: its rows are split into non-contiguous"),
    ("letor2.tsv", "".join(f"{q}\t{q}_{d}\t" + " ".join(["0"] * 25) + "\t0\n" for q, d in ((1, 1), (2, 1), (1, 2))), 3,
     "query 1: its rows are split"),
    ("judged", "1 5 87049087 d\n2 5 87049087 d\n1 6 87049088 d\n", 3, "query 1: its rows are split"),
    # absurd or non-finite values
    ("letor.txt", "0 qid:1 1:1e13\n", 1, "feature 1 1e13 beyond the plausible magnitude 1e+12"),
    ("letor2.tsv", "1\t1_2\t" + " ".join(["0"] * 24) + " nan\t2\n", 1, "feature 25 'nan' is not finite"),
    ("letor.txt", "0 qid:1 1:inf\n", 1, "not finite"),
    ("Vote.txt", "1\t2\t0.2\t-1\t1996-01-01\n", 1, "Weight -1.0 is negative"),
    ("Vote.txt", "1\t2\t0.2\t1\tnow\n", 1, "Modified 'now' is not a date-time"),
    ("letor2.tsv", "1\t1_2\t" + " ".join(["0"] * 25) + "\t3\n", 1, "label 3 outside 0..2"),
    # queries without text, records out of place
    ("queries", ".I 1\n.B\npatient\n.I 2\n.W\ntext\n", 1, "query 1: no .W text"),
    ("queries", ".I 1\nstray text\n.W\ntext\n", 2, "text outside a .B or .W field"),
    ("queries", ".I 1\n.W\na\n.W\nb\n", 4, "query 1: a second .W"),
    ("cfquery", "QN 00001\nNR 00001\nRD  139 1222\n", 1, "query 1: no QU text"),
    ("cfquery", "QN 00001\nQU q\nRD  139 1222\n", 1, "query 1: no NR record"),
    ("cfquery", "QN 00001\nQU q\nNR 00001\n   00002\nRD  139 1222\n", 4, "continuation line after NR"),
    ("cfquery", "QN 00001\nQU q\nNR 00001\nNR 00001\n", 4, "a second NR"),
    ("cfquery", "NR 00001\n", 1, "NR before any QN"),
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
