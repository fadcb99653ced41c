"""Scale-out on existing engines: one experiment's trials on a real dask.distributed cluster
(`dask scheduler` and two `dask worker` processes started as separate programs, over loopback)
give results identical to local joblib, also when a worker is killed midway; the SLURM and
local Snakemake profiles are valid (the SLURM profile against a running SLURM:
tests/test_engines.py)."""
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
import yaml

from rankrepro.pipeline.catalog import load_experiment
from rankrepro.jobs import job_run_cell, trial_backend
from rankrepro.pipeline.runner import run_cell

ROOT = Path(__file__).resolve().parents[1]
DASK = Path(sys.executable).parent / "dask"


def _stop(procs):
    """SIGTERM, SIGKILL after 15 s; in the order given (the workers before their scheduler, else
    they wait for it to come back before leaving)."""
    for p in procs:
        if p.poll() is None:
            p.terminate()
        try:
            p.wait(timeout=15)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


@pytest.fixture(scope="module")
def dask_cluster(tmp_path_factory):
    """`dask scheduler` on 127.0.0.1 (a free port chosen by the system, read back from its
    scheduler file) and two single-threaded `dask worker` processes without nanny (so that the
    worker is the process started here, and killing it kills the worker).  Stopped whatever
    happens."""
    d = tmp_path_factory.mktemp("dask")
    sched_file = d / "scheduler.json"
    procs = []
    try:
        procs.append(subprocess.Popen([str(DASK), "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                                       "--scheduler-file", str(sched_file)],
                                      stdout=subprocess.DEVNULL, stderr=open(d / "scheduler.log", "w")))
        deadline = time.monotonic() + 60
        while not (sched_file.is_file() and sched_file.stat().st_size):
            assert procs[0].poll() is None, (d / "scheduler.log").read_text()[-3000:]
            assert time.monotonic() < deadline, "dask scheduler did not start"
            time.sleep(0.1)
        time.sleep(0.1)  # the file is written at once, but be sure it is complete
        address = json.loads(sched_file.read_text())["address"]
        assert address.startswith("tcp://127.0.0.1:"), address
        for i in range(2):
            procs.append(subprocess.Popen([str(DASK), "worker", address, "--nthreads", "1", "--no-nanny",
                                           "--no-dashboard", "--host", "127.0.0.1", "--name", f"w{i}"],
                                          stdout=subprocess.DEVNULL, stderr=open(d / f"worker{i}.log", "w")))
        from distributed import Client

        with Client(address, timeout=60) as client:
            client.wait_for_workers(2, timeout=60)
        yield {"address": address, "workers": procs[1:], "logs": d}
    finally:
        _stop(procs[1:] + procs[:1])


def test_trials_on_a_dask_cluster_equal_local_joblib(dask_cluster, tmp_path):
    from distributed import Client, get_task_stream

    exp = load_experiment("harrington2003/table1", "smoke")
    cell = "oap_bpm-tau0.3"
    # local joblib (threads: no worker processes to start and compile the kernels in)
    local = run_cell(exp, cell, n_jobs=2, backend="threading")
    with Client(dask_cluster["address"]) as client:
        workers = client.scheduler_info()["workers"]
        assert len(workers) == 2
        # the workers are the two processes started by the fixture, not threads of this one
        assert set(client.run(os.getpid).values()) == {p.pid for p in dask_cluster["workers"]}
        with get_task_stream(client) as ts:
            remote = run_cell(exp, cell, n_jobs=-1, backend="dask")
        assert len(ts.data) >= exp.n_trials  # the trials ran as tasks on the cluster's workers
        assert {t["worker"] for t in ts.data} <= set(workers)
    pd.testing.assert_frame_equal(local, remote, check_exact=True)
    # the Snakemake job entry point, pointed at the scheduler (config keys backend=dask dask_scheduler=...)
    out = tmp_path / "cell.parquet"
    job_run_cell("harrington2003/table1", cell, "smoke", str(ROOT / "config"), str(out), threads=2,
                 backend="dask", scheduler=dask_cluster["address"])
    pd.testing.assert_frame_equal(pd.read_parquet(out), local, check_exact=True)


@pytest.mark.engines  # a workflow start, ~10 s: `make test-engines`
def test_workflow_config_sends_the_trials_to_the_dask_scheduler(dask_cluster, tmp_path):
    """`snakemake --config backend=dask dask_scheduler=tcp://...` (docs/running.md): the cell
    job's trials run on the cluster's workers, and its file equals local joblib's frame."""
    from distributed import Client, get_task_stream

    cell = "oap_bpm-tau0.3"
    target = f"runs/smoke/results/harrington2003/table1/cells/{cell}.parquet"
    # the task stream records every task the scheduler sees done, the job's client's too
    with Client(dask_cluster["address"]) as client, get_task_stream(client) as ts:
        r = subprocess.run([str(Path(sys.executable).parent / "snakemake"), "-s", str(ROOT / "Snakefile"),
                            "--directory", str(tmp_path), "--cores", "2", target, "--config", "scale=smoke",
                            "backend=dask", f"dask_scheduler={dask_cluster['address']}"],
                           capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, r.stderr[-3000:]
    log = (tmp_path / f"runs/smoke/logs/harrington2003/table1/{cell}.log").read_text()
    assert f"trials on the dask scheduler {dask_cluster['address']}" in log, log
    assert len(ts.data) >= 2  # the cell's 2 trials (smoke scale) ran on the cluster's workers
    local = run_cell(load_experiment("harrington2003/table1", "smoke"), cell, n_jobs=2, backend="threading")
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / target), local, check_exact=True)


