"""Get a data set's files and prove they are the right ones.

Sources, in order: the file already in ``data/raw/<name>/`` and verified; the local mirror
folder named by ``$RANKREPRO_DATA_MIRROR``; the home page (direct URL or archive), with
retries and a progress bar.  Every file's sha256 is checked against the registry: a
mismatch moves the file to ``data/quarantine/<name>/`` (named with its hash), reports
both hashes, and the file is never used.  A verified data set gets a
``data/raw/<name>/MANIFEST.json`` with the hash and source of every file.

A file the registry does not pin (its sha256 is None) is accepted with a warning and its hash
recorded; it is never reported as *verified* (its state is *unpinned*).  A file edited after
it was fetched is noticed: :func:`check_local` compares every raw file with the registry's sum
(or, unpinned, the sum recorded when it was fetched), through a stamp of its size,
modification time, inode and change time (``data/raw/<name>/.stamps.json``) written only after
a real hash matched; a file whose stamp differs is hashed again (any write changes the change
time, which a user cannot set back as ``touch`` sets the modification time).  Preprocessing hashes every file in full.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import shutil
import socket
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
import warnings
import zipfile
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..checkout import LinkedFile, data_folders_inside, linked_file_problem
from .registry import DATASETS, DatasetEntry, get

MIRROR_ENV = "RANKREPRO_DATA_MIRROR"
OFFLINE_ENV = "RANKREPRO_OFFLINE"
MANIFEST = "MANIFEST.json"
#: (size, mtime, inode, ctime) of each raw file when its sha256 last matched, beside the manifest
STAMPS = ".stamps.json"


class DataUnavailable(RuntimeError):
    """The data set cannot be had from any source; the message says how to obtain it."""


class ChecksumError(RuntimeError):
    pass


def sha256(path: str | os.PathLike, chunk: int = 1 << 20) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(chunk):
            h.update(block)
    return h.hexdigest()


#: the largest data file the project copies from a mirror (the largest file of any registered
#: data set is a few MB; the bound leaves a hundredfold margin and stops a mistaken or hostile
#: file, such as a sparse file of many GB, before a byte of it is copied or hashed)
MAX_DATA_FILE_BYTES = 256 << 20


def mirror_file_problem(path: Path) -> str | None:
    """Why a file in the mirror cannot be copied, decided from its ``lstat`` alone (nothing is
    opened: a FIFO would block the reader, a device or a huge sparse file would be read
    whole): None when it is a regular file of a plausible size, or absent."""
    import stat

    try:
        st = os.stat(path)  # a symlink to a regular file in the mirror is followed, as before
    except FileNotFoundError:
        return None
    except OSError as e:
        return f"cannot be read ({e.strerror or e})"
    if not stat.S_ISREG(st.st_mode):
        kind = ("a FIFO (named pipe)" if stat.S_ISFIFO(st.st_mode) else "a folder" if stat.S_ISDIR(st.st_mode)
                else "a socket" if stat.S_ISSOCK(st.st_mode) else "a device" if stat.S_ISCHR(st.st_mode)
                or stat.S_ISBLK(st.st_mode) else "not a regular file")
        return f"not a regular file ({kind})" if "regular" not in kind else kind
    if st.st_size > MAX_DATA_FILE_BYTES:
        return (f"{st.st_size:,} bytes, more than a data file of the project may have ({MAX_DATA_FILE_BYTES:,}): "
                "refused before copying")
    return None


def mirror_dir() -> Path | None:
    m = os.environ.get(MIRROR_ENV)
    return Path(m).expanduser().resolve() if m else None


def offline() -> bool:
    return os.environ.get(OFFLINE_ENV, "").lower() in ("1", "true", "yes")


@dataclass
class Paths:
    raw: Path = Path("data/raw")
    processed: Path = Path("data/processed")
    quarantine: Path = Path("data/quarantine")

    @classmethod
    def under(cls, root: str | os.PathLike) -> "Paths":
        r = Path(root)
        return cls(r / "raw", r / "processed", r / "quarantine")


def mirrored(entry: DatasetEntry) -> DatasetEntry:
    """``entry`` with its mirror folder named: the registry's ``mirror_dir``, else the data set's
    own name.  A data set the shared mirror holds no copy of (withdrawn, licensed) is read from
    ``$RANKREPRO_DATA_MIRROR/<name>/`` when a user's own mirror has it, like any other; its
    files are checked as from ``data/raw`` (pinned: against the registry; unpinned: hashed on
    first use, and refused when they change afterwards)."""
    return entry if entry.mirror_dir else replace(entry, mirror_dir=entry.name)


def placed(entry: DatasetEntry, paths: Paths) -> bool:
    """Every file of ``entry`` is in ``data/raw/<name>/`` but was never fetched (no manifest):
    files a user put there by hand, as docs/data.md and the registry's instructions say.  They
    are usable: the fetch job hashes them (against the registry where it pins them) and writes
    the manifest that makes any later change of them refused."""
    d = paths.raw / entry.name
    return not (d / MANIFEST).is_file() and all((d / rel).is_file() for rel in entry.files)


def quarantine(path: Path, entry: DatasetEntry, rel: str, got: str, paths: Paths) -> Path:
    dst = paths.quarantine / entry.name / f"{rel.replace('/', '__')}.{got[:12]}"
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(str(path), dst)
    return dst


def _verify_into(tmp: Path, dst: Path, entry: DatasetEntry, rel: str, source: str, paths: Paths,
                 log) -> str:
    """Check ``tmp`` against the registry; move it to ``dst`` or to quarantine."""
    got = sha256(tmp)
    want = entry.files[rel]
    if want is not None and got != want:
        q = quarantine(tmp, entry, rel, got, paths)
        raise ChecksumError(f"{entry.name}/{rel} from {source}: sha256 {got} does not match the registry's {want}; "
                            f"the file was moved to {q} and will not be used")
    if want is None:
        warnings.warn(f"{entry.name}/{rel}: no pinned sha256; accepted with sha256 {got} (recorded in the manifest), "
                      "not verified", stacklevel=2)
    dst.parent.mkdir(parents=True, exist_ok=True)
    os.replace(tmp, dst)
    log(f"{entry.name}/{rel}: " + (f"verified ({source})" if want is not None
                                   else f"accepted without a pinned sha256, not verified ({source})"))
    return got


def _progress(name: str, done: int, total: int | None, t0: float) -> None:
    rate = done / max(time.perf_counter() - t0, 1e-9) / 1e6
    pct = f"{100 * done / total:5.1f}%" if total else "     "
    print(f"\r  {name}: {pct} {done / 1e6:8.1f} MB {rate:6.1f} MB/s", end="", file=sys.stderr, flush=True)


def download(url: str, dst: Path, retries: int = 3, timeout: float = 30.0) -> None:
    """Download with retries (exponential back-off) and a progress line on stderr."""
    last: Exception | None = None
    for attempt in range(1, retries + 1):
        try:
            with urllib.request.urlopen(url, timeout=timeout) as r, open(dst, "wb") as out:  # noqa: S310
                total = int(r.headers.get("Content-Length") or 0) or None
                done, t0 = 0, time.perf_counter()
                while block := r.read(1 << 20):
                    out.write(block)
                    done += len(block)
                    _progress(Path(urllib.parse.urlparse(url).path).name, done, total, t0)
                print(file=sys.stderr)
            return
        except (urllib.error.URLError, OSError, TimeoutError) as e:
            last = e
            if attempt < retries:
                time.sleep(2 ** attempt)
    raise DataUnavailable(f"download of {url} failed after {retries} tries: {last}")


@functools.lru_cache(maxsize=None)
def _host_reachable(host: str, port: int, timeout: float) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def home_reachable(entry: DatasetEntry, timeout: float = 3.0) -> bool:
    """Can the host of the data set's first URL be reached at all (DNS + TCP)?  Cached per
    host for the life of the process."""
    if offline() or not entry.downloadable:
        return False
    url = entry.archive.url if entry.archive else next(iter(entry.urls.values()))
    u = urllib.parse.urlparse(url)
    return _host_reachable(u.hostname or "", u.port or (443 if u.scheme == "https" else 80), timeout)


def _read_json(path: Path) -> dict:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _stamp(path: Path) -> list[int]:
    """Size, modification time, inode and change time (ns): an edit that keeps the size and
    sets the modification time back still changes the change time, which no user can set."""
    st = path.stat()
    return [st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns]


def _record_stamps(d: Path, hashes: dict[str, str], taken: dict[str, list[int]] | None = None) -> None:
    """Remember the stamps of files whose sha256 was just computed and matched (only a real
    hash refreshes a stamp; ``taken``: stamps taken before hashing, so that a write during the
    hash leaves a stamp that no longer matches)."""
    taken = taken or {}
    stamps = _read_json(d / STAMPS)
    stamps.update({rel: {"sha256": h, "stamp": taken.get(rel) or _stamp(d / rel)} for rel, h in hashes.items()})
    tmp = d / f".{STAMPS}.{os.getpid()}.tmp"
    try:
        tmp.write_text(json.dumps(stamps, indent=1, sort_keys=True))
        os.replace(tmp, d / STAMPS)
    except OSError:  # a read-only copy: checked again next time
        tmp.unlink(missing_ok=True)


@dataclass
class LocalCheck:
    """What :func:`check_local` found in ``data/raw/<name>/``."""

    #: every file present, recorded in the manifest and equal to its expected sum
    ok: bool
    #: the files the registry does not pin (accepted when fetched, never *verified*)
    unpinned: list[str] = field(default_factory=list)
    #: why not, when a file differs from its sum (naming the file); empty when simply not fetched
    problem: str = ""


def check_local(entry: DatasetEntry, paths: Paths, rehash: bool = False) -> LocalCheck:
    """Whether the raw files of ``entry`` are the ones fetched and verified: present, in the
    manifest, and equal to the registry's sha256 (an unpinned file: to the sha256 the manifest
    recorded when it was fetched).  A file whose size, modification time, inode and change
    time are those stamped after its last matching hash is taken as unchanged, any other is hashed again (``rehash``:
    every file is hashed)."""
    d = paths.raw / entry.name
    if not (d / MANIFEST).is_file():
        return LocalCheck(False)
    files = _read_json(d / MANIFEST).get("files")
    files = files if isinstance(files, dict) else {}
    stamps = _read_json(d / STAMPS)
    hashed: dict[str, str] = {}
    taken: dict[str, list[int]] = {}
    for rel, want in entry.files.items():
        p, rec = d / rel, files.get(rel)
        if (linked := linked_file_problem(p)) is not None:
            return LocalCheck(False, problem=linked)
        if not p.is_file() or not isinstance(rec, dict) or not rec.get("sha256"):
            return LocalCheck(False)
        if want is not None and rec["sha256"] != want:
            return LocalCheck(False, problem=f"{p}: the manifest records sha256 {rec['sha256']}, "
                                             f"not the registry's {want}")
        expect = want or rec["sha256"]
        st = stamps.get(rel)
        now = _stamp(p)
        if not rehash and isinstance(st, dict) and st.get("sha256") == expect and st.get("stamp") == now:
            continue
        got = sha256(p)
        taken[rel] = now
        if got != expect:
            whose = "the registry's" if want is not None else "the one recorded when it was fetched (unpinned)"
            return LocalCheck(False, problem=f"{p} changed after it was verified: sha256 {got} is not {whose} {expect}")
        hashed[rel] = got
    if hashed:
        _record_stamps(d, hashed, taken)
    return LocalCheck(True, unpinned=[rel for rel, want in entry.files.items() if want is None])


def fetch(name: str, paths: Paths | None = None, mirror: Path | None = None, allow_network: bool | None = None,
          log=None) -> Path:
    """Fetch and verify every file of data set ``name``; write and return its manifest.

    Raises :class:`DataUnavailable` (with how to obtain it) or :class:`ChecksumError`."""
    entry = mirrored(get(name))
    paths = paths or Paths()
    mirror = mirror_dir() if mirror is None else mirror
    allow_network = (not offline()) if allow_network is None else allow_network
    log = log or (lambda m: print(m, file=sys.stderr, flush=True))
    d = paths.raw / entry.name
    # data/raw/<name> linked to a folder outside the checkout: refused before anything is written through it
    data_folders_inside(paths, entry.name, processed=False)
    d.mkdir(parents=True, exist_ok=True)
    record: dict[str, dict] = {}
    errors: list[str] = []
    archive_dir: Path | None = None
    # an unpinned file already here must still be the one fetched before (its recorded sum)
    before = _read_json(d / MANIFEST).get("files")
    before = before if isinstance(before, dict) else {}
    try:
        for rel in entry.files:
            dst = d / rel
            if dst.is_symlink():  # a hand-placed link (to /etc/passwd): refused, left as it is
                raise LinkedFile(dst)
            if dst.is_file():
                got = sha256(dst)
                want = entry.files[rel]
                if want is None:
                    rec = before.get(rel)
                    want = rec.get("sha256") if isinstance(rec, dict) else None
                if want is None or got == want:
                    record[rel] = {"sha256": got, "source": "data/raw", "pinned": entry.files[rel] is not None}
                    continue
                q = quarantine(dst, entry, rel, got, paths)
                whose = "the registry's" if entry.files[rel] is not None else "the one recorded when it was fetched"
                errors.append(f"{entry.name}/{rel} in data/raw: sha256 {got} does not match {whose} {want}; "
                              f"moved to {q}")
            src = None
            in_mirror = mirror / entry.mirror_dir / rel if mirror is not None and entry.mirror_dir else None
            problem = mirror_file_problem(in_mirror) if in_mirror is not None else None
            if problem is not None:
                errors.append(f"{in_mirror} in the mirror: {problem}; not copied")
            elif in_mirror is not None and in_mirror.is_file():
                src = ("mirror", in_mirror)
            elif allow_network and rel in entry.urls:
                src = ("home", entry.urls[rel])
            elif allow_network and entry.archive is not None and rel in entry.archive.members.values():
                src = ("home", entry.archive.url)
            if src is None:
                continue
            fd, tmpname = tempfile.mkstemp(prefix=".fetch.", dir=d)
            os.close(fd)
            tmp = Path(tmpname)
            try:
                if src[0] == "mirror":
                    shutil.copyfile(src[1], tmp)
                    where = f"mirror {src[1]}"
                elif src[1] == (entry.archive.url if entry.archive else None):
                    if archive_dir is None:
                        archive_dir = Path(tempfile.mkdtemp(prefix=".archive.", dir=d))
                        zpath = archive_dir / "archive.zip"
                        log(f"{entry.name}: downloading {src[1]}")
                        download(src[1], zpath)
                        with zipfile.ZipFile(zpath) as z:
                            z.extractall(archive_dir / "x")
                    member = next(m for m, r in entry.archive.members.items() if r == rel)
                    shutil.copyfile(archive_dir / "x" / member, tmp)
                    where = f"{src[1]} ({member})"
                else:
                    log(f"{entry.name}: downloading {src[1]}")
                    download(src[1], tmp)
                    where = src[1]
                got = _verify_into(tmp, dst, entry, rel, where, paths, log)
                record[rel] = {"sha256": got, "source": where, "pinned": entry.files[rel] is not None}
            except (ChecksumError, DataUnavailable, OSError, zipfile.BadZipFile, StopIteration) as e:
                errors.append(str(e))
            finally:
                tmp.unlink(missing_ok=True)
    finally:
        if archive_dir is not None:
            shutil.rmtree(archive_dir, ignore_errors=True)
    missing = [rel for rel in entry.files if rel not in record]
    if missing:
        how = entry.obtain or (f"Download it from {entry.home}, or set {MIRROR_ENV} to a folder holding "
                               f"{entry.mirror_dir or entry.name}/.")
        detail = ("; ".join(errors) + ". ") if errors else ""
        exc = ChecksumError if any("does not match" in e for e in errors) else DataUnavailable
        raise exc(f"data set {entry.name} is incomplete (missing {', '.join(missing)}). {detail}{how}")
    man = d / MANIFEST
    payload = {"name": entry.name, "title": entry.title, "home": entry.home, "licence": entry.licence,
               "files": record}
    tmpm = man.with_suffix(".tmp")
    tmpm.write_text(json.dumps(payload, indent=2, sort_keys=True))
    os.replace(tmpm, man)
    _record_stamps(d, {rel: rec["sha256"] for rel, rec in record.items()})
    return man


# -------------------------------------------------------------------------------------
# status: what the pipeline can use, decided before any job runs
# -------------------------------------------------------------------------------------
@dataclass
class Availability:
    name: str
    #: verified (in data/raw, every file pinned and matching), unpinned (in data/raw, matching
    #: the sums recorded when fetched, some file not pinned by the registry: not verified),
    #: mirror, download, changed (a file in data/raw no longer matches its sum), placed (every
    #: file put in data/raw by hand, not fetched yet: the fetch job hashes them) or absent
    state: str
    reason: str = ""
    #: when absent: the substitute that will be used instead, if any
    substitute: str | None = None
    how_to_obtain: str = ""
    alternatives_tried: list[str] = field(default_factory=list)

    @property
    def usable(self) -> bool:
        return self.state in ("verified", "unpinned", "placed", "mirror", "download")


def how_to_obtain(entry: DatasetEntry) -> str:
    """Where a user gets the data set: the registry's instructions, or its home page and the mirror."""
    if entry.obtain:
        return entry.obtain
    how = (f"`make data` downloads it from its home page {entry.home}" if entry.downloadable else
           f"Download it from {entry.home} and put its files in data/raw/{entry.name}/")
    if entry.mirror_dir:
        how += f", or set {MIRROR_ENV} to a folder holding {entry.mirror_dir}/"
    return how + "."


