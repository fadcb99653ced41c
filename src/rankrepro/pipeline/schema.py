"""Structured configs: the schema every composed experiment config is merged into.

OmegaConf merges the YAML of ``config/`` into these dataclasses in struct mode, so an
unknown key or a value of the wrong type fails at load, naming its full key.  Range checks
that a type cannot express live in :mod:`rankrepro.pipeline.validate` (experiment keys) and
in each estimator's ``_constraints`` (algorithm hyperparameters), checked when the config
loads, before any compute.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from omegaconf import MISSING, OmegaConf


@dataclass
class ScaleCfg:
    """Caps applied to every experiment (``paper`` caps nothing)."""

    name: str = MISSING
    description: str = ""
    max_trials: Optional[int] = None
    max_train: Optional[int] = None
    max_test: Optional[int] = None
    curve_points: Optional[int] = None
    #: LETOR protocol: stop each ranker after this many steps (iterations, rounds, values of C)
    max_steps: Optional[int] = None
    #: coactive protocol: simulate at most this many users per group
    max_users: Optional[int] = None


@dataclass
class DatasetCfg:
    name: str = MISSING
    builder: str = MISSING
    description: str = ""
    #: the number of ordinal ranks (labels 1..n_ranks); only protocols that read it need it
    n_ranks: Optional[int] = None
    #: registry name of the downloaded data set this builds on (None: generated data)
    source: Optional[str] = None
    #: the paper's own data (False: a substitute, named in every table and figure)
    original: bool = True
    substitute_for: Optional[str] = None
    params: Dict[str, Any] = field(default_factory=dict)


@dataclass
class AlgorithmCfg:
    #: a learner of the protocol's registry, or a class from anywhere as ``package.module.Class``
    #: (what a config's ``_target_`` becomes: :class:`AlgorithmInCfg`)
    estimator: str = MISSING
    label: str = MISSING
    color: Optional[str] = None
    marker: Optional[str] = None
    linestyle: str = "-"
    note: str = ""
    #: fixed hyperparameters
    params: Dict[str, Any] = field(default_factory=dict)
    #: swept hyperparameters: one sweep cell per combination
    grid: Dict[str, List[Any]] = field(default_factory=dict)
    #: the learner's result does not depend on its seed given the data (RankSVM, RankBoost,
    #: LambdaMART): a protocol that replicates over seeds (letor_seeds) runs it once
    deterministic: bool = False


#: the kinds of diagnosis a disagreement with the paper can carry
DIAGNOSIS_KINDS = ("paper", "substitute data", "open protocol choice", "claim reading", "implementation")


@dataclass
class DiagnosisCfg:
    """Why a reproduced value or claim disagrees with the paper (shown beside the verdict).

    ``kind``: *paper* (the published value cannot come from the stated protocol: an exact
    implementation and an independent check agree and differ from it), *substitute data*
    (only where the artefact runs on a substitute), *open protocol choice* (``choice`` names
    the experiment's sensitivity choice whose measured effect is the evidence), *claim reading*
    (the claim's sentence admits a narrower reading under which it holds: say which, and where
    it holds), or *implementation* (a bug of ours that was fixed: say what changed)."""

    kind: str = MISSING
    text: str = MISSING
    #: for "open protocol choice": the name of a choice in ``experiment.sensitivity``
    choice: Optional[str] = None
    #: where the regenerated measurement behind it lives (a test, a benchmark, a sensitivity section)
    evidence: str = ""


@dataclass
class SensitivityCfg:
    """A protocol choice the paper leaves open, swept as extra cells on common random numbers.

    ``values`` maps each value's label to the config keys it sets (dotted keys, e.g.
    ``experiment.n_train`` or ``algorithms.oap_vp.params.output``), applied to the main
    config; the value named ``main`` must leave the main config unchanged."""

    choice: str = MISSING
    #: what the paper leaves open
    text: str = ""
    #: the label of the value the main run uses
    main: str = MISSING
    #: why the main value is the reading most faithful to the paper's text
    why: str = MISSING
    values: Dict[str, Dict[str, Any]] = MISSING


@dataclass
class MultiverseCfg:
    """Which open choices are crossed into the multiverse of readings (pipeline/multiverse.py):
    every reading of the product of ``cross`` runs, added as the sensitivity choice 'multiverse'."""

    cross: List[str] = MISSING
    #: which readings of the product run: ``full`` (all of them)
    design: str = "full"
    #: why these choices are crossed (and, for a design other than the full product, its cost)
    why: str = ""


@dataclass
class PublishedCfg:
    """A number printed in the paper: the target a reproduced cell is compared with."""

    select: Dict[str, Any] = MISSING
    metric: str = MISSING
    mean: float = MISSING
    #: the paper's 95% half-width, when it gives one: a Student-t interval over ``n`` trials,
    #: or, with n = 1 (an exact value), the bound of its printed precision
    ci: Optional[float] = None
    #: the number of trials behind ``ci`` (None: the experiment's ``n_trials``)
    n: Optional[int] = None
    #: the unit of the printed last digit (0.01 for 0.50), where the value as parsed lost it
    #: (None: read from the value, 0.193 -> 0.001); the printed value stands for any value
    #: within half of it, and every comparison allows for that
    precision: Optional[float] = None
    #: the unit of the printed last digit of ``ci`` (None: the mean's; a printed +-0.00 is then
    #: a half-width in [0, 0.005))
    ci_precision: Optional[float] = None
    #: the printed value is exact, not rounded (a count, such as Elsas et al.'s Q = 3)
    exact: bool = False
    #: for curve metrics: the round the value refers to (None: the last round)
    round: Optional[int] = None
    source: str = ""
    #: significance marks printed beside the value in the paper (e.g. "*")
    marks: str = ""
    #: why the reproduction differs from this value (shown when it does)
    diagnosis: Optional[DiagnosisCfg] = None


#: the project's default equivalence margin: a share of each published value
DEFAULT_EQUIVALENCE = {
    "relative": 0.1,
    "why": "the project's default, used where an artefact declares none: within a tenth of the published "
           "value, a relative margin fixed before any result was seen",
}


@dataclass
class EquivalenceCfg:
    """The margin within which a reproduced cell counts as *equivalent* to its published value
    (two one-sided tests), declared per artefact before its results with the reason: either
    ``margin`` (absolute, in the metric's unit) or ``relative`` (a share of each published
    value), not both, and ``why``; neither: the project's default
    (:data:`DEFAULT_EQUIVALENCE`)."""

    margin: Optional[float] = None
    relative: Optional[float] = None
    #: why this margin: a substantive difference in the paper's own unit
    why: str = ""


@dataclass
class ClaimCfg:
    id: str = MISSING
    text: str = MISSING
    #: the claim's kind: a name in :data:`rankrepro.claims.KINDS`, whose module says what it
    #: checks and which of the keys below it reads (a key a kind does not read must keep its
    #: default)
    kind: str = MISSING
    metric: str = MISSING
    lhs: Dict[str, Any] = field(default_factory=dict)
    rhs: Dict[str, Any] = field(default_factory=dict)
    match: List[str] = field(default_factory=list)
    #: for curve metrics: [first, last] round checked (None: only the last round)
    rounds: Optional[List[Optional[int]]] = None
    #: require the 95% intervals to be separated, not only the means ordered
    significant: bool = False
    stat: str = "mean"
    over: Optional[str] = None
    direction: str = "increasing"
    expect: Optional[float] = None
    #: less: lhs * factor < rhs (e.g. "at least 45 times faster")
    factor: float = 1.0
    #: less, a claim about time: the paper timed another solver than this project's, so the claim
    #: is decided on that solver's own timing, an evidence record ``record`` (the shape
    #: scripts/svmlight_table5.py writes) and its ``runs`` (indices); this project's cells are
    #: compared too and reported beside it, not deciding (claims/less.py, docs/configs.md)
    timed_solver: Optional[Dict[str, Any]] = None
    #: why the claim does not hold in the reproduction (shown when it does not)
    diagnosis: Optional[DiagnosisCfg] = None
    #: why the claim is trivial (exact arithmetic, a description of the paper's own interval
    #: widths, ...): counted apart from the substantive claims in the status and the scorecard;
    #: empty for a substantive claim
    trivial: str = ""


@dataclass
class SignificanceCfg:
    """Mark a test metric when a cell beats the ``against`` cell: one-tailed paired t-test
    over the test queries (per-query values ``query_<m>`` of ``test_<m>``)."""

    against: Dict[str, Any] = MISSING
    mark: str = MISSING
    level: float = 0.05


@dataclass
class PanelCfg:
    title: str = ""
    #: the panel's metric and y label (default: the figure's)
    metric: Optional[str] = None
    ylabel: Optional[str] = None
    #: selectors of the cells drawn (empty: every cell)
    select: List[Dict[str, Any]] = field(default_factory=list)


@dataclass
class FigureCfg:
    #: the file's name under figures/<paper>/, by the paper's numbering (e.g. fig3b); default: the artefact's
    file: Optional[str] = None
    metric: str = "online_rank_loss"
    xlabel: str = "rounds T"
    ylabel: str = "average rank loss (1/T) sum |yhat - y|"
    xscale: str = "log"
    ylim: Optional[List[float]] = None
    panels: List[PanelCfg] = field(default_factory=list)


@dataclass
class ExperimentCfg:
    paper: str = MISSING
    artefact: str = MISSING
    title: str = MISSING
    #: table or figure
    kind: str = MISSING
    description: str = ""
    protocol: str = "online"
    features: str = "identity"
    n_trials: int = MISSING
    #: training rounds (online and coactive protocols); a protocol that does not read it
    #: (its ``uses``, rankrepro.protocols) leaves it unset
    n_train: int = 0
    n_test: int = 0
    seed: int = MISSING
    curve_points: int = 60
    metrics: List[str] = MISSING
    #: deviations from the paper's protocol, printed with the artefact
    notes: List[str] = field(default_factory=list)
    published: List[PublishedCfg] = field(default_factory=list)
    #: the margin of the published values' equivalence tests, declared before the results
    equivalence: EquivalenceCfg = field(default_factory=lambda: EquivalenceCfg())
    #: how a published value is compared: ``mean`` (the paper's number as a mean over its
    #: trials: the interval of our mean) or ``draw`` (the paper's number is ONE run of the
    #: protocol, e.g. one five-fold LETOR run: a prediction interval that includes the
    #: run-to-run spread, stats.draw_difference_interval)
    compare: str = "mean"
    #: the unit a ``less`` claim on a test metric is tested over: ``trials`` (the per-trial
    #: values) or ``queries`` (LETOR: paired over the test queries of the five folds, each
    #: query's value averaged over the seeds; the by-fold test is kept beside)
    claims_unit: str = "trials"
    #: the cell parameters that index the paper's table columns besides the metric (e.g.
    #: [n_items]): Kendall's tau compares the orderings within each column
    table_columns: List[str] = field(default_factory=list)
    #: the family of claims this experiment's claims are adjusted with (Holm): the experiments
    #: naming the same family (the five papers' configs name their paper); None: this
    #: experiment alone, so that an experiment of one's own never moves a paper's verdicts
    claim_family: Optional[str] = None
    claims: List[ClaimCfg] = field(default_factory=list)
    significance: List[SignificanceCfg] = field(default_factory=list)
    #: protocol choices the paper leaves open, each run as extra cells
    sensitivity: List[SensitivityCfg] = field(default_factory=list)
    #: the open choices crossed into every reading of their product (pipeline/multiverse.py)
    multiverse: Optional[MultiverseCfg] = None
    figure: Optional[FigureCfg] = None


@dataclass
class RootCfg:
    experiment: ExperimentCfg = MISSING
    dataset: DatasetCfg = MISSING
    scale: ScaleCfg = MISSING
    algorithms: Dict[str, AlgorithmCfg] = field(default_factory=dict)


@dataclass
class AlgorithmInCfg(AlgorithmCfg):
    """An algorithm entry as written in a config: ``estimator: <registry name>`` or, Hydra's
    convention, ``_target_: package.module.ClassName`` (a learner from anywhere importable).
    Composed configs are read with this; :func:`targets_as_estimators` turns ``_target_``
    into ``estimator`` before the config is merged into :class:`RootCfg` (so the resolved
    config of an experiment without ``_target_`` is what it always was)."""

    estimator: str = ""
    _target_: Optional[str] = None


@dataclass
class RootInCfg(RootCfg):
    algorithms: Dict[str, AlgorithmInCfg] = field(default_factory=dict)


def targets_as_estimators(container: dict) -> dict:
    """A composed config (plain data) with every algorithm's ``_target_`` moved to its
    ``estimator``.  Raises ``ValueError("algorithms.<key>._target_", message)`` when an entry
    gives both or neither."""
    for key, a in (container.get("algorithms") or {}).items():
        if not isinstance(a, dict):
            continue
        target = a.pop("_target_", None)
        est = a.get("estimator") or ""
        if target is not None:
            if est:
                raise ValueError(f"algorithms.{key}._target_",
                                 f"give either estimator ('{est}') or _target_ ('{target}'), not both")
            a["estimator"] = str(target)
        elif not est:
            raise ValueError(f"algorithms.{key}.estimator",
                             "give the learner: estimator: <name> or _target_: package.module.ClassName")
    return container


SCHEMA = OmegaConf.structured(RootCfg)  # what a resolved config file or a sensitivity variant is merged into
