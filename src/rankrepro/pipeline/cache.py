"""The kept catalog: the validated experiments of one scale, as data, read back at the
workflow's start instead of composing the configs again (~10 s).

A kept catalog is one JSON file, ``catalog-<scale>-<key>.json`` in the cache folder
(``$RANKREPRO_CACHE_DIR``, else ``~/.cache/rankrepro``), ``<key>`` being
:func:`rankrepro.pipeline.catalog.catalog_key` (the config files, the scale, this package's
code, the library versions).  It holds, per experiment, the resolved config (plain JSON: the
content of ``results/<paper>/<artefact>.config.yaml``) and the ids of its cells.  Nothing in it is code: reading it parses JSON and rebuilds each experiment from its
resolved config through the catalog's own code (cells, sizes, sensitivity variants, and the
checks of every name that becomes a path), as a job rebuilds one from its resolved file.

A file is used only when it validates: the right format, key, scale and experiment names,
plain data with no interpolation, a config the catalog accepts (the checks of a resolved
file, :func:`rankrepro.pipeline.catalog.load_resolved`, with those of every name that becomes a
path), and its cells rebuilt exactly as stored.  Anything else (a truncated, foreign, edited or planted
file) is ignored: the catalog is composed from the configs and the file replaced.  A file is
written only after the catalog rebuilt from it was checked equal to the composed one (every
resolved config, variant, cell and fingerprint).

A file is used only when this user's project wrote it: the folder is shared by checkouts (and
may be by users), and a valid file planted under the right key (a hash anyone can compute
from a checkout) would otherwise change an experiment, its published values, its title or the
learner class it imports, while its YAML is unchanged.  So each file is sealed with a keyed
MAC (HMAC-SHA256, :func:`seal`) under a per-user secret, ``secret.key`` in the cache folder
(32 random bytes from ``os.urandom``, made on first use: file mode 0600, folder 0700 when
made); the MAC is checked on the file's bytes (:func:`unseal`) before anything in the file is
parsed or used, in particular before any ``_target_`` named in it is imported.  A file whose
MAC does not verify (planted, edited, truncated, sealed under another secret) is ignored with
one warning line naming it, the catalog is composed from the configs, and the file is then
replaced by the composed one under the same name.  A secret that is absent, unreadable, not
this user's own or readable by others is replaced by a new one: the files sealed under the old
one then simply miss (and are replaced as they are met).  Only files sealed under this
secret are ever pruned (:data:`KEEP`); the project's own temporary files are removed when a
write fails.  The MAC costs ~1 ms per load (the smoke catalog's file is 0.3 MB).
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import stat
import sys
from pathlib import Path
from typing import Any, Callable

from omegaconf import OmegaConf

#: (name, resolved config as plain data) -> the experiment, validated (raises when it is not a
#: valid one); given by the catalog, which this module does not import
Build = Callable[[str, dict], Any]
#: checks across a whole catalog (raises when it is not a valid one)
Check = Callable[[dict], None]

#: the format tag of a kept catalog; a file of another format is ignored
FORMAT = "rankrepro-catalog/3"
#: the end of a sealed file: ``,"mac":"<64 hex digits>"}`` closes the catalog's JSON object
_MAC_HEAD, _MAC_TAIL = b',"mac":"', b'"}'
_SEAL_BYTES = len(_MAC_HEAD) + 64 + len(_MAC_TAIL)
#: how kept files are opened for reading: never through a link, never waiting on a FIFO
from ..user_secret import _NOFOLLOW, _READ, SECRET, SECRET_BYTES, _own_secret, secret, secret_problem  # noqa: E402,F401
#: catalogs kept per scale in a cache folder
KEEP = 8
#: a kept catalog larger than this is not read (today's are ~0.5 MB)
MAX_BYTES = 64 << 20


class InvalidCache(ValueError):
    """A kept catalog that is not a valid one (why: the message)."""


def cache_file(cache_dir: str | os.PathLike, scale: str, key: str) -> Path:
    return Path(cache_dir) / f"catalog-{scale}-{key}.json"


def payload(cat: dict, scale: str, key: str) -> dict[str, Any]:
    """The JSON content of a kept catalog."""
    return {"format": FORMAT, "key": key, "scale": scale,
            "experiments": {name: entry(exp) for name, exp in cat.items()}}


def entry(exp: Any) -> dict[str, Any]:
    """One experiment's part of a kept catalog: its resolved config and its cells' ids."""
    return {"config": OmegaConf.to_container(exp.cfg), "cells": [c.id for c in exp.all_cells]}


def read_back(name: str, exp: Any, build: Build, same: Callable[[dict, dict], bool]) -> bool:
    """Whether one experiment, written as its entry in a kept catalog and read back (through
    JSON, as :func:`write` then :func:`read` would), is the same experiment: what :func:`write`
    checks of the whole catalog, done per experiment where it was composed (the catalog's
    worker processes), so that ``write(..., read_back_checked=True)`` need not do it again."""
    try:
        data = json.loads(json.dumps(entry(exp), separators=(",", ":"), allow_nan=False))
        back = _rebuilt_entry(name, data, build)
    except (InvalidCache, ValueError, TypeError):
        return False
    return same({name: exp}, {name: back})


def _rebuilt_entry(name: str, entry: Any, build: Build) -> Any:
    if not isinstance(entry, dict) or not isinstance(entry.get("config"), dict) \
            or not isinstance(entry.get("cells"), list):
        raise InvalidCache(f"{name}: not a config and its cells")
    _plain(entry["config"], name)
    try:
        exp = build(name, entry["config"])
    except Exception as e:  # noqa: BLE001 - a ConfigError, OmegaConf's errors: a config the catalog cannot use
        raise InvalidCache(f"{name}: {type(e).__name__}: {e}") from None
    if [c.id for c in exp.all_cells] != entry["cells"]:
        raise InvalidCache(f"{name}: the cells differ from those stored")
    return exp


def _plain(node: Any, where: str) -> None:
    """JSON data only (mappings with string keys, lists, strings, numbers, booleans, null), and
    no string an OmegaConf interpolation would read (``${...}``): a resolved config has none."""
    if isinstance(node, dict):
        for k, v in node.items():
            if not isinstance(k, str):
                raise InvalidCache(f"{where}: key {k!r} is not a string")
            _plain(v, f"{where}.{k}")
    elif isinstance(node, list):
        for i, v in enumerate(node):
            _plain(v, f"{where}[{i}]")
    elif isinstance(node, str):
        if "${" in node:
            raise InvalidCache(f"{where}: an interpolation ({node[:40]!r}) in a resolved config")
    elif node is not None and not isinstance(node, (bool, int, float)):
        raise InvalidCache(f"{where}: {type(node).__name__} is not plain data")


def rebuild(data: Any, names: list[str], scale: str, key: str, build: Build, check: Check) -> dict:
    """The catalog a kept catalog's content describes, validated (``build``: one experiment
    from its resolved config, ``check``: across experiments); raises :class:`InvalidCache`."""
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise InvalidCache(f"not a kept catalog of format {FORMAT}")
    if data.get("key") != key or data.get("scale") != scale:
        raise InvalidCache("made for other configs, code or scale")
    exps = data.get("experiments")
    if not isinstance(exps, dict) or list(exps) != names:
        raise InvalidCache("not the experiments of the config folder")
    cat = {name: _rebuilt_entry(name, exps[name], build) for name in names}
    try:
        check(cat)
    except Exception as e:  # noqa: BLE001 - a ConfigError: two experiments writing one file
        raise InvalidCache(str(e)) from None
    return cat


def _warn(message: str) -> None:
    print(f"rankrepro: {message}", file=sys.stderr, flush=True)


_SAID: set[str] = set()


def folder_problem(cache_dir: str | os.PathLike) -> str | None:
    """Why ``cache_dir`` cannot keep catalogs (None: it can, or does not exist yet and will be
    made 0700): a file where the folder should be, another user's folder, or one others may write
    (mode 1777 or 0777: anyone could replace the secret or plant files, and two users there
    replace each other's secret, so every run composed again)."""
    try:
        st = os.stat(cache_dir)
    except FileNotFoundError:
        return None
    except OSError as e:
        return f"cannot be read ({e.strerror})"
    if not stat.S_ISDIR(st.st_mode):
        return "is a file, not a folder"
    if hasattr(os, "getuid") and st.st_uid != os.getuid():
        return f"belongs to another user (uid {st.st_uid})"
    if st.st_mode & 0o022:
        return f"may be written by others (mode {stat.S_IMODE(st.st_mode):04o}: a folder shared by several users)"
    return None


def usable(cache_dir: str | os.PathLike) -> bool:
    """Whether catalogs may be kept in ``cache_dir``; when not, one line says why, once per process."""
    why = folder_problem(cache_dir)
    if why is None:
        return True
    if str(cache_dir) not in _SAID:
        _SAID.add(str(cache_dir))
        _warn(f"no catalog is kept in {cache_dir}: it {why}; each run composes the configs again (set "
              "RANKREPRO_CACHE_DIR to a folder of your own)")
    return False


def _mac(key: bytes, scale: str, cat_key: str, body: bytes) -> str:
    """HMAC-SHA256 of a catalog's JSON, bound to the scale and key its file is named by."""
    return hmac.new(key, f"{FORMAT}\0{scale}\0{cat_key}\0".encode() + body, hashlib.sha256).hexdigest()


def seal(body: bytes, key: bytes, scale: str, cat_key: str) -> bytes:
    """A catalog's compact JSON object with its MAC added as the last member: still JSON."""
    if not body.endswith(b"}"):
        raise ValueError("not a JSON object")
    return body[:-1] + _MAC_HEAD + _mac(key, scale, cat_key, body).encode() + _MAC_TAIL


def unseal(raw: bytes, key: bytes, scale: str, cat_key: str) -> bytes:
    """The catalog's JSON a sealed file holds, once its MAC verified; raises
    :class:`InvalidCache` (checked on the bytes: nothing is parsed before)."""
    tail = raw[-_SEAL_BYTES:]
    if len(raw) <= _SEAL_BYTES or not tail.startswith(_MAC_HEAD) or not tail.endswith(_MAC_TAIL):
        raise InvalidCache("no MAC (not written by this project, or cut short)")
    body = raw[:-_SEAL_BYTES] + b"}"
    if not hmac.compare_digest(tail[len(_MAC_HEAD):-len(_MAC_TAIL)], _mac(key, scale, cat_key, body).encode()):
        raise InvalidCache("its MAC does not verify (edited, planted, or written under another user's secret)")
    return body


def read(cache_dir: str | os.PathLike, names: list[str], scale: str, key: str, build: Build,
         check: Check) -> dict | None:
    """The kept catalog for ``key``, its MAC verified, validated, or None: none kept, no
    secret to be had, or one that does not verify or validate (one warning line naming the
    file; :func:`write` replaces it with the composed catalog)."""
    if not usable(cache_dir):
        return None
    f = cache_file(cache_dir, scale, key)
    try:
        fd = os.open(f, _READ)
    except OSError:  # not kept yet (or a link, or a folder that cannot be read): composed
        return None
    try:
        with os.fdopen(fd, "rb") as fh:
            raw = fh.read(MAX_BYTES + 1) if stat.S_ISREG(os.fstat(fh.fileno()).st_mode) else b""
    except OSError:
        return None
    try:
        if len(raw) > MAX_BYTES:
            raise InvalidCache(f"larger than {MAX_BYTES} bytes")
        sf = Path(cache_dir) / SECRET
        replaced = None if _own_secret(sf) is not None else secret_problem(sf)
        mac_key = secret(cache_dir)
        if mac_key is None:
            raise InvalidCache(f"no secret to verify it with ({sf} can be neither read nor made)")
        try:
            data = json.loads(unseal(raw, mac_key, scale, key))
        except InvalidCache:
            if replaced is None:
                raise
            # not (necessarily) the catalog's fault: the secret it was sealed under is gone
            if replaced == "it was deleted":
                raise InvalidCache(f"there was no secret {sf} to verify its MAC with (deleted, or the file planted "
                                   "where none was ever made): a new secret was made") from None
            raise InvalidCache(f"the secret {sf} was replaced by a new one ({replaced}), and the catalog was sealed "
                               "under the old one") from None
        return rebuild(data, names, scale, key, build, check)
    except (InvalidCache, ValueError, RecursionError) as e:  # ValueError: not JSON
        why = e if isinstance(e, InvalidCache) else f"not JSON ({type(e).__name__})"
        _warn(f"ignored the kept catalog {f}: {why}; composed from the configs instead")
        return None


def _sealed_here(f: Path, key: bytes, scale: str) -> bool:
    """Whether ``f`` (``catalog-<scale>-<key>.json``) is sealed under ``key``: the project's own."""
    cat_key = f.name[len(f"catalog-{scale}-"):-len(".json")]
    try:
        fd = os.open(f, _READ)
        with os.fdopen(fd, "rb") as fh:
            if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
                return False
            unseal(fh.read(MAX_BYTES + 1), key, scale, cat_key)
    except (OSError, InvalidCache):
        return False
    return True


def write(cache_dir: str | os.PathLike, cat: dict, scale: str, key: str, build: Build, check: Check,
          same: Callable[[dict, dict], bool], read_back_checked: bool = False) -> bool:
    """Keep ``cat``, sealed (:func:`seal`), when the catalog read back from the file would be
    the same (``same``); returns whether it was kept.  ``read_back_checked``: each experiment
    was checked so already (:func:`read_back`, where it was composed) and ``check`` passed on
    the catalog: only written.  The newest few files this user's
    project sealed are kept per scale (the folder may be shared by several checkouts: the key
    says which configs and code each file is for); a file not sealed under this secret is
    never removed, only replaced when it bears this catalog's name."""
    try:
        text = json.dumps(payload(cat, scale, key), separators=(",", ":"), allow_nan=False)
        back = None if read_back_checked else rebuild(json.loads(text), list(cat), scale, key, build, check)
    except (InvalidCache, ValueError, TypeError):  # a value JSON cannot hold (nan, an object): not kept
        return False
    if back is not None and not same(cat, back):
        return False
    if not usable(cache_dir):
        return False
    mac_key = secret(cache_dir)
    if mac_key is None:  # a read-only place: the catalog is still right, only not kept
        return False
    f = cache_file(cache_dir, scale, key)
    tmp = f.with_name(f".{f.name}.{os.getpid()}.tmp")
    try:
        kept = sorted((q for q in f.parent.glob(f"catalog-{scale}-*.json") if _sealed_here(q, mac_key, scale)),
                      key=lambda q: q.stat().st_mtime, reverse=True)
        for old in kept[KEEP - 1:]:
            old.unlink(missing_ok=True)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(seal(text.encode(), mac_key, scale, key))
        os.replace(tmp, f)
    except OSError:  # a read-only place, a full disk: the catalog is still right, only not kept
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)  # the project's own temporary file, never left behind
        return False
    return True
