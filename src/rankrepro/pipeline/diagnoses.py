"""The diagnoses of an experiment, kept in a file of their own beside it.

An experiment file ``config/experiment/<paper>/<artefact>.yaml`` holds the protocol, the grid,
the published values and the claims; why a reproduced value or claim disagrees with the paper
(its *diagnosis*: prose that quotes the run's numbers as Jinja expressions) lives in
``config/diagnoses/<paper>/<artefact>.yaml``::

    published:                  # one entry per diagnosed published value, found by its
      - select: {algorithm: prank}   # select and metric (and round, where one is printed)
        metric: test_rank_loss
        diagnosis: {kind: paper, text: "..."}
    claims:                     # claim id -> its diagnosis
      vp_converges_fastest: {kind: paper, text: "..."}

:func:`merge` attaches each diagnosis to its entry of the composed experiment, so the resolved
config (and everything made from it: the cells' fingerprints, the records) is the same as with
the diagnosis written inline.  The file is read by this module, not composed by Hydra (a
diagnosis attaches to one element of a list, and Hydra replaces lists whole); it lies outside
``config/experiment/`` so that it is never listed as an experiment.  An experiment may still
write a diagnosis inline (an experiment of one's own); one entry diagnosed in both places, a
file naming a published value or claim the experiment does not have, and a file with no
experiment are refused, naming the file and the key.
"""

from __future__ import annotations

import re
from pathlib import Path
from .config_errors import ConfigError, require

#: the folder of the diagnoses files, under the config folder
FOLDER = "diagnoses"
#: the keys of a diagnoses file, and of one of its published entries
_TOP = ("published", "claims")
_PUBLISHED_KEYS = ("select", "metric", "round", "source", "diagnosis")


def relative_path(name: str) -> str:
    """The diagnoses file of experiment ``name`` (``<paper>/<artefact>``), relative to the
    config folder's parent: ``config/diagnoses/<paper>/<artefact>.yaml``."""
    return f"config/{FOLDER}/{name}.yaml"


def path(root: Path, name: str) -> Path:
    return Path(root) / FOLDER / f"{name}.yaml"


def read(name: str, root: Path) -> dict | None:
    """The diagnoses file of ``name`` as plain data (None: it has none), its shape checked."""
    from omegaconf import OmegaConf

    f = path(root, name)
    if not f.is_file():
        return None
    where = relative_path(name)
    try:
        # OmegaConf's YAML loader, as Hydra reads the experiment files (1e-3 is a float)
        doc = OmegaConf.to_container(OmegaConf.load(f), resolve=False)
    except Exception as e:  # noqa: BLE001 - a YAML error: its line, with the file
        from .config_errors import config_error

        err = config_error(name, e)
        msg = _message(err)
        raise ConfigError(name, err.key, msg if str(f) in msg else f"{where}: {msg}") from None
    doc = doc or {}
    require(name, FOLDER, isinstance(doc, dict), f"{where}: holds a mapping with the keys {', '.join(_TOP)}")
    for k in doc:
        require(name, str(k), k in _TOP, f"{where}: unknown key '{k}' (a diagnoses file has {', '.join(_TOP)})")
    published = doc.get("published") or []
    require(name, "published", isinstance(published, list),
            f"{where}: a list of {{select, metric, diagnosis}} entries, one per diagnosed published value")
    for j, p in enumerate(published):
        key = f"published[{j}]"
        require(name, key, isinstance(p, dict), f"{where}: an entry {{select, metric, diagnosis}}, got {p!r}")
        for k in p:
            require(name, f"{key}.{k}", k in _PUBLISHED_KEYS,
                    f"{where}: unknown key '{k}' (an entry names its published value by "
                    f"{', '.join(_PUBLISHED_KEYS[:-1])} and gives its diagnosis)")
        for k in ("select", "metric", "diagnosis"):
            require(name, f"{key}.{k}", k in p, f"{where}: missing '{k}'")
        require(name, f"{key}.select", isinstance(p["select"], dict), f"{where}: a mapping, as in the experiment")
        _check_diagnosis(name, f"{key}.diagnosis", p["diagnosis"], where)
    claims = doc.get("claims") or {}
    require(name, "claims", isinstance(claims, dict), f"{where}: a mapping of claim id -> diagnosis")
    for cid, d in claims.items():
        _check_diagnosis(name, f"claims.{cid}", d, where)
    return {"published": published, "claims": claims}


def _check_diagnosis(name: str, key: str, d: object, where: str) -> None:
    """A diagnosis is a mapping of the schema's keys (their values are checked with the
    experiment, and reported here by :func:`relocate`)."""
    from dataclasses import fields

    from .schema import DiagnosisCfg

    allowed = [f.name for f in fields(DiagnosisCfg)]
    require(name, key, isinstance(d, dict), f"{where}: a mapping {{{', '.join(allowed)}}}, got {d!r}")
    for k in d:
        require(name, f"{key}.{k}", k in allowed, f"{where}: unknown key '{k}' (a diagnosis has {', '.join(allowed)})")


