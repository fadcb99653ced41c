"""Elsas et al. (2008) Sec. 3: given ranked lists evaluated exactly (no data, no
randomness, one 'trial')."""

from __future__ import annotations

from dataclasses import dataclass

from ..algorithms.rankers import LISTS
from ..metrics import average_precision, discordant_pairs, ndcg_at, reciprocal_rank
from .base import Protocol, Spec


@dataclass(frozen=True)
class ListSpec(Spec):
    pass


def ranked_list_trial(spec) -> list[tuple[str, int | None, float]]:
    """Elsas et al. (2008) Sec. 3: the measures of a given ranked list (no randomness)."""
    lab = LISTS[spec.estimator](**spec.params).labels()
    return [("list_discordant", None, float(discordant_pairs(lab))), ("list_ndcg", None, ndcg_at(lab)),
            ("list_rr", None, reciprocal_rank(lab)), ("list_ap", None, average_precision(lab))]


class RankedList(Protocol):
    """Given ranked lists evaluated exactly: no data, no sizes, one 'trial'."""

    name = "ranked_list"
    estimators = LISTS
    uses = frozenset()
    #: the committed cells were fingerprinted with the placeholder ``dataset.n_ranks: 2``
    fingerprint_constants = {"dataset.n_ranks": 2}

    def spec(self, exp, cell, trial, data_path, data_seed, algo_seed) -> ListSpec:
        return ListSpec(estimator=cell.estimator, params=dict(cell.params))

    def run(self, spec: ListSpec):
        return ranked_list_trial(spec)

    def size_text(self, exp) -> str:
        return "exact evaluation of given lists"


PROTOCOL = RankedList()
