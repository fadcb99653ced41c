"""How each paper uses an algorithm on data.  ``PROTOCOLS`` maps the config names
(``experiment.protocol``) to protocol objects (:class:`~rankrepro.protocols.base.Protocol`):
each owns its learners, the spec of a trial and the trial itself (``protocol(spec)`` returns
``[(metric, round, value)]``), its validation and its size text.  Adding a protocol: one
module defining the object, and one line in ``PROTOCOLS`` below (docs/protocols.md).

A protocol's module is imported when the protocol is first asked for, so a job loads only
its own protocol and learners (the GP models' SciPy, the LETOR rankers, ...)."""

from __future__ import annotations

from collections.abc import MutableMapping
from importlib import import_module
from typing import Iterator

from .base import Protocol, Spec

#: a registry (config names -> what this package holds): a cell's code fingerprint follows
#: only the names taken from it, never all of its imports (rankrepro.pipeline.codeprint)
__registry__ = True


class _Registry(MutableMapping):
    """name -> protocol object; each entry is "module:attribute" until first used."""

    def __init__(self, where: dict[str, str]):
        self._where = dict(where)
        self._loaded: dict[str, Protocol] = {}

    def __getitem__(self, name: str) -> Protocol:
        if name not in self._loaded:
            module, attr = self._where[name].split(":")
            self._loaded[name] = getattr(import_module(f"{__name__}.{module}"), attr)
        return self._loaded[name]

    def __setitem__(self, name: str, protocol: Protocol) -> None:
        self._where[name] = ""
        self._loaded[name] = protocol

    def __delitem__(self, name: str) -> None:
        del self._where[name]
        self._loaded.pop(name, None)

    def __contains__(self, name: object) -> bool:
        return name in self._where

    def __iter__(self) -> Iterator[str]:
        return iter(self._where)

    def __len__(self) -> int:
        return len(self._where)


PROTOCOLS: MutableMapping[str, Protocol] = _Registry({
    "online": "online:PROTOCOL",
    "letor": "letor:PROTOCOL",
    "letor_seeds": "letor_seeds:PROTOCOL",
    "ranked_list": "ranked_list:PROTOCOL",
    "coactive_movies": "coactive:MOVIES",
    "coactive_ranking": "coactive:RANKING",
    "collab_gp": "gp:PROTOCOL",
})

_TRIALS = {"online_trial": "online", "letor_trial": "letor", "letor_seeds_trial": "letor_seeds", "ranked_list_trial": "ranked_list",
           "coactive_movies_trial": "coactive", "coactive_ranking_trial": "coactive", "gp_trial": "gp"}


def __getattr__(name: str):
    if name in _TRIALS:
        return getattr(import_module(f"{__name__}.{_TRIALS[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["PROTOCOLS", "Protocol", "Spec", *_TRIALS]
