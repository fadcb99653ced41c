"""How each paper uses an algorithm on data.  ``PROTOCOLS`` maps config names to trial
functions ``f(spec: TrialSpec) -> list[(metric, round, value)]``."""

from .coactive import coactive_movies_trial, coactive_ranking_trial
from .gp import gp_trial
from .letor import letor_trial, ranked_list_trial
from .online import online_trial

PROTOCOLS = {"online": online_trial, "letor": letor_trial, "ranked_list": ranked_list_trial,
             "coactive_movies": coactive_movies_trial, "coactive_ranking": coactive_ranking_trial,
             "collab_gp": gp_trial}
#: where each protocol finds its learners
ESTIMATORS = {"online": "online", "letor": "rankers", "ranked_list": "lists", "coactive_movies": "coactive",
              "coactive_ranking": "coactive", "collab_gp": "gp"}

__all__ = ["ESTIMATORS", "PROTOCOLS", "letor_trial", "online_trial", "ranked_list_trial"]
