"""The learners.  Every one is an :class:`Estimator` (one base for parameters, validation,
clone and repr; scikit-learn compatible).  ``ONLINE`` maps the names used in configs to the
online ordinal learners; :mod:`.rankers` (``RANKERS``), :mod:`.gp` (``GP``) and
:mod:`.coactive` (``COACTIVE``) hold the other families; :func:`families` names them all.
The compiled loops are in ``_compiled``, the explicit feature maps in ``feature_maps``."""

from .base import Estimator, NotFittedError, OnlineRanker, ParamError, Range
from .baselines import MulticlassPerceptron, WidrowHoff
from .feature_maps import FEATURE_MAPS, poly2_features, poly2_kernel
from .oap import OAPBPM, OAPVP, OAPBagg
from .prank import MuPRank, NoPRank, PRank, SiPRank, VotedPRank

#: a registry (config names -> what this package holds): a cell's code fingerprint follows
#: only the names taken from it, never all of its imports (rankrepro.pipeline.codeprint)
__registry__ = True

ONLINE: dict[str, type[OnlineRanker]] = {
    cls.name: cls
    for cls in (PRank, SiPRank, NoPRank, MuPRank, VotedPRank, MulticlassPerceptron, WidrowHoff, OAPBPM, OAPBagg, OAPVP)
}



def families() -> dict[str, dict[str, type[Estimator]]]:
    """Every registered learner, by family (imported on demand: a job loads only its own)."""
    from .coactive import COACTIVE
    from .gp import GP
    from .rankers import RANKERS

    return {"online": ONLINE, "rankers": RANKERS, "gp": GP, "coactive": COACTIVE}


__all__ = [
    "Estimator", "FEATURE_MAPS", "families", "NotFittedError", "Range", "MuPRank", "MulticlassPerceptron", "NoPRank", "OAPBPM", "OAPBagg", "OAPVP",
    "OnlineRanker", "PRank", "ParamError", "ONLINE", "SiPRank", "VotedPRank", "WidrowHoff",
    "poly2_features", "poly2_kernel",
]
