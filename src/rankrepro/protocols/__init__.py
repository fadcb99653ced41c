"""How each paper uses an algorithm on data.  ``PROTOCOLS`` maps config names to trial
functions ``f(spec: TrialSpec) -> list[(metric, round, value)]``."""

from .online import online_trial

PROTOCOLS = {"online": online_trial}

__all__ = ["PROTOCOLS", "online_trial"]
