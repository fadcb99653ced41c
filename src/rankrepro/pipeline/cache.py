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
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any, Callable

from omegaconf import OmegaConf

#: (name, resolved config as plain data) -> the experiment, validated (raises when it is not a
#: valid one); given by the catalog, which this module does not import
Build = Callable[[str, dict], Any]
#: checks across a whole catalog (raises when it is not a valid one)
Check = Callable[[dict], None]

#: the format tag of a kept catalog; a file of another format is ignored
FORMAT = "rankrepro-catalog/2"
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
            "experiments": {name: {"config": OmegaConf.to_container(exp.cfg), "cells": [c.id for c in exp.all_cells]}
                            for name, exp in cat.items()}}


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
    cat = {}
    for name in names:
        entry = exps[name]
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
        cat[name] = exp
    try:
        check(cat)
    except Exception as e:  # noqa: BLE001 - a ConfigError: two experiments writing one file
        raise InvalidCache(str(e)) from None
    return cat


def read(cache_dir: str | os.PathLike, names: list[str], scale: str, key: str, build: Build,
         check: Check) -> dict | None:
    """The kept catalog for ``key``, validated, or None (none kept, or one that does not
    validate: that file is removed)."""
    f = cache_file(cache_dir, scale, key)
    try:
        if f.stat().st_size > MAX_BYTES:
            raise InvalidCache(f"{f.stat().st_size} bytes")
        data = json.loads(f.read_bytes())
        return rebuild(data, names, scale, key, build, check)
    except OSError:  # not kept yet, or a folder that cannot be read: composed
        return None
    except (InvalidCache, ValueError, RecursionError):  # ValueError: not JSON
        with contextlib.suppress(OSError):
            f.unlink()
        return None


def write(cache_dir: str | os.PathLike, cat: dict, scale: str, key: str, build: Build, check: Check,
          same: Callable[[dict, dict], bool]) -> bool:
    """Keep ``cat`` when the catalog read back from the file would be the same (``same``);
    returns whether it was kept.  The newest few files are kept per scale (the folder may be shared by
    several checkouts: the key says which configs and code each file is for)."""
    try:
        text = json.dumps(payload(cat, scale, key), separators=(",", ":"), allow_nan=False)
        back = rebuild(json.loads(text), list(cat), scale, key, build, check)
    except (InvalidCache, ValueError, TypeError):  # a value JSON cannot hold (nan, an object): not kept
        return False
    if not same(cat, back):
        return False
    f = cache_file(cache_dir, scale, key)
    try:
        f.parent.mkdir(parents=True, exist_ok=True)
        kept = sorted(f.parent.glob(f"catalog-{scale}-*.json"), key=lambda q: q.stat().st_mtime, reverse=True)
        for old in kept[KEEP - 1:]:
            old.unlink(missing_ok=True)
        tmp = f.with_name(f".{f.name}.{os.getpid()}.tmp")
        tmp.write_text(text)
        os.replace(tmp, f)
    except OSError:  # a read-only place: the catalog is still right, only not kept
        return False
    return True
