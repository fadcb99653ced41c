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

SEAL = ".seal.json"
_FORMAT = "rankrepro-processed-1"


def _key() -> bytes | None:
    from ..user_secret import cache_dir, secret

    return secret(cache_dir())


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
