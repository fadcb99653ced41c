"""Fetching: sources in order, sha256 checks, quarantine, absence; the real mirror's files."""
import json
import os
import warnings
from pathlib import Path

import numpy as np
import pytest

from rankrepro.data import fetch as F
from rankrepro.data import registry
from rankrepro.data.preprocess import load, preprocess, query_minmax
from rankrepro.data.registry import DatasetEntry

MIRROR = Path(os.environ.get(F.MIRROR_ENV) or Path(__file__).resolve().parents[2] / "shared" / "datasets")
HAVE_MIRROR = (MIRROR / "SHA256SUMS").is_file()


@pytest.fixture
def toy(tmp_path, monkeypatch):
    """A registered toy data set with a mirror holding its two files."""
    mirror = tmp_path / "mirror"
    (mirror / "toy").mkdir(parents=True)
    (mirror / "toy" / "u.data").write_text("1\t2\t3\t4\n2\t2\t5\t5\n")
    (mirror / "toy" / "README").write_text("toy data\n")
    entry = DatasetEntry(name="toy", title="toy", home="https://example.invalid/toy", licence="none",
                         files={"u.data": F.sha256(mirror / "toy" / "u.data"),
                                "README": F.sha256(mirror / "toy" / "README")},
                         kind="ratings", reader="movielens_100k", data_files=("u.data",), mirror_dir="toy",
                         obtain="Ask the toy keeper.")
    monkeypatch.setitem(registry.DATASETS, "toy", entry)
    monkeypatch.setenv(F.OFFLINE_ENV, "1")
    return entry, mirror, F.Paths.under(tmp_path / "data")


def test_fetch_from_mirror_verifies_and_writes_manifest(toy):
    entry, mirror, paths = toy
    man = F.fetch("toy", paths=paths, mirror=mirror, log=lambda m: None)
    rec = json.loads(man.read_text())
    assert rec["files"]["u.data"]["sha256"] == entry.files["u.data"] and "mirror" in rec["files"]["u.data"]["source"]
    assert F.availability("toy", paths, mirror).state == "verified"
    # second fetch uses the verified local copy, even without the mirror
    man2 = F.fetch("toy", paths=paths, mirror=Path("/nonexistent"), log=lambda m: None)
    assert json.loads(man2.read_text())["files"]["u.data"]["source"] == "data/raw"


def test_corrupt_mirror_file_is_refused_and_quarantined(toy):
    entry, mirror, paths = toy
    (mirror / "toy" / "u.data").write_text("1\t2\t3\t4\n")  # not the registered content
    with pytest.raises(F.ChecksumError) as err:
        F.fetch("toy", paths=paths, mirror=mirror, log=lambda m: None)
    msg = str(err.value)
    assert entry.files["u.data"] in msg and F.sha256(mirror / "toy" / "u.data") in msg
    assert not (paths.raw / "toy" / "u.data").exists()
    assert not (paths.raw / "toy" / F.MANIFEST).exists()
    q = list((paths.quarantine / "toy").iterdir())
    assert len(q) == 1 and q[0].read_text() == "1\t2\t3\t4\n"
    assert (mirror / "toy" / "u.data").exists()  # the mirror itself is left alone


def test_corrupt_local_file_is_replaced_from_mirror(toy):
    entry, mirror, paths = toy
    F.fetch("toy", paths=paths, mirror=mirror, log=lambda m: None)
    (paths.raw / "toy" / "u.data").write_text("tampered\n")
    F.fetch("toy", paths=paths, mirror=mirror, log=lambda m: None)
    assert F.sha256(paths.raw / "toy" / "u.data") == entry.files["u.data"]
    assert len(list((paths.quarantine / "toy").iterdir())) == 1


def test_absent_data_says_how_to_obtain(toy):
    _, _, paths = toy
    with pytest.raises(F.DataUnavailable, match="Ask the toy keeper"):
        F.fetch("toy", paths=paths, mirror=Path("/nonexistent"), log=lambda m: None)
    a = F.availability("toy", paths, Path("/nonexistent"))
    assert a.state == "absent" and not a.usable and "Ask the toy keeper" in a.how_to_obtain


def test_unpinned_file_is_accepted_with_warning(toy, monkeypatch):
    entry, mirror, paths = toy
    monkeypatch.setitem(registry.DATASETS, "toy", DatasetEntry(**{**entry.__dict__, "files": {"u.data": None,
                                                                                              "README": None}}))
    with pytest.warns(UserWarning, match="no pinned sha256"):
        man = F.fetch("toy", paths=paths, mirror=mirror, log=lambda m: None)
    assert json.loads(man.read_text())["files"]["u.data"]["pinned"] is False


