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
