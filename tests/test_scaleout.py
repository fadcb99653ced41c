"""Scale-out on existing engines: one experiment's trials on a dask.distributed LocalCluster
(a real scheduler and worker processes over loopback) give results identical to local
joblib; the SLURM and local Snakemake profiles are valid."""
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from rankrepro.pipeline import load_experiment
from rankrepro.pipeline.jobs import job_run_cell, trial_backend
from rankrepro.pipeline.runner import run_cell

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def cluster():
    from distributed import LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                      host="127.0.0.1") as lc:
        yield lc


def test_trials_on_a_dask_cluster_equal_local_joblib(cluster, tmp_path):
    from distributed import Client, get_task_stream

    exp = load_experiment("harrington2003/table1", "smoke")
    cell = "oap_bpm-tau0.3"
    local = run_cell(exp, cell, n_jobs=1)
    with Client(cluster.scheduler_address) as client:
        assert len(client.scheduler_info()["workers"]) == 2
        with get_task_stream(client) as ts:
            remote = run_cell(exp, cell, n_jobs=-1, backend="dask")
        assert len(ts.data) >= exp.n_trials  # the trials ran as tasks on the cluster's workers
    pd.testing.assert_frame_equal(local, remote)
    # the Snakemake job entry point, pointed at the scheduler (config key dask_scheduler)
    out = tmp_path / "cell.parquet"
    job_run_cell("harrington2003/table1", cell, "smoke", str(ROOT / "config"), str(out), threads=2,
                 backend="dask", scheduler=cluster.scheduler_address)
    pd.testing.assert_frame_equal(pd.read_parquet(out), local)


def test_unknown_backend_is_refused_before_any_work():
    with pytest.raises(ValueError, match="backend"):
        with trial_backend("spark", 2):
            pass


@pytest.mark.parametrize("profile", ["default", "slurm"])
def test_profiles_are_valid_snakemake_options(profile):
    cfg = yaml.safe_load((ROOT / "profiles" / profile / "config.yaml").read_text())
    assert cfg.get("rerun-incomplete") is True
    if profile == "slurm":
        assert cfg["executor"] == "slurm" and "default-resources" in cfg
        assert set(cfg["set-threads"]) <= {"run_cell", "run_all_cells"}
    # every key is an option of this Snakemake's command line
    help_text = subprocess.run([str(Path(sys.executable).parent / "snakemake"), "--help"], capture_output=True,
                               text=True, check=True).stdout
    for key in cfg:
        assert f"--{key}" in help_text, key
