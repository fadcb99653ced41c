"""One run per output folder: ``rankrepro run`` and ``rankrepro arena`` hold a lock on their
``--out`` folder while they write, so that a second run into the same folder stops at once,
naming the first's process, instead of both writing the same files and one run's results
silently replacing the other's (issue 41, item 3).  The workflow has Snakemake's own lock.

The lock is ``fcntl.flock`` on ``<out>/.rankrepro.lock`` (released by the kernel when the
process ends, however it ends: a killed run leaves no stale lock); the file holds the pid of the
run that holds it, for the message.  The file itself stays (removing it while another process
waits on it would let two runs hold two different files)."""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
from pathlib import Path

LOCK_NAME = ".rankrepro.lock"

#: the folders this process holds (an arena run holds its folder for each experiment it runs)
_HELD: set[str] = set()


class FolderInUse(RuntimeError):
    """Another run writes into this output folder now."""


@contextlib.contextmanager
def output_lock(root: str | os.PathLike):
    """Hold ``root`` for this run (re-entrant within the process); raises :class:`FolderInUse`
    naming the other run's pid when another process holds it."""
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    key = str(root.resolve())
    if key in _HELD:
        yield
        return
    path = root / LOCK_NAME
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            pid = os.pread(fd, 32, 0).decode(errors="replace").strip() or "unknown"
            raise FolderInUse(f"{root} is in use by another run (pid {pid}) writing into it now: wait for it "
                              f"to end, or give this run another --out") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        _HELD.add(key)
        try:
            yield
        finally:
            _HELD.discard(key)
            os.ftruncate(fd, 0)
    finally:
        os.close(fd)  # releases the lock


#: the temporaries the project's own writes leave when killed midway: an atomic write's
#: ``.<name>.<8 random>.tmp`` (io.atomic_write; ``.<name>.<pid>.tmp`` for a few) of a file the
#: project writes (by its extension), and write_resolved's ``.<artefact>.config.yaml.tmp``
OWN_TEMPORARY = re.compile(r"\.(?P<name>.+\.(?:parquet|fingerprint|json|csv|md|png|pdf|html|npz|yaml))"
                           r"\.(?:[a-z0-9_]{8}|\d+)\.tmp|\..+\.config\.yaml\.tmp")


def is_own_temporary(name: str) -> bool:
    return OWN_TEMPORARY.fullmatch(name) is not None


def in_use(root: str | os.PathLike) -> str | None:
    """The pid (as written) of a ``rankrepro run`` holding ``root`` now, else None."""
    path = Path(root) / LOCK_NAME
    if not path.is_file():
        return None
    fd = os.open(path, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        return None
    except BlockingIOError:
        return os.pread(fd, 32, 0).decode(errors="replace").strip() or "unknown"
    finally:
        os.close(fd)


def remove_own_temporaries(tops, root: str | os.PathLike = ".") -> list[Path]:
    """Delete under ``tops`` the leftovers of the project's own atomic writes
    (:func:`is_own_temporary`), nothing else (a user's ``.notes.tmp`` stays); and nothing at all
    while a ``rankrepro run`` writes into ``root`` (its temporaries are live).  Returns what went."""
    if in_use(root) is not None:
        return []
    gone = []
    for top in tops:
        top = Path(top)
        if top.is_dir():
            for p in top.rglob(".*.tmp"):
                if p.is_file() and not p.is_symlink() and is_own_temporary(p.name):
                    p.unlink(missing_ok=True)
                    gone.append(p)
    return gone