def availability(name: str, paths: Paths | None = None, mirror: Path | None = None, probe: bool = True) -> Availability:
    """Where data set ``name`` would come from, without fetching it."""
    entry = mirrored(get(name))
    paths = paths or Paths()
    mirror = mirror_dir() if mirror is None else mirror
    local = check_local(entry, paths)
    if local.ok and not local.unpinned:
        return Availability(name, "verified", f"verified in {paths.raw / entry.name}")
    if local.ok:
        return Availability(name, "unpinned", f"in {paths.raw / entry.name}, not verified: the registry pins no sha256 "
                                              f"for {', '.join(local.unpinned)} (accepted with the sums recorded "
                                              "when fetched)")
    if local.problem:
        linked = " is a symbolic link (" in local.problem
        return Availability(name, "changed", local.problem,
                            how_to_obtain="put the file itself in place of the link" if linked else
                            f"`rankrepro fetch {name}` moves the changed file to "
                            f"{paths.quarantine / entry.name} and fetches it again")
    if placed(entry, paths):
        return Availability(name, "placed", f"put in {paths.raw / entry.name} by hand, not fetched yet: the fetch job "
                                            "hashes every file (against the registry where it pins one; an unpinned "
                                            "file's sum is recorded then, and a later change of it is refused)")
    if (mirror is not None and entry.mirror_dir
            and all((mirror / entry.mirror_dir / rel).is_file() for rel in entry.files)):
        return Availability(name, "mirror", f"in the mirror {mirror / entry.mirror_dir}")
    if probe and home_reachable(entry):
        return Availability(name, "download", f"to be downloaded from {entry.home}")
    why = ("not in data/raw" + (f", not in the mirror (${MIRROR_ENV})" if mirror else f", no mirror (set {MIRROR_ENV})")
           + ((", home page unreachable" if probe else ", home page not tried (make data tries it)")
              if entry.downloadable else ", not downloadable"))
    return Availability(name, "absent", why, how_to_obtain=how_to_obtain(entry))


def resolve(name: str, paths: Paths | None = None, mirror: Path | None = None, probe: bool = True) -> Availability:
    """Availability of ``name``, or of its first usable substitute (recorded in ``substitute``)."""
    a = availability(name, paths, mirror, probe)
    if a.usable:
        return a
    for sub in get(name).substitutes:
        b = resolve(sub, paths, mirror, probe)
        a.alternatives_tried.append(sub)
        if b.usable:
            a.substitute = b.substitute or sub
            return a
    return a


def status_table(paths: Paths | None = None, mirror: Path | None = None, probe: bool = True) -> str:
    rows = [("data set", "status", "detail")]
    for name in DATASETS:
        a = resolve(name, paths, mirror, probe)
        if a.usable:
            rows.append((name, a.state, a.reason))
        elif a.substitute:
            rows.append((name, f"{a.state} -> substitute {a.substitute}", a.reason))
        else:
            rows.append((name, a.state, a.reason + (f"; {a.how_to_obtain}" if a.state == "changed" else "")))
    w = [max(len(r[i]) for r in rows) for i in range(2)]
    return "\n".join(f"{r[0]:<{w[0]}}  {r[1]:<{w[1]}}  {r[2]}" for r in rows)
