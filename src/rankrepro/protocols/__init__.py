"""How each paper uses an algorithm on data.  ``PROTOCOLS`` maps the config names
(``experiment.protocol``) to protocol objects (:class:`~rankrepro.protocols.base.Protocol`):
each owns its learners, the spec of a trial and the trial itself (``protocol(spec)`` returns
``[(metric, round, value)]``), its validation and its size text.  Adding a protocol: one
module defining the object, and one line here (docs/configs.md, "Adding a protocol")."""

from . import coactive, gp, letor, online, ranked_list
from .base import Protocol, Spec
from .coactive import coactive_movies_trial, coactive_ranking_trial
from .gp import gp_trial
from .letor import letor_trial
from .online import online_trial
from .ranked_list import ranked_list_trial

PROTOCOLS: dict[str, Protocol] = {p.name: p for p in (
    online.PROTOCOL,
    letor.PROTOCOL,
    ranked_list.PROTOCOL,
    coactive.MOVIES,
    coactive.RANKING,
    gp.PROTOCOL,
)}

__all__ = ["PROTOCOLS", "Protocol", "Spec", "coactive_movies_trial", "coactive_ranking_trial", "gp_trial",
           "letor_trial", "online_trial", "ranked_list_trial"]
