"""What every protocol is: one object that owns everything a protocol means.

A protocol says how a paper uses a learner on data.  Its object (one per module of this
package, registered in :data:`rankrepro.protocols.PROTOCOLS`) owns

* ``estimators``: the registry of learners a config's ``algorithms.<key>.estimator`` names;
* ``uses``: the config fields it reads beyond ``n_trials``, ``seed`` and ``metrics``
  (``n_train``, ``n_test``, ``n_ranks``, ``features``); the catalog validates those and no
  others, so a config sets no value that only exists to pass validation;
* :meth:`Protocol.validate`: its own checks on the composed config;
* :meth:`Protocol.spec`: the :class:`Spec` of one trial (small and picklable: it is sent to
  the worker processes), and :meth:`Protocol.run` (also ``protocol(spec)``): the trial;
* ``trials_extend``: whether a trial depends on the number of trials (see the attribute);
* :meth:`Protocol.size_text` and ``unit``: the run's size in its own words (records,
  logs) and what one trial is, in the plural (figure titles).

The objects take the loaded experiment as it is (anything with ``cfg``, ``n_trials``,
``n_train``, ... attributes): this package imports nothing from the pipeline or the report.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, ClassVar, Mapping

import numpy as np

#: one row of a trial's results: (metric, round or None, value)
Row = tuple[str, "int | None", float]
#: ``require(key, ok, message)``: raise the catalog's config error naming ``key`` unless ``ok``
Require = Callable[[str, bool, str], None]

#: the config fields a protocol may read (beyond n_trials, seed and metrics)
FIELDS = frozenset({"n_train", "n_test", "n_ranks", "features"})


@dataclass(frozen=True)
class Spec:
    """What every trial gets: the learner (its registry name) and its hyperparameters.
    Each protocol's spec adds its own fields after these two."""

    estimator: str
    params: dict[str, Any]


class Protocol:
    """The base of every protocol object (see the module docstring)."""

    #: the name configs give as ``experiment.protocol``
    name: ClassVar[str] = ""
    #: the learners of this protocol: registry name -> class
    estimators: Mapping[str, type] = {}
    #: the config fields this protocol reads (a subset of :data:`FIELDS`)
    uses: frozenset[str] = frozenset()
    #: what one trial is, in the plural (figure titles)
    unit: str = "trials"
    #: values the cell fingerprint hashes in place of fields the protocol does not read:
    #: the values these fields had when the committed results were computed, so that no
    #: longer setting them (they were placeholders that only passed validation) leaves the
    #: fingerprints, and with them the committed cells, current.  Keys: ``experiment.<field>``
    #: or ``dataset.<field>``.
    fingerprint_constants: Mapping[str, Any] = {}
    #: True when trial i's spec does not depend on how many trials run (only on i and the
    #: seeds): a run of more trials then extends a run of fewer, and a sensitivity cell that
    #: only adds trials reuses its main cell's (:func:`rankrepro.pipeline.cells.reused_trials`).
    #: False where trials share out something by their number (the coactive user groups).
    trials_extend: bool = False

    def validate(self, cfg: Any, require: Require) -> None:
        """Checks of the composed config (``cfg.experiment``, ``cfg.dataset``) that depend on
        the protocol.  The base checks the fields of ``uses``; a protocol adds its own."""
        e, d = cfg.experiment, cfg.dataset
        if "n_train" in self.uses:
            require("experiment.n_train", e.n_train >= 1, f"must be >= 1, got {e.n_train}")
        if "n_ranks" in self.uses:
            require("dataset.n_ranks", d.n_ranks is not None, f"protocol '{self.name}' needs the number of ranks: "
                                                              "set dataset.n_ranks")

    def last_round(self, experiment_cfg: Any) -> int | None:
        """The last round of a curve, when the config fixes it (published values and claims
        cannot name a round beyond it); None when the data decide."""
        return None

    def spec(self, exp: Any, cell: Any, trial: int, data_path: str | None,
             data_seed: np.random.SeedSequence, algo_seed: np.random.SeedSequence) -> Spec:
        """The spec of trial ``trial`` of ``cell`` (``data_seed``: the trial's data stream,
        the same for every cell; ``algo_seed``: the cell's own)."""
        raise NotImplementedError

    def run(self, spec: Spec) -> list[Row]:
        """One trial: its rows (metric, round or None, value)."""
        raise NotImplementedError

    def __call__(self, spec: Spec) -> list[Row]:
        return self.run(spec)

    def size_text(self, exp: Any) -> str:
        """The run's size in the words of the protocol."""
        return f"{exp.n_trials} {self.unit}"

    def __repr__(self) -> str:
        return f"<protocol {self.name}>"