def merge(name: str, root: Path, plain: dict, unmatched: list[ConfigError] | None = None) -> dict[str, str]:
    """Attach the diagnoses of ``config/diagnoses/<name>.yaml`` to the published values and
    claims of ``plain`` (the composed, resolved experiment as plain data), in place.  Returns
    where each came from: the experiment's key (``experiment.claims[2].diagnosis``) -> the
    file's (``claims.<id>``), for :func:`relocate`.  ``unmatched``: an entry that names no
    published value or claim of the experiment is added to it (to be raised once the
    experiment's own checks pass: an override that changes a published value's select is
    reported at its key, not as the diagnosis it orphans) instead of raised."""
    doc = read(name, root)
    if doc is None:
        return {}
    where = relative_path(name)
    exp = plain.get("experiment") or {}
    located: dict[str, str] = {}
    published = exp.get("published") or []
    for j, p in enumerate(doc["published"]):
        hits = [i for i, q in enumerate(published) if isinstance(q, dict) and _same_value(p, q)]
        what = f"{p['metric']} of {p['select']}" + (f" at round {p['round']}" if "round" in p else "")
        if len(hits) != 1:
            err = ConfigError(name, f"published[{j}]",
                              f"{where}: the experiment has {'no' if not hits else len(hits)} published value"
                              f"{'s' if len(hits) > 1 else ''} {what}"
                              + (" (add round or source to tell them apart)" if hits else ""))
            if unmatched is None or hits:
                raise err
            unmatched.append(err)
            continue
        i = hits[0]
        require(name, f"published[{j}].diagnosis", published[i].get("diagnosis") is None,
                f"{where}: the published value {what} has a diagnosis in the experiment file too; keep one")
        published[i]["diagnosis"] = p["diagnosis"]
        located[f"experiment.published[{i}].diagnosis"] = f"published[{j}].diagnosis"
    claims = exp.get("claims") or []
    ids = [c.get("id") for c in claims if isinstance(c, dict)]
    for cid, d in doc["claims"].items():
        if cid not in ids:
            err = ConfigError(name, f"claims.{cid}", f"{where}: the experiment has no claim '{cid}' "
                                                      f"(its claims: {', '.join(map(str, ids)) or 'none'})")
            if unmatched is None:
                raise err
            unmatched.append(err)
            continue
        i = ids.index(cid)
        require(name, f"claims.{cid}", claims[i].get("diagnosis") is None,
                f"{where}: claim '{cid}' has a diagnosis in the experiment file too; keep one")
        claims[i]["diagnosis"] = d
        located[f"experiment.claims[{i}].diagnosis"] = f"claims.{cid}"
    return located


def _same_value(entry: dict, published: dict) -> bool:
    """Whether a diagnoses file's entry names this published value: the same select and metric,
    and the same round and source where the entry gives them."""
    if entry["select"] != published.get("select") or entry["metric"] != published.get("metric"):
        return False
    return all(entry[k] == published.get(k) for k in ("round", "source") if k in entry)


_KEY = re.compile(r"^(experiment\.(?:published|claims)\[\d+\]\.diagnosis)(.*)$")


def relocate(name: str, err: ConfigError, located: dict[str, str]) -> ConfigError:
    """A config error at a diagnosis that came from the diagnoses file, restated at that
    file's key (``claims.<id>.kind``) with the file named; any other error as it is."""
    m = _KEY.match(err.key or "")
    if m is None or m.group(1) not in located:
        return err
    return ConfigError(name, located[m.group(1)] + m.group(2), f"{relative_path(name)}: {_message(err)}")


def _message(err: ConfigError) -> str:
    """What a :class:`ConfigError` says, without its 'config error in experiment ... at key ...'."""
    prefix = f"config error in experiment '{err.experiment}' at key '{err.key}': "
    return str(err)[len(prefix):] if str(err).startswith(prefix) else str(err)


def check_files(root: Path, experiments: list[str]) -> None:
    """Every diagnoses file belongs to an experiment (a file for an artefact renamed or
    removed would otherwise be silently ignored)."""
    base = Path(root) / FOLDER
    if not base.is_dir():
        return
    known = set(experiments)
    for f in sorted(base.rglob("*.yaml")):
        rel = f.relative_to(base).as_posix()
        n = rel[:-len(".yaml")]
        require(n, FOLDER, n in known,
                f"config/{FOLDER}/{rel}: no experiment config/experiment/{n}.yaml has this diagnoses file "
                f"(a diagnoses file is config/{FOLDER}/<paper>/<artefact>.yaml, beside its experiment's name)")


__all__ = ["FOLDER", "check_files", "merge", "path", "read", "relative_path", "relocate"]
