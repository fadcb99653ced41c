import os
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

settings.register_profile("ci", max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("ci" if os.environ.get("CI") else "dev")

ROOT = Path(__file__).resolve().parents[1]
CONFIG_DIR = ROOT / "config"


def as_from_a_terminal():
    """``preexec_fn`` for a child that stands for a command typed in a terminal: SIGINT and
    SIGQUIT at their default action.  A test runner started in the background of a
    non-interactive shell (``make test &``, some CI launchers) inherits both *ignored*, and so
    would every child: Ctrl-C sent to it would then do nothing at all (POSIX; Python keeps an
    ignored SIGINT ignored), which is what a terminal's user never sees."""
    import signal

    for sig in (signal.SIGINT, signal.SIGQUIT):
        signal.signal(sig, signal.SIG_DFL)


@pytest.fixture
def config_dir():
    return CONFIG_DIR


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


def separable_stream(rng, n, d, k, gamma, nonneg=False):
    """Instances ranked by a unit-norm rule (w*, b*) with margin >= gamma at every threshold."""
    w = np.abs(rng.normal(size=d)) if nonneg else rng.normal(size=d)
    b = np.sort(rng.normal(size=k - 1))
    norm = np.sqrt(w @ w + b @ b)
    w, b = w / norm, b / norm
    X, y = [], []
    while len(X) < n:
        x = rng.uniform(-1, 1, size=d)
        s = w @ x
        if np.min(np.abs(s - b)) < gamma:
            continue
        X.append(x)
        y.append(1 + int(np.sum(s > b)))
    return np.array(X), np.array(y), w, b


def data_mirror() -> Path | None:
    """The data mirror the suite uses: $RANKREPRO_DATA_MIRROR, else ../shared/datasets beside
    the checkout (as CI has it); None when neither exists."""
    env = os.environ.get("RANKREPRO_DATA_MIRROR")
    if env:
        return Path(env) if Path(env).is_dir() else None
    mirror = ROOT.parent / "shared" / "datasets"
    return mirror if mirror.is_dir() else None


#: the reason a test that needs the downloaded data sets is skipped without them
NO_MIRROR = ("needs the data mirror (set RANKREPRO_DATA_MIRROR to a folder of the data sets, or put them in "
             "../shared/datasets beside the checkout; docs/data.md): none on this machine")


def data_env() -> dict:
    """This process's environment with the data mirror named (:func:`data_mirror`), for the
    workflow runs the suite starts."""
    env = dict(os.environ)
    if "RANKREPRO_DATA_MIRROR" not in env and data_mirror() is not None:
        env["RANKREPRO_DATA_MIRROR"] = str(data_mirror())
    return env


def _data_command() -> list[str]:
    import sys

    return [str(Path(sys.executable).parent / "snakemake"), "--cores", "2", "--nolock", "data"]


#: where the controller of a parallel run records how its early data build ended (its workers
#: inherit the variable: a record of another session is never read)
EARLY_BUILD = "RANKREPRO_TESTS_DATA_BUILD"


def pytest_configure(config):
    """In a parallel run of the whole suite (``make test``), the controller starts the
    workflow's `data` target at once, in the background, holding the data lock: the workers
    run the tests that need no data meanwhile, instead of one of them building the data (~30
    s in a fresh clone) while the other waits for it.  :func:`repo_data` waits for it."""
    import fcntl
    import json
    import subprocess
    import threading
    import time

    if hasattr(config, "workerinput") or not getattr(config.option, "numprocesses", None):
        return  # a worker, or a run without workers: repo_data builds when a test needs it
    if any(Path(a.split("::")[0]).is_file() for a in config.args):
        return  # chosen test files: maybe none needs the data
    (ROOT / "data").mkdir(exist_ok=True)
    status = ROOT / "data" / f".tests.build-{os.getpid()}-{time.time_ns()}.json"
    lock = open(ROOT / "data" / ".tests.lock", "w")
    fcntl.flock(lock, fcntl.LOCK_EX)
    log = open(status.with_suffix(".log"), "w+")
    proc = subprocess.Popen(_data_command(), cwd=ROOT, env=data_env(), stdout=log, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL)

    def finish():
        rc = proc.wait()
        log.seek(0)
        status.write_text(json.dumps({"returncode": rc, "output": log.read()[-3000:]}))
        log.close()
        status.with_suffix(".log").unlink(missing_ok=True)
        fcntl.flock(lock, fcntl.LOCK_UN)
        lock.close()

    config._early_data_build = threading.Thread(target=finish, daemon=True)
    config._early_data_build.start()
    os.environ[EARLY_BUILD] = str(status)


def pytest_unconfigure(config):
    build = getattr(config, "_early_data_build", None)
    if build is not None:
        build.join()
        Path(os.environ.pop(EARLY_BUILD)).unlink(missing_ok=True)


@pytest.fixture(scope="session")
def repo_data():
    """The repository's data/ with every data set that can be had fetched, verified and
    preprocessed (from $RANKREPRO_DATA_MIRROR, else ../shared/datasets beside the checkout,
    as CI has it).  Runs the workflow's own `data` target once (quick when already done), or
    waits for the one this run's controller started (:func:`pytest_configure`)."""
    import fcntl
    import json
    import subprocess

    # one at a time (pytest-xdist runs this fixture once per worker): two `data` runs at once
    # in the same folder remove and rewrite each other's outputs
    (ROOT / "data").mkdir(exist_ok=True)
    with open(ROOT / "data" / ".tests.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        early = os.environ.get(EARLY_BUILD)
        done = json.loads(Path(early).read_text()) if early and Path(early).is_file() else None
        if done is not None and done["returncode"] == 0:
            return ROOT / "data"
        r = subprocess.run(_data_command(), cwd=ROOT, env=data_env(), capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    return ROOT / "data"


def make_fresh_clone(dest: Path, repo_data: Path, env: dict) -> Path:
    """A git clone of this checkout's HEAD at ``dest`` with its data as `make data` leaves them:
    the suite's own fetched and preprocessed data copied in (without preprocessing every data
    set a second time), then the workflow's `data` target, which must find them done."""
    import shutil
    import subprocess
    import sys
    import time

    subprocess.run(["git", "clone", "-q", str(ROOT), str(dest)], check=True, timeout=300)
    # dated after the clone's checkout (the data rules' scripts): Snakemake reruns a job whose
    # outputs are older than its script, which redid every data job (~26 s) in each clone
    now = time.time()
    for offset, d in enumerate(("raw", "processed")):
        if (repo_data / d).is_dir():
            shutil.copytree(repo_data / d, dest / "data" / d, symlinks=True, dirs_exist_ok=True)
            for f in (dest / "data" / d).rglob("*"):
                if f.is_file() and not f.is_symlink():
                    os.utime(f, (now + offset, now + offset))
    env = dict(env)
    env.setdefault("RANKREPRO_DATA_MIRROR", str(repo_data / "raw"))
    r = subprocess.run([str(Path(sys.executable).parent / "snakemake"), "--cores", "2", "data"], cwd=dest, env=env,
                       capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "Nothing to be done" in r.stdout + r.stderr, (r.stdout + r.stderr)[-3000:]
    return dest


def pytest_collection_modifyitems(config, items):
    """Tests marked ``engines`` (a single-node SLURM started for the test, a dask cluster losing a
    worker: minutes, daemons, packages installed as root) run only when asked for with
    ``-m engines`` (``make test-engines``); any other run skips them."""
    chosen = config.getoption("-m") or ""
    # the same for ``fixtures``: the original data sets' fixtures taken end to end through the
    # workflow (several minutes): `make test-fixtures` (pytest -m fixtures)
    for marker, why in (("engines", "a test against a real engine: run it with `make test-engines` (pytest -m engines)"),
                        ("fixtures", "the original data sets' fixtures through the workflow, minutes: run it with "
                                     "`make test-fixtures` (pytest -m fixtures)"),
                        ("long", "end to end over minutes: run it with `make test-long` (pytest -m long)")):
        if marker in chosen:
            continue
        skip = pytest.mark.skip(reason=why)
        for item in items:
            if marker in item.keywords:
                item.add_marker(skip)


def scratch_workflow(w: Path) -> Path:
    """A copy of the workflow at ``w`` (Snakefile, rules, scripts, profiles and every config
    group but the experiments and their diagnoses, which each test adds as it needs)."""
    import shutil

    for item in ("Snakefile", "rules", "scripts", "environment.yml", "profiles"):
        src = ROOT / item
        (shutil.copytree if src.is_dir() else shutil.copy)(src, w / item)
    shutil.copytree(ROOT / "config", w / "config", ignore=shutil.ignore_patterns("experiment", "diagnoses"))
    return w


_CATALOGS: dict = {}


def committed_catalog(scale: str = "paper") -> dict:
    """The committed configs' catalog at ``scale``, composed once and kept as the workflow keeps
    it (the validated cache under ~/.cache/rankrepro, shared by the test processes): composing
    all 20 experiments takes 10-20 s, reading them back 1-2 s.  For tests that read the
    committed catalog; tests of composing and of the cache itself compose their own."""
    if scale not in _CATALOGS:
        from rankrepro.pipeline.catalog import default_cache_dir, load_catalog

        _CATALOGS[scale] = load_catalog(scale, config_dir=CONFIG_DIR, cache_dir=default_cache_dir())
    return _CATALOGS[scale]


#: Tests whose cases run in full only in `make test-long` (pytest -m long): the first case of each
#: stays in `make test`, a representative, and the others are marked ``long`` (each case composes
#: the catalog again, runs the command line or a workflow: seconds each, together over a minute
#: of the 5-minute budget of `make test`).  CI runs both targets, so every case still runs there.
LONG_BEYOND_FIRST = frozenset({
    "tests/test_cli.py::test_the_help_examples_run",
    "tests/test_config.py::test_catalog_cache_that_does_not_validate_is_rebuilt",
    "tests/test_cache_mac.py::test_a_planted_catalog_is_not_used",
    "tests/test_cache_mac.py::test_an_entry_whose_mac_fails_is_ignored_with_one_warning",
    "tests/test_cache_mac.py::test_a_secret_not_to_trust_is_replaced_and_old_entries_miss",
    "tests/test_sensitivity.py::test_a_job_rebuilds_the_variants_the_workflow_checked",
    "tests/test_arena.py::test_an_arena_experiment_is_its_papers_protocol_with_the_familys_learners",
    "tests/test_arena.py::test_committed_comparisons_are_their_committed_cells",
    # (issue 46: room for tests/test_rereads.py) each case composes a scratch catalog
    "tests/test_sensitivity.py::test_bad_blocks_are_refused_naming_the_key",
    "tests/test_config.py::test_bad_value_in_every_group_names_key",
    "tests/test_protocols.py::test_a_former_placeholder_changes_no_fingerprint",
    # (issue 46: room for the catalog's composition in processes) each of the 128 cases
    # composes an experiment with one bad value: ~25 CPU s together
    "tests/test_config_invalid.py::test_invalid_value_names_its_key",
})
#: Tests that run the workflow end to end (tens of seconds each): only in `make test-long`.
LONG_WHOLE = frozenset({
    "tests/test_per_user.py::test_the_collaborative_family_runs_at_smoke_scale",
    "tests/test_absent_data_keeps_results.py::test_no_aggregate_or_figure_is_planned",
    "tests/test_absent_data_keeps_results.py::test_a_run_keeps_the_committed_files_byte_identical",
})
_first_case: dict[str, str] = {}


def pytest_itemcollected(item):
    """Mark the cases of :data:`LONG_BEYOND_FIRST` after the first, and the tests of
    :data:`LONG_WHOLE`, ``long`` (before ``-m`` selects)."""
    base = item.nodeid.split("[", 1)[0]
    if base in LONG_WHOLE:
        item.add_marker(pytest.mark.long)
    elif base in LONG_BEYOND_FIRST and _first_case.setdefault(base, item.nodeid) != item.nodeid:
        item.add_marker(pytest.mark.long)
