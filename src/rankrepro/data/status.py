"""Whether an experiment's data can be had, decided before any job runs: the configured
data set, or its first usable substitute (:func:`rankrepro.data.fetch.resolve`)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class DataStatus:
    """Whether an experiment's data can be had, decided before any job runs."""

    runnable: bool
    #: registry name of the data set used (the configured one or its substitute); None for generated data
    used: str | None = None
    substitute_for: str | None = None
    reason: str = ""
    how_to_obtain: str = ""


def data_status(source: str | None, probe: bool = True) -> DataStatus:
    """The status of an experiment whose ``dataset.source`` is ``source`` (None: generated
    data).  ``probe``: may a data set that is neither verified in data/raw nor in the
    mirror count as downloadable after reaching its home page (False: it counts as absent)."""
    if source is None:
        return DataStatus(True)
    from .fetch import resolve

    a = resolve(source, probe=probe)
    if a.usable:
        return DataStatus(True, used=source)
    if a.substitute:
        return DataStatus(True, used=a.substitute, substitute_for=source,
                          reason=f"{source} is absent ({a.reason}); using the substitute {a.substitute}")
    tried = f" (substitutes tried: {', '.join(a.alternatives_tried)})" if a.alternatives_tried else ""
    what = "changed after it was verified" if a.state == "changed" else "is absent"
    return DataStatus(False, reason=f"data set {source} {what}: {a.reason}{tried}", how_to_obtain=a.how_to_obtain)


def where_files_go(name: str) -> str:
    """Where a user puts the files of data set ``name``: ``data/raw/<name>/`` or the mirror's folder,
    and what happens to files the registry does not pin."""
    from .fetch import MIRROR_ENV, mirrored
    from .registry import get

    e = mirrored(get(name))
    files = ", ".join(e.files)
    pins = [f for f, h in e.files.items() if h is None]
    how = ("the registry pins no sha256 for " + ("them" if len(pins) == len(e.files) else ", ".join(pins))
           + ": hashed when first fetched, refused if changed afterwards") if pins else "each checked against the registry's sha256"
    return f"{files} in data/raw/{name}/ (or ${MIRROR_ENV}/{e.mirror_dir}/); {how}"


def originals_table(paths=None, mirror=None, probe: bool = True, config_dir="config") -> str:
    """For each original data set that is not here and that artefacts are configured on: which
    artefacts it would turn from a substitute (or from not run) into original data, and where its
    files go (``rankrepro data-status``, after the status of every data set)."""
    from .fetch import resolve
    from .uses import artefacts_by_source

    from pathlib import Path

    if not (Path(config_dir) / "experiment").is_dir():
        return ""
    lines = ["", "originals not here, and the artefacts each would turn into original data (files: where to put them):"]
    for name, arts in artefacts_by_source(config_dir).items():
        a = resolve(name, paths, mirror, probe)
        if a.usable:
            continue
        now = f"now on the substitute {a.substitute}" if a.substitute else "now not run"
        lines.append(f"  {name} ({a.state}; {now}): {len(arts)} artefact{'s' if len(arts) > 1 else ''}: "
                     f"{', '.join(arts)}")
        lines.append(f"      files: {where_files_go(name)}")
    return "\n".join(lines) if len(lines) > 2 else ""
