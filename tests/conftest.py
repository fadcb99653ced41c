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


@pytest.fixture(scope="session")
def repo_data():
    """The repository's data/ with every data set that can be had fetched, verified and
    preprocessed (from $RANKREPRO_DATA_MIRROR, else ../shared/datasets beside the checkout,
    as CI has it).  Runs the workflow's own `data` target once; quick when already done."""
    import subprocess
    import sys

    env = dict(os.environ)
    mirror = ROOT.parent / "shared" / "datasets"
    if "RANKREPRO_DATA_MIRROR" not in env and mirror.is_dir():
        env["RANKREPRO_DATA_MIRROR"] = str(mirror)
    snakemake = Path(sys.executable).parent / "snakemake"
    # one worker at a time (pytest-xdist runs this fixture once per worker): two `data` runs at
    # once in the same folder remove and rewrite each other's outputs
    import fcntl

    (ROOT / "data").mkdir(exist_ok=True)
    with open(ROOT / "data" / ".tests.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        r = subprocess.run([str(snakemake), "--cores", "2", "--nolock", "data"], cwd=ROOT, env=env,
                           capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    return ROOT / "data"


def pytest_collection_modifyitems(config, items):
    """Tests marked ``engines`` (a single-node SLURM started for the test, a dask cluster losing a
    worker: minutes, daemons, packages installed as root) run only when asked for with
    ``-m engines`` (``make test-engines``); any other run skips them."""
    if "engines" in (config.getoption("-m") or ""):
        return
    skip = pytest.mark.skip(reason="a test against a real engine: run it with `make test-engines` (pytest -m engines)")
    for item in items:
        if "engines" in item.keywords:
            item.add_marker(skip)
