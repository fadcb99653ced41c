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