def test_substitute_resolution(toy, monkeypatch):
    entry, mirror, paths = toy
    monkeypatch.setitem(registry.DATASETS, "gone", DatasetEntry(
        name="gone", title="gone", home="x", licence="x", files={"a": None}, kind="ratings",
        reader="movielens_100k", data_files=("a",), obtain="withdrawn", substitutes=("toy",)))
    a = F.resolve("gone", paths, mirror)
    assert not a.usable and a.substitute == "toy"
    a = F.resolve("gone", paths, Path("/nonexistent"))
    assert a.substitute is None and a.alternatives_tried == ["toy"]


def test_preprocess_and_load(toy):
    _, mirror, paths = toy
    F.fetch("toy", paths=paths, mirror=mirror, log=lambda m: None)
    out = preprocess("toy", paths=paths)
    man = json.loads((out.parent / "manifest.json").read_text())
    assert man["sources"]["u.data"] == registry.DATASETS["toy"].files["u.data"]
    d = load("toy", paths=paths)
    assert d["user"].tolist() == [1, 2] and d["score"].tolist() == [3.0, 5.0]


def test_query_minmax():
    X = np.array([[1.0, 5.0], [3.0, 5.0], [2.0, 7.0], [10.0, 0.0]])
    q = np.array([1, 1, 1, 2])
    np.testing.assert_allclose(query_minmax(X, q), [[0, 0], [1, 0], [0.5, 1], [0, 0]])


# ---------------------------------------------------------------------------------------
# the real files (CI points RANKREPRO_DATA_MIRROR at ../shared/datasets)
# ---------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def real(tmp_path_factory):
    if not HAVE_MIRROR:
        from conftest import NO_MIRROR

        pytest.skip(NO_MIRROR)
    paths = F.Paths.under(tmp_path_factory.mktemp("data"))
    return paths


REAL = ["movielens-100k", "movielens-1m-bpmf", "cystic-fibrosis", "ohsumed-queries", "letor2-ohsumed",
        "letor4-mq2008"]


@pytest.mark.parametrize("name", REAL)
def test_real_mirror_verifies_and_matches_official_statistics(real, name):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # every file of these is pinned
        F.fetch(name, paths=real, mirror=MIRROR, allow_network=False, log=lambda m: None)
    preprocess(name, paths=real)
    d = load(name, paths=real)
    st = registry.DATASETS[name].stats
    if "ratings" in st:
        assert d["user"].size == st["ratings"]
        assert np.unique(d["user"]).size == st["users"] and np.unique(d["item"]).size == st["items"]
    elif name == "cystic-fibrosis":
        assert np.unique(d["query"]).size == 100 and d["query"].size == 4_819 and d["scores"].shape == (4_819, 4)
    elif name == "ohsumed-queries":
        assert d["id"].size == 106
    elif name == "letor4-mq2008":
        assert d["y"].size == 15_211 and np.unique(d["qid"]).size == 784 and d["X"].shape[1] == 46
        assert np.bincount(d["y"]).tolist() == [12_279, 2_001, 931]
        assert d["X"].min() >= 0 and d["X"].max() <= 1
    elif name == "letor2-ohsumed":
        for k in range(1, 6):
            m = d["fold"] == k
            assert m.sum() == 16_140 and np.unique(d["qid"][m]).size == 106
            assert np.bincount(d["y"][m]).tolist() == [11_303, 2_585, 2_252]
        assert d["X"].shape[1] == 25


def test_rating_filters_and_centring():
    from rankrepro.data.ratings import centre, filter_min_ratings, to_rank

    user = np.array([1, 1, 1, 2, 2, 3, 3, 3, 3])
    item = np.array([1, 2, 3, 1, 2, 1, 2, 3, 4])
    keep = filter_min_ratings(user, item, min_user=3)
    assert keep.tolist() == [True] * 3 + [False] * 2 + [True] * 4
    keep = filter_min_ratings(user, item, min_item=2)  # item 4 has one rating
    assert keep.tolist() == [True] * 8 + [False]
    keep = filter_min_ratings(user, item, min_user=4, min_item=2, iterate=True)
    assert not keep.any()  # dropping item 4 leaves user 3 with 3 ratings, below 4
    np.testing.assert_allclose(centre([0, 0.2, 1.0], (0, 0.2, 0.4, 0.6, 0.8, 1)), [-0.5, -0.3, 0.5])
    np.testing.assert_allclose(centre([1, 3, 5], (1, 2, 3, 4, 5)), [-0.5, 0.0, 0.5])
    assert to_rank(np.array([0.0, 0.6, 1.0]), (0, 0.2, 0.4, 0.6, 0.8, 1)).tolist() == [1, 4, 6]
    with pytest.raises(ValueError):
        to_rank(np.array([0.3]), (0, 0.2, 0.4))


