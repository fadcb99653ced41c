"""What a reader needs to trust a number: code version, software, platform."""

from __future__ import annotations

import platform
import subprocess
import sys
from importlib import metadata
from pathlib import Path

PACKAGES = ("rankrepro", "numpy", "scipy", "pandas", "pyarrow", "numba", "joblib", "matplotlib", "hydra-core",
            "omegaconf", "snakemake")


#: folders the pipeline writes (committed outputs), ignored by the dirty check
OUTPUT_DIRS = ("results", "figures", "runs")


def git_commit(path: str | Path = ".") -> str:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=path, capture_output=True, text=True, timeout=10)
        sha = out.stdout.strip()
        if out.returncode != 0 or not sha:
            return "unknown"
        # "+dirty": tracked sources or configs differ from the commit.  The pipeline's own
        # outputs (results/, figures/, runs/) do not count: a run rewrites them itself.
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "--", ".",
                                *(f":(exclude){d}" for d in OUTPUT_DIRS)], cwd=path,
                               capture_output=True, text=True, timeout=10).stdout.strip()
        return sha + ("+dirty" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def source_commit(path: str | Path = ".") -> str:
    """The last commit that changed anything but the pipeline's outputs (:data:`OUTPUT_DIRS`),
    with ``+dirty`` as :func:`git_commit` adds it: the sources a report is made from.  Unlike
    HEAD, committing the outputs themselves does not change it, so the report rebuilt in a
    fresh clone of the commit that holds it names the same commit (and is the same bytes)."""
    try:
        out = subprocess.run(["git", "log", "-1", "--format=%H", "--", ".",
                              *(f":(exclude){d}" for d in OUTPUT_DIRS)], cwd=path, capture_output=True,
                             text=True, timeout=10)
        sha = out.stdout.strip()
        if out.returncode != 0 or not sha:
            return git_commit(path)
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    head = git_commit(path)
    return sha + ("+dirty" if head.endswith("+dirty") else "")


def versions() -> dict[str, str]:
    """Python, the platform and the packages' versions; rankrepro's is the code's own
    ``rankrepro.__version__`` (an editable install's metadata keeps the version it was
    installed with), the one `rankrepro --version` prints."""
    from . import __version__

    out = {"python": sys.version.split()[0], "platform": platform.platform()}
    for p in PACKAGES:
        try:
            out[p] = __version__ if p == "rankrepro" else metadata.version(p)
        except metadata.PackageNotFoundError:
            out[p] = "not installed"
    return out
