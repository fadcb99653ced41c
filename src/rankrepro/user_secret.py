"""The per-user secret that seals what this user's project keeps (the kept catalogs,
:mod:`rankrepro.pipeline.cache`; the processed data's manifests, :mod:`rankrepro.data.processed_seal`):
``secret.key`` in the cache folder, made on first use (``os.urandom``, mode 0600), trusted only
when it is a regular file of this user that nobody else can read.  A module of its own, below
the floors that use it: it imports nothing of the package."""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

#: the per-user secret, in the cache folder
SECRET = "secret.key"
#: its length in bytes
SECRET_BYTES = 32
#: how kept files are opened for reading: never through a link, never waiting on a FIFO
_READ = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def cache_dir() -> Path:
    """Where the workflow keeps what it seals: ``$RANKREPRO_CACHE_DIR``, else
    ``$XDG_CACHE_HOME/rankrepro`` (``~/.cache/rankrepro``), else ``.snakemake/rankrepro``."""
    if env := os.environ.get("RANKREPRO_CACHE_DIR"):
        return Path(env)
    try:
        return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "rankrepro"
    except RuntimeError:  # no home directory to be found: beside Snakemake's own records
        return Path(".snakemake") / "rankrepro"


def _own_secret(f: Path) -> bytes | None:
    """The secret in ``f`` when it is one to trust: a regular file (not a link) of this user,
    readable by nobody else, of the right length; else None."""
    try:
        fd = os.open(f, _READ)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_mode & 0o077 \
                or (hasattr(os, "getuid") and st.st_uid != os.getuid()):
            return None
        data = os.read(fd, SECRET_BYTES + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    return data if len(data) == SECRET_BYTES else None


def secret_problem(f: Path) -> str:
    """Why the secret in ``f`` is not one to trust (:func:`_own_secret` returned None), in words."""
    try:
        st = os.lstat(f)
    except FileNotFoundError:
        return "it was deleted"
    except OSError as e:
        return f"it cannot be read ({e.strerror})"
    if stat.S_ISLNK(st.st_mode):
        return "it is a symbolic link"
    if not stat.S_ISREG(st.st_mode):
        return "it is not a regular file"
    if hasattr(os, "getuid") and st.st_uid != os.getuid():
        return f"it belongs to another user (uid {st.st_uid})"
    if st.st_mode & 0o077:
        return f"others could read it (mode {stat.S_IMODE(st.st_mode):04o})"
    if st.st_size != SECRET_BYTES:
        return f"it is {st.st_size} bytes, not {SECRET_BYTES}"
    return "it cannot be read"


def secret(cache_dir: str | os.PathLike) -> bytes | None:
    """This user's secret for the kept catalogs of ``cache_dir`` (:data:`SECRET`), made on
    first use (``os.urandom``, mode 0600; the folder made with mode 0700), and made again
    when the file there is absent, unreadable, not this user's or readable by others.
    None when it can be neither read nor made (a read-only place): nothing is then kept or
    read back."""
    d = Path(cache_dir)
    f = d / SECRET
    if (key := _own_secret(f)) is not None:
        return key
    tmp = d / f".{SECRET}.{os.getpid()}.tmp"
    try:
        d.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o600)
        try:
            os.write(fd, os.urandom(SECRET_BYTES))
            os.fsync(fd)
        finally:
            os.close(fd)
        try:
            os.link(tmp, f)  # only where there is none: two first uses at once agree on one
        except FileExistsError:
            if (key := _own_secret(f)) is not None:  # the other one's
                return key
            os.replace(tmp, f)  # one not to trust: replaced (what it sealed then misses)
        except OSError:  # no hard links here (a FAT disk): the last one made wins
            os.replace(tmp, f)
    except OSError:
        return None
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
    return _own_secret(f)