@pytest.fixture
def http_root(tmp_path):
    """A real HTTP server on loopback serving tmp_path/www."""
    import functools
    import http.server
    import threading

    www = tmp_path / "www"
    www.mkdir()
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(www))
    handler.log_message = lambda *a, **k: None
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    yield www, f"http://127.0.0.1:{srv.server_address[1]}"
    srv.shutdown()


def test_download_from_home_page_file_and_archive(tmp_path, http_root, monkeypatch):
    import zipfile

    www, base = http_root
    (www / "u.data").write_text("1\t2\t3\t4\n")
    with zipfile.ZipFile(www / "pack.zip", "w") as z:
        z.writestr("pack/README", "readme\n")
    monkeypatch.delenv(F.OFFLINE_ENV, raising=False)
    entry = DatasetEntry(name="web", title="web", home=base, licence="none",
                         files={"u.data": F.sha256(www / "u.data"), "README": None},
                         kind="ratings", reader="movielens_100k", data_files=("u.data",),
                         urls={"u.data": f"{base}/u.data"},
                         archive=registry.Archive(f"{base}/pack.zip", {"pack/README": "README"}))
    monkeypatch.setitem(registry.DATASETS, "web", entry)
    paths = F.Paths.under(tmp_path / "data")
    assert F.availability("web", paths, Path("/nonexistent")).state == "download"
    with pytest.warns(UserWarning, match="no pinned sha256"):
        man = F.fetch("web", paths=paths, mirror=Path("/nonexistent"), log=lambda m: None)
    rec = json.loads(man.read_text())["files"]
    assert rec["u.data"]["source"] == f"{base}/u.data" and "pack.zip" in rec["README"]["source"]
    assert (paths.raw / "web" / "README").read_text() == "readme\n"
    # a corrupted download is refused and kept apart
    (www / "u.data").write_text("9\t9\t9\t9\n")
    (paths.raw / "web" / "u.data").unlink()
    with pytest.raises(F.ChecksumError, match="does not match"):
        F.fetch("web", paths=paths, mirror=Path("/nonexistent"), log=lambda m: None)
    assert any(p.name.startswith("u.data.") for p in (paths.quarantine / "web").iterdir())


def test_download_retries_then_gives_up(tmp_path, monkeypatch):
    monkeypatch.setattr(F.time, "sleep", lambda s: None)
    with pytest.raises(F.DataUnavailable, match="after 3 tries"):
        F.download("http://127.0.0.1:9/nothing", tmp_path / "x", retries=3, timeout=1)


def test_without_probe_only_files_decide(tmp_path, monkeypatch):
    """What the workflow decides when it is parsed (no --config download=true): a data set
    neither verified nor in the mirror is absent, its home page not tried (no network)."""
    monkeypatch.delenv(F.OFFLINE_ENV, raising=False)

    def no_network(*a, **k):
        raise AssertionError("the home page was tried")

    monkeypatch.setattr(F, "_host_reachable", no_network)
    entry = DatasetEntry(name="web", title="web", home="http://example.invalid/", licence="none",
                         files={"u.data": None}, kind="ratings", reader="movielens_100k", data_files=("u.data",),
                         urls={"u.data": "http://example.invalid/u.data"})
    monkeypatch.setitem(registry.DATASETS, "web", entry)
    a = F.availability("web", F.Paths.under(tmp_path / "data"), Path("/nonexistent"), probe=False)
    assert a.state == "absent" and "home page not tried" in a.reason
    from rankrepro.data.status import data_status

    monkeypatch.chdir(tmp_path)  # data/raw here is empty
    monkeypatch.delenv(F.MIRROR_ENV, raising=False)
    st = data_status("web", probe=False)
    assert not st.runnable and "home page not tried" in st.reason
    assert data_status(None).runnable  # generated data: nothing to have
