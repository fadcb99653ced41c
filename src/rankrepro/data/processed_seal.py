"""The processed data bound to the raw files they were made from (issue 58, item 5).

A ``data.npz`` whose bytes were replaced, with its manifest's ``sha256`` updated to match, passes
the manifest's own check (:mod:`.processed_check`): whoever writes the one can write the other.
So each manifest is also sealed: an HMAC-SHA256 (the per-user secret the kept catalogs are sealed
with, :func:`rankrepro.pipeline.cache.secret`) of the data set's name, the npz's sum, the raw
files' sums and the preprocessing options, kept beside it in ``.seal.json`` (one entry per secret,
so checkouts and tests under other cache folders do not undo each other).  ``rankrepro preprocess``
seals what it built.  A manifest without a seal that verifies (made before seals were kept, built
under another user's secret, or forged) is checked the slow way once: the arrays are made again
from the verified raw files and compared with the npz, value for value; the same arrays are
sealed, other arrays are refused, naming the file.  Someone who can read this user's secret can
seal anything, as for the kept catalogs (docs/reproducibility.md); nobody else can.

Not imported by the data builders or protocols: nothing here is in a cell's code fingerprint."""

from __future__ import annotations

import hashlib
import hmac
import json
import os
from pathlib import Path

import numpy as np

SEAL = ".seal.json"
_FORMAT = "rankrepro-processed-1"


def _key() -> bytes | None:
    from ..pipeline.cache import secret
    from ..pipeline.catalog import default_cache_dir

    return secret(default_cache_dir())


def _mac(key: bytes, manifest: dict) -> str:
    body = json.dumps([_FORMAT, manifest.get("name"), manifest.get("sha256"), manifest.get("sources"),
                       manifest.get("params")], sort_keys=True)
    return hmac.new(key, body.encode(), hashlib.sha256).hexdigest()


def _key_id(key: bytes) -> str:
    return hashlib.sha256(b"rankrepro-seal-id\0" + key).hexdigest()[:16]


def _read(folder: Path) -> dict:
    try:
        seals = json.loads((folder / SEAL).read_text())
    except (OSError, ValueError):
        return {}
    return seals if isinstance(seals, dict) else {}


def sealed(folder: Path, manifest: dict) -> bool:
    """Whether ``manifest`` (of ``folder``) carries a seal under this user's secret."""
    key = _key()
    if key is None:
        return False
    got = _read(folder).get(_key_id(key))
    return isinstance(got, str) and hmac.compare_digest(got, _mac(key, manifest))


def seal(folder: Path, manifest: dict) -> None:
    """Seal ``manifest`` under this user's secret (nothing when there is none to be had, or the
    folder cannot be written: the slow check runs again next time)."""
    key = _key()
    if key is None:
        return
    seals = _read(folder)
    seals[_key_id(key)] = _mac(key, manifest)
    tmp = folder / f".{SEAL}.{os.getpid()}.tmp"
    try:
        tmp.write_text(json.dumps(seals, indent=1, sort_keys=True))
        os.replace(tmp, folder / SEAL)
    except OSError:
        tmp.unlink(missing_ok=True)


def rederived_problem(name: str, npz: Path, data_root: Path) -> str | None:
    """None when the arrays of ``npz`` are those its data set's verified raw files give (made
    again, as preprocessing makes them), else what differs (or why they cannot be made)."""
    from .fetch import ChecksumError, Paths, check_local
    from .preprocess import _expected_sums, _verified_copies, build, read_npz
    from .readers import ReaderError
    from .registry import get

    paths = Paths.under(data_root)
    try:
        entry = get(name)
    except KeyError:
        return f"'{name}' is no data set of the registry"
    manifest = json.loads((npz.parent / "manifest.json").read_text())
    local = check_local(entry, paths, rehash=True)
    if not local.ok:
        return f"its raw files cannot vouch for it ({local.problem or 'not all fetched and verified'})"
    try:
        want = _expected_sums(entry, paths.raw / entry.name / "MANIFEST.json")
        if manifest.get("sources") != want:
            return "its manifest names other raw files than data/raw holds"
        with _verified_copies(entry, paths.raw / entry.name, want, npz.parent.parent) as (copies, _):
            made = build(name, paths, manifest.get("params"), progress=lambda m: None, source=copies)
    except (ChecksumError, ReaderError, OSError) as e:
        return f"its raw files cannot vouch for it ({e})"
    have = read_npz(npz)
    if sorted(have) != sorted(made):
        return f"it holds the arrays {sorted(have)}, the raw files give {sorted(made)}"
    for k in made:
        a, b = np.asarray(have[k]), np.asarray(made[k])
        if a.dtype != b.dtype or a.shape != b.shape or not np.array_equal(a, b):
            return f"its array '{k}' is not what the raw files give"
    return None
