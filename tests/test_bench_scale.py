"""scripts/bench_scale.py --quick (issue 46, item 3): the record's schema and that every curve has
at least three points.  No timing is asserted (the machine is shared).  The generated data are
checked against independent computations (brute force).  The tests of the --quick run (about a
minute) are marked ``long`` (`make test-long`)."""
import importlib.util
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from conftest import ROOT

SCRIPT = ROOT / "scripts" / "bench_scale.py"


def _module():
    sys.path.insert(0, str(SCRIPT.parent))
    spec = importlib.util.spec_from_file_location("bench_scale", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    out = tmp_path_factory.mktemp("scale")
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    subprocess.run([sys.executable, str(SCRIPT), "--quick", "--out", str(out / "scale.json"), "--figures",
                    str(out / "fig")], check=True, env=env, cwd=ROOT, capture_output=True, timeout=900)
    return json.loads((out / "scale.json").read_text()), out


@pytest.mark.long
def test_the_record_says_when_where_and_under_what_load(quick):
    r, _ = quick
    for key in ("date", "commit", "machine", "machine_detail", "load_average_start", "load_average_end", "settings",
                "points", "skipped", "bends", "peers", "figures", "command", "wall_s"):
        assert key in r, key
    assert r["quick"] is True and r["machine_detail"]["cpu_count"] >= 1 and "platform" in r["machine_detail"]
    assert len(r["load_average_start"]) == 3 and len(r["load_average_end"]) == 3
    assert r["settings"]["gp_em_iters"] >= 1 and r["settings"]["gp_tol"] == 0.0


@pytest.mark.long
def test_every_point_has_its_schema(quick):
    r, _ = quick
    for p in r["points"]:
        for key in ("curve", "what", "learner", "label", "size", "seconds", "repeats", "date", "commit", "machine"):
            assert key in p, (key, p)
        assert p["seconds"] > 0 and p["repeats"] >= 1 and p[p["x"]] == p["size"]
        if p["curve"].startswith("online"):
            assert p["rounds_per_s"] == pytest.approx(p["rounds"] / p["seconds"])
        if p["curve"] == "letor":  # memory where asked: the process's peak, data included
            assert p["peak_rss_mb"] >= p["rss_before_fit_mb"] > 0 and p["pairs"] > 0 and p["documents"] > 0


@pytest.mark.long
def test_every_curve_has_at_least_three_points(quick):
    r, _ = quick
    curves = {}
    for p in r["points"]:
        curves.setdefault((p["curve"], p["learner"]), set()).add(p["size"])
    want = ({("online_width", x) for x in ("prank", "oap_bpm", "widrow_hoff", "mcp")} | {("online_ensemble", "oap_bpm")}
            | {("letor", x) for x in ("committee_a", "ranksvm", "rankboost", "lgbm_lambdarank")}
            | {(c, x) for c in ("gp_users", "gp_items") for x in ("gpr", "cgpr", "gpor", "cgpor")})
    assert set(curves) == want
    assert all(len(sizes) >= 3 for sizes in curves.values()), curves


@pytest.mark.long
def test_the_figures_are_written(quick):
    r, out = quick
    assert set(r["figures"]) >= {"scale_online_width.png", "scale_online_ensemble.png", "scale_letor.png",
                                 "scale_letor_memory.png", "scale_gp_users.png", "scale_gp_items.png"}
    for f in r["figures"]:
        assert (out / "fig" / f).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.long
def test_bends_are_the_log_log_slopes_of_the_points(quick):
    r, _ = quick
    for curve, learners in r["bends"].items():
        for learner, b in learners.items():
            pts = sorted((p for p in r["points"] if p["curve"] == curve and p["learner"] == learner),
                         key=lambda p: p["size"])
            y = np.log([p[b["y"]] for p in pts])
            x = np.log([p["size"] for p in pts])
            assert b["slopes"] == pytest.approx(np.round(np.diff(y) / np.diff(x), 2), abs=1e-9)


def test_generated_data_shapes():
    m = _module()
    X, y = m.online_stream(500, 1000, 20)
    assert X.format == "csr" and X.shape == (500, 1000)
    nnz = np.diff(X.indptr)
    assert nnz.max() <= 20 and nnz.mean() > 19  # columns drawn with replacement: a few collide
    assert set(np.unique(y)) == {1, 2, 3, 4, 5}
    X, y, q = m.letor_set(50)
    sizes = np.bincount(q)
    assert X.shape[1] == 136 and sizes.min() >= 61 and sizes.max() <= 183 and y.min() == 0 and y.max() == 4
    # the pairs by brute force: documents of one query with different grades
    brute = sum(int(np.sum(y[q == k][:, None] > y[q == k][None, :])) for k in range(50))
    assert m.n_pairs(y, q) == brute
    K, Y, train, test = m.gp_problem(30, 40, 10)
    assert np.allclose(K, K.T) and np.linalg.eigvalsh(K).min() > -1e-9 and np.allclose(np.diag(K), 1.0)
    assert (Y[:, test] > 0).all() and Y.max() == 5 and 0.2 < (Y[:, train] > 0).mean() < 0.6


def test_a_point_is_skipped_when_predicted_over_the_cap():
    m = _module()
    pts = [{"n": 10, "seconds": 1.0}, {"n": 20, "seconds": 4.0}]
    assert m.predict_next(pts, "seconds", 40, "n") == pytest.approx(16.0)  # slope 2
    pts = [{"n": 10, "seconds": 1.0}, {"n": 20, "seconds": 1.2}]
    assert m.predict_next(pts, "seconds", 40, "n") == pytest.approx(2.4)  # slope at least 1
