"""Online ordinal learners.  ``REGISTRY`` maps the names used in configs to classes."""

from .base import Interval, OnlineRanker, ParamError
from .baselines import MulticlassPerceptron, WidrowHoff
from .kernels import FEATURE_MAPS, poly2_features, poly2_kernel
from .oap import OAPBPM, OAPVP, OAPBagg
from .prank import MuPRank, NoPRank, PRank, SiPRank, VotedPRank

REGISTRY: dict[str, type[OnlineRanker]] = {
    cls.name: cls
    for cls in (PRank, SiPRank, NoPRank, MuPRank, VotedPRank, MulticlassPerceptron, WidrowHoff, OAPBPM, OAPBagg, OAPVP)
}

__all__ = [
    "FEATURE_MAPS", "Interval", "MuPRank", "MulticlassPerceptron", "NoPRank", "OAPBPM", "OAPBagg", "OAPVP",
    "OnlineRanker", "PRank", "ParamError", "REGISTRY", "SiPRank", "VotedPRank", "WidrowHoff",
    "poly2_features", "poly2_kernel",
]