@pytest.mark.engines  # ~12 s more: `make test-engines`
def test_a_worker_killed_midway_loses_and_duplicates_no_trial(dask_cluster):
    """SIGKILL to one of the two workers once some trials are done and while it runs one: dask
    runs its trials again on the other worker, and the cell is complete and bit for bit the
    local one (each trial once).  Runs last among this module's tests of the cluster: it leaves
    one worker."""
    from distributed import Client

    exp = load_experiment("harrington2003/table1", "paper")
    cell, trials = "voted_prank", range(12)  # ~0.4 s a trial: one trial per dask task (joblib's auto batching)
    local = run_cell(exp, cell, n_jobs=2, trials=trials, backend="threading")
    assert sorted(local["trial"].unique()) == list(trials)
    killed = {}
    with Client(dask_cluster["address"]) as client:
        pids = client.run(os.getpid)
        assert len(pids) == 2

        def progress(msg):
            done = int(re.search(r"(\d+)/\d+ trials", msg).group(1))
            if killed or done < 2:
                return
            # some trials done: kill a worker that is running one now (one is, but between two
            # tasks both may be idle for a moment: ask again then)
            deadline = time.monotonic() + 10
            while True:
                busy = client.run_on_scheduler(lambda dask_scheduler: {a: len(ws.processing)
                                                                       for a, ws in dask_scheduler.workers.items()})
                victim = max(busy, key=busy.get)
                if busy[victim] >= 1:
                    break
                assert time.monotonic() < deadline, busy
                time.sleep(0.01)
            os.kill(pids[victim], signal.SIGKILL)
            killed.update(address=victim, done=done, running=busy[victim])

        remote = run_cell(exp, cell, n_jobs=-1, trials=trials, backend="dask", progress=progress)
        assert killed and killed["done"] < len(trials), killed  # the kill landed midway
        proc = next(p for p in dask_cluster["workers"] if p.pid == pids[killed["address"]])
        assert proc.wait(timeout=10) == -signal.SIGKILL
        deadline = time.monotonic() + 30
        while len(client.scheduler_info()["workers"]) != 1:  # the scheduler has noticed
            assert time.monotonic() < deadline
            time.sleep(0.1)
    assert sorted(remote["trial"].unique()) == list(trials)
    pd.testing.assert_frame_equal(local, remote, check_exact=True)


def test_unknown_backend_is_refused_before_any_work():
    with pytest.raises(ValueError, match="backend"):
        with trial_backend("spark", 2):
            pass


@pytest.mark.parametrize("profile", ["default", "slurm"])
def test_profiles_are_valid_snakemake_options(profile):
    cfg = yaml.safe_load((ROOT / "profiles" / profile / "config.yaml").read_text())
    assert cfg.get("rerun-incomplete") is True
    # a job stopped midway keeps its complete outputs (a pack's finished cells: issue 58, item 7;
    # tests/test_resume.py::test_a_pack_stopped_by_sigterm_keeps_its_complete_cells)
    assert cfg.get("keep-incomplete") is True
    if profile == "slurm":
        assert cfg["executor"] == "slurm" and "default-resources" in cfg
        assert set(cfg["set-threads"]) <= {"run_cell", "run_all_cells"}
    # every key is an option of this Snakemake's command line
    help_text = subprocess.run([str(Path(sys.executable).parent / "snakemake"), "--help"], capture_output=True,
                               text=True, check=True).stdout
    for key in cfg:
        assert f"--{key}" in help_text, key
