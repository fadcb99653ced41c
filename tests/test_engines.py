"""profiles/slurm against a running SLURM: a single-node cluster on this machine
(scripts/slurm_local.sh: munge, MariaDB, slurmdbd, slurmctld, slurmd), the smoke workflow's
crammer_singer2005/fig6 (its table, record and figure: 8 cell jobs, an aggregation, a figure)
through the profile with a site's partition and account, every job a SLURM job, the outputs
byte for byte those of the same targets run locally.

Marked ``engines`` (``make test-engines``): it needs root and apt-get (CI) to install and start
the daemons, and takes a few minutes; elsewhere it is skipped with the reason."""
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
SNAKEMAKE = Path(sys.executable).parent / "snakemake"
SCRIPT = ROOT / "scripts" / "slurm_local.sh"
# one figure artefact of the smoke workflow that needs no downloaded data
TARGETS = ["runs/smoke/results/crammer_singer2005/fig6.md", "runs/smoke/figures/crammer_singer2005/fig6.png"]
#: fig6's own jobs; its aggregation also takes the cells of the paper's other artefacts (the claims'
#: Holm family: Fig. 7's cells and their data), so the test compares with the dry run's plan
OWN_JOBS = {"run_cell": 8, "aggregate": 1, "figure": 1}
PARTITION, ACCOUNT = "debug", "rankrepro"  # what scripts/slurm_local.sh sets up

pytestmark = pytest.mark.engines


def _why_not() -> str | None:
    if os.geteuid() != 0:
        return "a single-node SLURM needs root (scripts/slurm_local.sh starts munged, slurmdbd, slurmctld, slurmd)"
    if not shutil.which("apt-get") and not all(shutil.which(c) for c in ("slurmctld", "slurmd", "slurmdbd", "munged",
                                                                          "mariadbd")):
        return "SLURM, munge and MariaDB are not installed and there is no apt-get to install them (Debian)"
    try:
        import snakemake_executor_plugin_slurm  # noqa: F401
    except ImportError:
        return "Snakemake's SLURM executor plugin is not installed: pip install -e '.[slurm]'"
    return None


@pytest.fixture(scope="module")
def slurm():
    """The cluster, started for this module and stopped whatever happens (also when `start`
    fails halfway: `stop` ends whatever of it did start)."""
    why = _why_not()
    if why:
        pytest.skip(why)
    try:
        r = subprocess.run([str(SCRIPT), "start"], capture_output=True, text=True, timeout=1200)
        assert r.returncode == 0, r.stdout + r.stderr
        yield
    finally:
        subprocess.run([str(SCRIPT), "stop"], capture_output=True, text=True, timeout=300)


def _site_profile(path: Path) -> Path:
    """profiles/slurm as a user adapts it to a site: partition, account, and resources that
    fit its nodes (here one node of this machine's cores; cell jobs on one core each)."""
    cfg = yaml.safe_load((ROOT / "profiles" / "slurm" / "config.yaml").read_text())
    cfg["default-resources"].update(slurm_partition=PARTITION, slurm_account=ACCOUNT, mem_mb=1000, runtime=15)
    cfg["set-threads"] = {"run_cell": 1, "run_all_cells": 1}
    cfg["set-resources"] = {r: {"cpus_per_task": 1, "mem_mb": 1500} for r in ("run_cell", "run_all_cells")}
    cfg["jobs"] = os.cpu_count() or 2
    cfg["latency-wait"] = 10
    # the first look at a job's state after 5 s, not 40 (short jobs on an idle cluster)
    cfg["slurm-init-seconds-before-status-checks"] = 5
    path.mkdir(parents=True)
    (path / "config.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    return path


def _snakemake(workdir: Path, *args, timeout=1200):
    workdir.mkdir(parents=True, exist_ok=True)
    r = subprocess.run([str(SNAKEMAKE), "-s", str(ROOT / "Snakefile"), "--directory", str(workdir), *args, *TARGETS,
                        "--config", "scale=smoke", "cell_packs=false"], capture_output=True, text=True,
                       timeout=timeout)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-5000:] + _failed_logs(workdir, out)
    return out


def _failed_logs(workdir: Path, out: str) -> str:
    """The ends of the logs of the jobs that failed (the rule's log, the SLURM job's log): what
    the job itself printed, which Snakemake's own output only points to."""
    found = []
    for block in re.findall(r"Error in rule \w+:.*?\n\s*log: (.*?) \(check log", out, re.S):
        for name in block.split(", "):
            p = Path(name) if Path(name).is_absolute() else workdir / name
            if p.is_file() and p not in found:
                found.append(p)
    return "".join(f"\n--- {p} (its end) ---\n{p.read_text(errors='replace')[-3000:]}" for p in found)


def _outputs(workdir: Path) -> dict[str, bytes]:
    """Every file the run wrote under runs/smoke/ but the logs (which hold times and host names)."""
    top = workdir / "runs" / "smoke"
    return {str(p.relative_to(top)): p.read_bytes() for p in sorted(top.rglob("*"))
            if p.is_file() and "logs" not in p.relative_to(top).parts}


def test_smoke_targets_through_profiles_slurm_equal_the_local_run(slurm, tmp_path):
    local = tmp_path / "local"
    _snakemake(local, "--cores", "2")
    cluster = tmp_path / "slurm"
    profile = str(_site_profile(tmp_path / "site"))
    plan = _snakemake(cluster, "--workflow-profile", profile, "--dry-run")
    stats = plan.split("Job stats:")[1].split("\n\n")[0]
    jobs = {m.group(1): int(m.group(2)) for m in re.finditer(r"^(\w+)\s+(\d+)$", stats, re.M) if m.group(1) != "total"}
    assert all(jobs.get(r, 0) >= n for r, n in OWN_JOBS.items()) and jobs["aggregate"] == 1, jobs
    out = _snakemake(cluster, "--workflow-profile", profile)

    # every job was submitted to SLURM: one sbatch per job of the plan, per rule as planned
    submitted = {int(m.group(1)): m.group(2) for m in re.finditer(
        r"has been submitted with SLURM jobid (\d+) \(log: \S*/slurm_logs/rule_(\w+)/", out)}
    assert sorted(submitted.values()) == sorted(r for r, n in jobs.items() for _ in range(n)), out[-5000:]
    assert "localrule" not in out, out[-5000:]
    # and SLURM ran them, on the site's partition and account, to completion (its accounting)
    ids = ",".join(map(str, submitted))
    sacct = subprocess.run(["sacct", "-X", "-n", "-P", "-j", ids, "-o", "JobIDRaw,State,Partition,Account,ExitCode"],
                           capture_output=True, text=True, check=True, timeout=60).stdout
    rows = {int(f[0]): f[1:] for f in (line.split("|") for line in sacct.split())}
    assert set(rows) == set(submitted), sacct
    assert all(r == ["COMPLETED", PARTITION, ACCOUNT, "0:0"] for r in rows.values()), sacct

    # the same files, byte for byte, as the local run (the cells' parquets, their fingerprints,
    # the table, the record, the figure's PNG and PDF, the resolved config)
    got, want = _outputs(cluster), _outputs(local)
    assert set(got) == set(want)
    assert {"results/crammer_singer2005/fig6.json", "figures/crammer_singer2005/fig6.pdf"} <= set(want)
    assert sum(1 for f in want if f.endswith(".parquet")) == jobs["run_cell"]
    assert [f for f in want if got[f] != want[f]] == []
