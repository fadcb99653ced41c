"""Where numba keeps the compiled learners (``@njit(cache=True)``): beside their sources
(``algorithms/__pycache__``) when that folder can be written; else, unless ``NUMBA_CACHE_DIR``
says where, in a folder of the user's own.  A checkout owned by another user (read-only to
this one) otherwise stops at the first import of a compiled learner with numba's
"cannot cache function 'rank_of': no locator available" (numba's fallback, ~/.cache/numba,
may not be writable either).  Run from ``rankrepro/__init__``, before numba is imported; not
in any cell's code fingerprint (the cache holds compiled code, never results)."""

from __future__ import annotations

import os
import stat
import sys
import tempfile
from pathlib import Path

_ALGORITHMS = Path(__file__).resolve().parent / "algorithms"


def _writable(folder: Path) -> bool:
    """``folder`` exists (or can be made), is a folder of this user's and can be written."""
    try:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        st = os.lstat(folder)
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and os.access(folder, os.W_OK | os.X_OK)


def _own_folder(folder: Path) -> bool:
    """A folder only this user owns and may write (a shared /tmp's name could be taken first)."""
    if not _writable(folder):
        return False
    st = os.lstat(folder)
    return st.st_uid == os.getuid() and not st.st_mode & 0o022


def cache_dir() -> str | None:
    """The folder to give numba (None: its default, beside the sources, will do)."""
    if os.environ.get("NUMBA_CACHE_DIR"):
        return None
    if _writable(_ALGORITHMS / "__pycache__"):
        return None
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    for folder in (Path(base) / "rankrepro" / "numba",
                   Path(tempfile.gettempdir()) / f"rankrepro-numba-{os.getuid() if hasattr(os, 'getuid') else 0}"):
        if _own_folder(folder):
            return str(folder)
    try:  # a folder of this process's own: nothing is kept across runs, but nothing stops either
        return tempfile.mkdtemp(prefix="rankrepro-numba-")
    except OSError:
        return None


def ensure() -> None:
    """Set ``NUMBA_CACHE_DIR`` when the folder beside the sources cannot be written."""
    folder = cache_dir()
    if folder is None:
        return
    os.environ["NUMBA_CACHE_DIR"] = folder
    config = sys.modules.get("numba.core.config")
    if config is not None:  # numba imported already: its config read the environment then
        config.CACHE_DIR = folder
