"""Trials are seeded per trial: results do not depend on n_jobs, backend or order."""
import pandas as pd
import pytest

from rankrepro.pipeline.catalog import load_experiment
from rankrepro.pipeline.runner import run_cell
from rankrepro.pipeline.seeding import trial_seeds
from rankrepro.io import atomic_write, write_parquet


@pytest.fixture(scope="module")
def exp():
    return load_experiment("harrington2003/table1", "smoke")


@pytest.mark.parametrize("cell", ["oap_bpm-tau0.3", "prank", "widrow_hoff-eta0.1"])
def test_bit_identical_across_n_jobs(exp, cell):
    a = run_cell(exp, cell, n_jobs=1)
    b = run_cell(exp, cell, n_jobs=2)
    pd.testing.assert_frame_equal(a, b, check_exact=True)


def test_order_of_trials_does_not_matter(exp):
    a = run_cell(exp, "oap_vp-tau0.6", n_jobs=1)
    b = run_cell(exp, "oap_vp-tau0.6", n_jobs=1, trials=[1, 0])
    pd.testing.assert_frame_equal(a, b, check_exact=True)


def test_threading_backend_identical(exp):
    a = run_cell(exp, "oap_bagg-tau0.3", n_jobs=1)
    b = run_cell(exp, "oap_bagg-tau0.3", n_jobs=2, backend="threading")
    pd.testing.assert_frame_equal(a, b, check_exact=True)


def test_tidy_layout(exp):
    df = run_cell(exp, "oap_bpm-tau0.3")
    assert list(df.columns) == ["paper", "artefact", "cell", "algorithm", "params", "trial", "metric", "round", "value"]
    assert set(df["trial"]) == set(range(exp.n_trials))
    curve = df[df.metric == "online_rank_loss"]
    assert curve["round"].notna().all() and curve["round"].max() == exp.n_train
    test = df[df.metric == "test_rank_loss"]
    assert len(test) == exp.n_trials and test["round"].isna().all()


def test_common_random_numbers_and_distinct_algorithm_seeds():
    d1, a1 = trial_seeds(5, 3, "oap_bpm-tau0.3")
    d2, a2 = trial_seeds(5, 3, "oap_bpm-tau0.6")
    assert d1.generate_state(4).tolist() == d2.generate_state(4).tolist()  # same data for every cell
    assert a1.generate_state(4).tolist() != a2.generate_state(4).tolist()
    d3, _ = trial_seeds(5, 4, "oap_bpm-tau0.3")
    assert d3.generate_state(4).tolist() != d1.generate_state(4).tolist()


def test_atomic_write_leaves_nothing_on_failure(tmp_path):
    target = tmp_path / "x.parquet"

    def boom(tmp):
        with open(tmp, "w") as f:
            f.write("partial")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        atomic_write(target, boom)
    assert list(tmp_path.iterdir()) == []
    write_parquet(pd.DataFrame({"a": [1]}), target)
    assert pd.read_parquet(target)["a"].tolist() == [1]


def test_batched_cells_equal_per_cell_runs(tmp_path, config_dir):
    from rankrepro.jobs import job_run_all_cells

    out = tmp_path / "all.parquet"
    job_run_all_cells("crammer_singer2005/fig6", "smoke", str(config_dir), str(out))
    exp = load_experiment("crammer_singer2005/fig6", "smoke", config_dir=config_dir)
    # the batch holds the sensitivity cells too (Fig. 6 sweeps MCP's tie rule)
    ref = pd.concat([run_cell(exp, c.id) for c in exp.all_cells], ignore_index=True)
    pd.testing.assert_frame_equal(pd.read_parquet(out), ref, check_exact=True)


def test_trials_run_with_one_blas_thread(monkeypatch):
    """A trial's numbers must not depend on the machine's BLAS thread count (a threaded
    least-squares fit differs in the last bits): every trial runs with one BLAS thread."""
    from threadpoolctl import threadpool_info, threadpool_limits

    from rankrepro import protocols

    seen = []

    def probe(spec):
        seen.extend(p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas")
        return [("test_rank_loss", None, 0.0)]

    monkeypatch.setattr(protocols.PROTOCOLS["online"], "run", probe)
    exp = load_experiment("harrington2003/table1", "smoke")
    with threadpool_limits(limits=2, user_api="blas"):
        run_cell(exp, exp.cells[0].id, n_jobs=1)
    assert seen and set(seen) == {1}


def test_a_cell_job_loads_neither_the_claims_nor_the_cross_field_checks(tmp_path):
    """A cell job reads the config the workflow checked in full when it started: the claims'
    kinds and statistics (SciPy's) and the checks across keys are not imported (~0.15 s of
    every job's start-up), and the job's cell is written."""
    import subprocess
    import sys
    from pathlib import Path

    from rankrepro.pipeline.catalog import resolved_path, write_resolved

    root = Path(__file__).resolve().parents[1]
    # what the workflow writes when it starts (in this scratch folder, the job's working directory)
    write_resolved(load_experiment("elsas2008/sec3_table", "smoke"), tmp_path / resolved_path("elsas2008/sec3_table", "smoke"))
    out = tmp_path / "cell.parquet"
    code = ("import sys\nfrom rankrepro.jobs import job_run_cell\n"
            f"job_run_cell('elsas2008/sec3_table', 'list-rankingRNRNRN', 'smoke', {str(root / 'config')!r}, {str(out)!r})\n"
            "print(sorted(m for m in ('rankrepro.claims', 'rankrepro.stats', 'rankrepro.pipeline.cross_checks',"
            " 'scipy.stats') if m in sys.modules))")
    r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[]", r.stdout + r.stderr
    assert len(pd.read_parquet(out)) > 0
