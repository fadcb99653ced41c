"""One run per output folder: ``rankrepro run`` and ``rankrepro arena`` hold a lock on their
``--out`` folder while they write, so that a second run into the same folder stops at once,
naming the first's process, instead of both writing the same files and one run's results
silently replacing the other's (issue 41, item 3).  The workflow has Snakemake's own lock.

The lock is ``fcntl.flock`` on ``<out>/.rankrepro.lock`` (released by the kernel when the
process ends, however it ends: a killed run leaves no stale lock); the file holds the pid of the
run that holds it, for the message.  The file itself stays (removing it while another process
waits on it would let two runs hold two different files).

The lock is opened without following a link (``O_NOFOLLOW``) and only when it is this user's
own regular file holding nothing but a pid (or created now): a link, a folder, a FIFO, a file
of another user's, a hard link to another file or a file with other contents planted there is
refused (:class:`OutputRefused`, naming it), never written or truncated (issue "Reliability
IV", item 1); so is an ``--out`` that is not a folder.  An OS error while the lock is written
(a full disk) is :class:`rankrepro.files.WriteFailed`, naming the file."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import re
import stat
from pathlib import Path

LOCK_NAME = ".rankrepro.lock"

#: the folders this process holds (an arena run holds its folder for each experiment it runs)
_HELD: set[str] = set()


class FolderInUse(RuntimeError):
    """Another run writes into this output folder now."""


class OutputRefused(RuntimeError):
    """The output folder or its lock file cannot be used (not a folder, a planted link or file,
    one that cannot be created): nothing written through it."""


#: what a lock file holds: a pid and a newline, or nothing (between runs)
_LOCK_TEXT = re.compile(rb"\d{0,20}\n?")


def _refuse(path: Path, why: str) -> OutputRefused:
    return OutputRefused(f"{path}: {why}; refused, nothing written through it (remove it, or give this run "
                         "another --out)")


def _open_lock(path: Path) -> int:
    """The lock file's descriptor: created now, or this user's own earlier lock file (a regular
    file, one link, a pid or nothing in it); :class:`OutputRefused` for anything else."""
    try:
        return os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o666)
    except FileExistsError:
        pass
    except OSError as e:
        raise _refuse(path, f"cannot create the run's lock file: {e.strerror or e}") from None
    kind = {stat.S_IFLNK: "a symbolic link", stat.S_IFDIR: "a folder", stat.S_IFIFO: "a FIFO",
            stat.S_IFSOCK: "a socket", stat.S_IFCHR: "a device", stat.S_IFBLK: "a device"}
    try:
        fd = os.open(path, os.O_RDWR | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY)
    except OSError as e:
        if e.errno in (errno.ELOOP, errno.EISDIR, errno.ENXIO):
            try:
                what = kind.get(stat.S_IFMT(os.lstat(path).st_mode), "not a regular file")
            except OSError:
                what = "not a regular file"
            raise _refuse(path, f"the run's lock file is {what}") from None
        raise _refuse(path, f"cannot open the run's lock file: {e.strerror or e}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise _refuse(path, f"the run's lock file is {kind.get(stat.S_IFMT(st.st_mode), 'not a regular file')}")
        if st.st_uid != os.getuid():
            raise _refuse(path, f"the run's lock file belongs to another user (uid {st.st_uid})")
        if st.st_nlink != 1:
            raise _refuse(path, f"the run's lock file has {st.st_nlink} hard links (another file's name)")
        if st.st_size > 32 or not _LOCK_TEXT.fullmatch(os.pread(fd, 33, 0)):
            raise _refuse(path, "holds something other than a run's pid: not a lock file this project wrote")
    except BaseException:
        os.close(fd)
        raise
    return fd


@contextlib.contextmanager
def output_lock(root: str | os.PathLike):
    """Hold ``root`` for this run (re-entrant within the process); raises :class:`FolderInUse`
    naming the other run's pid when another process holds it, :class:`OutputRefused` when
    ``root`` is not a folder or its lock file is not one this project wrote (or on an OS error)."""
    root = Path(root)
    if root.exists() and not root.is_dir():
        raise OutputRefused(f"--out {root}: not a folder (an existing file or device); give a folder to write into")
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise OutputRefused(f"--out {root}: cannot create the folder: {e.strerror or e}") from None
    key = str(root.resolve())
    if key in _HELD:
        yield
        return
    path = root / LOCK_NAME
    fd = _open_lock(path)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            pid = os.pread(fd, 32, 0).decode(errors="replace").strip() or "unknown"
            raise FolderInUse(f"{root} is in use by another run (pid {pid}) writing into it now: wait for it "
                              f"to end, or give this run another --out") from None
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        except OSError as e:  # a full disk, a quota: one line naming the file
            from ..files import WriteFailed

            raise WriteFailed(path, e) from None
        _HELD.add(key)
        try:
            yield
        finally:
            _HELD.discard(key)
            with contextlib.suppress(OSError):
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
    if not path.is_file() or path.is_symlink():
        return None
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
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
