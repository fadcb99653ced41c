"""Config values that restate a default stated elsewhere.

Every default lives in one place: the schema (:mod:`rankrepro.pipeline.schema`) for the keys
of ``experiment``, ``dataset``, ``scale`` and an algorithm entry; an estimator's
``__init__`` for its hyperparameters; a data-set builder's signature
(:data:`rankrepro.data.builders.BUILDERS`) for ``dataset.params``.  A config file states
only what differs from what it is composed on (the schema, the algorithm and data-set files
its defaults list names, a shared ``_``-prefixed experiment file).  :func:`find` lists the
values that break this rule, read from the YAML files as written:

* ``schema``: a key set to the schema's own default (removing it leaves the resolved config
  unchanged);
* ``layer``: a key set to the value a file below it already gives (an algorithm or data-set
  file, or a shared ``_`` file; removing it leaves the resolved config unchanged);
* ``code``: a hyperparameter (``params``) set to the default of the estimator or builder it
  feeds.  ``params`` is an open mapping, so such a key is part of the resolved config and of
  the cell fingerprint: removing it changes both (and reruns the cell), even though the
  computation stays the same.

``python -m rankrepro.pipeline.redundancy [config_dir]`` prints them.
"""

from __future__ import annotations

import dataclasses
import inspect
import sys
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from . import schema

_ABSENT = object()


@dataclass(frozen=True)
class Finding:
    file: str  # relative to the config folder, e.g. "experiment/elsas2008/_table4_common.yaml"
    key: str  # dotted key as composed, e.g. "algorithms.rankboost.params.n_rounds"
    value: Any
    kind: str  # "schema", "layer" or "code"
    source: str  # where the same value is already stated

    @property
    def removable(self) -> bool:
        """Whether deleting the key leaves the resolved config unchanged."""
        return self.kind != "code"

    def __str__(self) -> str:
        return f"{self.file}: {self.key} = {self.value!r} [{self.kind}: {self.source}]"


# -------------------------------------------------------------------------------------
# equality as the resolved config sees it
# -------------------------------------------------------------------------------------
def _same(a: Any, b: Any, strict: bool) -> bool:
    """``strict``: the same YAML (1 and 1.0 differ, as in an open ``params`` mapping);
    otherwise equal as a typed schema field or an estimator would take them."""
    if isinstance(a, tuple):
        a = list(a)
    if isinstance(b, tuple):
        b = list(b)
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y, strict) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k], strict) for k in a)
    if strict and type(a) is not type(b):
        return False
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return float(a) == float(b)
    return type(a) is type(b) and a == b


# -------------------------------------------------------------------------------------
# the schema: which dataclass field a key feeds, and its default
# -------------------------------------------------------------------------------------
def _unwrap_optional(tp: Any) -> Any:
    if typing.get_origin(tp) is typing.Union:
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        return args[0] if len(args) == 1 else tp
    return tp


def _field_default(f: dataclasses.Field) -> Any:
    if f.default is not dataclasses.MISSING:
        return _ABSENT if f.default == "???" else f.default
    if f.default_factory is not dataclasses.MISSING:  # type: ignore[misc]
        return f.default_factory()  # type: ignore[misc]
    return _ABSENT


def _fields(cls: type) -> dict[str, tuple[Any, Any]]:
    """name -> (type, default) of a schema dataclass."""
    hints = typing.get_type_hints(cls, vars(schema))
    return {f.name: (hints[f.name], _field_default(f)) for f in dataclasses.fields(cls)}


# -------------------------------------------------------------------------------------
# code defaults: estimators and data-set builders
# -------------------------------------------------------------------------------------
def _estimator_classes() -> dict[str, type]:
    from ..algorithms import ONLINE
    from ..algorithms.coactive import COACTIVE
    from ..algorithms.gp import GP
    from ..algorithms.rankers import LISTS, RANKERS

    out: dict[str, type] = {}
    for fam in (ONLINE, RANKERS, LISTS, COACTIVE, GP):
        out.update(fam)
    return out


def _signature_defaults(fn: Any) -> dict[str, Any]:
    return {k: p.default for k, p in inspect.signature(fn).parameters.items()
            if p.default is not inspect.Parameter.empty}


def estimator_defaults(estimator: str) -> dict[str, Any]:
    cls = _estimator_classes().get(estimator)
    return _signature_defaults(cls.__init__) if cls is not None else {}


def builder_defaults(builder: str) -> dict[str, Any]:
    from ..data.builders import BUILDERS

    fn = BUILDERS.get(builder)
    return _signature_defaults(fn) if fn is not None else {}


# -------------------------------------------------------------------------------------
# the layers a file is composed on
# -------------------------------------------------------------------------------------
class _Tree:
    """The YAML files of a config folder, and what each experiment file is composed on."""

    def __init__(self, root: Path):
        self.root = root
        self._cache: dict[str, dict] = {}

    def load(self, rel: str) -> dict:
        if rel not in self._cache:
            p = self.root / rel
            self._cache[rel] = (yaml.safe_load(p.read_text()) or {}) if p.is_file() else {}
        return self._cache[rel]

    def layers(self, rel: str) -> tuple[list[str], dict[str, str], str | None]:
        """(included experiment files, in composition order; algorithm key -> algorithm file;
        data-set file) for an experiment file, following its defaults list and those of the
        shared files it includes."""
        includes: list[str] = []
        algs: dict[str, str] = {}
        dataset: str | None = None
        for entry in self.load(rel).get("defaults") or []:
            if isinstance(entry, str) and entry.startswith("/experiment/"):
                inc = "experiment/" + entry[len("/experiment/"):] + ".yaml"
                sub_inc, sub_algs, sub_ds = self.layers(inc)
                includes += [*sub_inc, inc]
                algs.update(sub_algs)
                dataset = sub_ds or dataset
            elif isinstance(entry, dict):
                for k, v in entry.items():
                    k = str(k).strip()
                    if k.startswith("/algorithm@algorithms."):
                        algs[k[len("/algorithm@algorithms."):]] = f"algorithm/{v}.yaml"
                    elif k.replace("override ", "").strip() in ("/dataset", "dataset"):
                        dataset = f"dataset/{v}.yaml"
        return includes, algs, dataset


def _get(d: Any, path: list[str]) -> Any:
    for p in path:
        if not isinstance(d, dict) or p not in d:
            return _ABSENT
        d = d[p]
    return d


def _lower(tree: _Tree, rel: str, path: list[str]) -> tuple[Any, str]:
    """The value of ``path`` (a composed key) from the files ``rel`` is composed on, and
    the file giving it (the last one wins, as in Hydra)."""
    group = rel.split("/", 1)[0]
    if group != "experiment":
        return _ABSENT, ""
    includes, algs, dataset = tree.layers(rel)
    found, where = _ABSENT, ""
    # below the experiment files: the algorithm and data-set files
    if path[0] == "algorithms" and len(path) > 2 and path[1] in algs:
        found, where = _get(tree.load(algs[path[1]]), path[2:]), algs[path[1]]
    elif path[0] == "dataset" and len(path) > 1:
        ds = dataset or "dataset/" + _config_default(tree, "dataset") + ".yaml"
        found, where = _get(tree.load(ds), path[1:]), ds
    for inc in includes:
        v = _get(tree.load(inc), path)
        if v is not _ABSENT:
            found, where = v, inc
    return found, where


def _config_default(tree: _Tree, group: str) -> str:
    for entry in tree.load("config.yaml").get("defaults") or []:
        if isinstance(entry, dict) and group in entry:
            return str(entry[group])
    return ""


# -------------------------------------------------------------------------------------
# the walk
# -------------------------------------------------------------------------------------
def _walk_schema(tree: _Tree, rel: str, node: Any, cls: type, path: list[str], owner: dict,
                 out: list[Finding]) -> None:
    """Check every key of ``node`` (a mapping fed into dataclass ``cls`` at ``path``)."""
    fields = _fields(cls)
    for k, v in node.items():
        if k not in fields:
            continue  # an unknown key is the catalog's error, not ours
        tp, default = fields[k]
        sub = [*path, str(k)]
        key = ".".join(sub)
        lower, where = _lower(tree, rel, sub) if owner.get("composed", True) else (_ABSENT, "")
        base = _unwrap_optional(tp)
        if k == "params" and cls is schema.AlgorithmCfg:
            _walk_params(tree, rel, v or {}, sub, owner, "algorithm", out)
            continue
        if k == "params" and cls is schema.DatasetCfg:
            _walk_params(tree, rel, v or {}, sub, owner, "dataset", out)
            continue
        if dataclasses.is_dataclass(base) and isinstance(v, dict):
            _walk_schema(tree, rel, v, base, sub, owner, out)
            continue
        if typing.get_origin(base) is dict and dataclasses.is_dataclass(typing.get_args(base)[1]) \
                and isinstance(v, dict):  # algorithms: name -> AlgorithmCfg
            for name, entry in v.items():
                if isinstance(entry, dict):
                    _walk_schema(tree, rel, entry, typing.get_args(base)[1], [*sub, str(name)], owner, out)
            continue
        item = typing.get_args(base)[0] if typing.get_origin(base) is list and typing.get_args(base) else None
        if lower is not _ABSENT:  # a list or a leaf: the whole value replaces the lower one
            if _same(v, lower, strict=False):
                out.append(Finding(rel, key, v, "layer", where))
        elif default is not _ABSENT and _same(v, default, strict=False):
            out.append(Finding(rel, key, v, "schema", f"{cls.__name__}.{k} default"))
        if item is not None and dataclasses.is_dataclass(item) and isinstance(v, list):
            for i, el in enumerate(v):
                if isinstance(el, dict):
                    # a list is replaced whole: its elements are composed on the schema only
                    _walk_schema(tree, rel, el, item, [*path, f"{k}[{i}]"], {**owner, "composed": False}, out)


def _walk_params(tree: _Tree, rel: str, params: dict, path: list[str], owner: dict, what: str,
                 out: list[Finding]) -> None:
    if what == "algorithm":
        est = owner.get("estimator")
        if est is None:  # an experiment's algorithm entry: the estimator comes from its file
            est = _get(tree.load(rel), [*path[:-1], "estimator"])
            if est is _ABSENT:
                est, _ = _lower(tree, rel, [*path[:-1], "estimator"])
        code, src = estimator_defaults(str(est)), f"{est}.__init__"
    else:
        b = owner.get("builder")
        if b is None:
            b = _get(tree.load(rel), ["dataset", "builder"])
            if b is _ABSENT:
                b, _ = _lower(tree, rel, ["dataset", "builder"])
        code, src = builder_defaults(str(b)), f"builder {b}"
    for k, v in params.items():
        sub = [*path, str(k)]
        lower, where = _lower(tree, rel, sub)
        if lower is not _ABSENT:
            if _same(v, lower, strict=True):
                out.append(Finding(rel, ".".join(sub), v, "layer", where))
        elif k in code and _same(v, code[k], strict=False):
            out.append(Finding(rel, ".".join(sub), v, "code", f"{src} default"))


def find(config_dir: str | Path | None = None) -> list[Finding]:
    """Every value of the config folder that restates a default stated elsewhere."""
    from ..config_files import find_config_dir

    root = Path(config_dir) if config_dir else find_config_dir()
    tree = _Tree(root)
    out: list[Finding] = []
    for p in sorted(root.rglob("*.yaml")):
        rel = p.relative_to(root).as_posix()
        group = rel.split("/", 1)[0]
        node = tree.load(rel)
        if group == "algorithm":
            _walk_schema(tree, rel, node, schema.AlgorithmCfg, ["algorithms", p.stem], {"estimator": node.get("estimator")}, out)
        elif group == "dataset":
            _walk_schema(tree, rel, node, schema.DatasetCfg, ["dataset"], {"builder": node.get("builder")}, out)
        elif group == "scale":
            _walk_schema(tree, rel, node, schema.ScaleCfg, ["scale"], {}, out)
        elif group == "experiment":
            body = {k: v for k, v in node.items() if k != "defaults"}
            _walk_schema(tree, rel, body, schema.RootCfg, [], {}, out)
    return out


# -------------------------------------------------------------------------------------
# the values stated on purpose although they equal a default
# -------------------------------------------------------------------------------------
#: why a value that restates a default stays: the paper prints it (readability: the config
#: reads as the paper's protocol), or an experiment's notes print it, or -- for none of these
#: -- it is an estimator's or builder's parameter (``code``) whose deletion would change the
#: resolved config and the cell fingerprint and so rerun committed cells; such an entry says
#: so and goes when its artefact is next re-run.  ``tests/test_config_redundancy.py`` fails on
#: any restatement not listed here and on any entry here that no longer restates anything.
_RERUN = ("not in the paper or the notes; kept only because deleting it changes the resolved config and the "
          "cell fingerprints of committed results; drop it when the artefact is next re-run")


def _keep() -> dict[str, str]:
    k: dict[str, str] = {}

    def add(reason: str, *where: str) -> None:
        for w in where:
            k[w] = reason

    t4, t5, f1 = ("experiment/elsas2008/_table4_common.yaml", "experiment/elsas2008/table5.yaml",
                  "experiment/elsas2008/fig1.yaml")
    add("a monotone claim names its direction: it is what the claim asserts",
        "experiment/harrington2003/table1.yaml:experiment.claims[2].direction")
    add("a monotone claim names its statistic (the mean, not the interval width) beside its direction",
        "experiment/shivaswamy2012/fig4.yaml:experiment.claims[1].stat")
    add("Yu et al. Sec. 3 define GPR/CGPR/GPOR/CGPOR by likelihood and by whether the users share the prior; "
        "each model file names both", "algorithm/cgpr.yaml:algorithms.cgpr.params.likelihood",
        "algorithm/gpr.yaml:algorithms.gpr.params.likelihood", "algorithm/gpr.yaml:algorithms.gpr.params.collaborative",
        "algorithm/gpor.yaml:algorithms.gpor.params.collaborative")
    add("Yu et al. Sec. 5: sigma is initialised to 0.1 for the GPR models (1 for GPOR)",
        "algorithm/cgpr.yaml:algorithms.cgpr.params.sigma0", "algorithm/gpr.yaml:algorithms.gpr.params.sigma0")
    add("Elsas et al. Table 4: 'A' is weighted averaging of the committee (committee_b.yaml names 'B')",
        "algorithm/committee_a.yaml:algorithms.committee_a.params.output")
    add("Harrington Sec. 3.1 writes the output H(x) as the (vote-weighted) mean rank; the main value of the "
        "sensitivity choice vote_output", "algorithm/oap_bagg.yaml:algorithms.oap_bagg.params.output",
        "algorithm/oap_vp.yaml:algorithms.oap_vp.params.output",
        "algorithm/voted_prank.yaml:algorithms.voted_prank.params.output")
    add("Harrington Sec. 4.2: query-document pairs judged by at least two judges, their scores as ranks",
        "dataset/cystic_fibrosis.yaml:dataset.params.min_judged", "dataset/cystic_fibrosis.yaml:dataset.params.instance_values",
        "dataset/ohsumed_judged.yaml:dataset.params.min_judged", "dataset/ohsumed_judged.yaml:dataset.params.instance_values")
    add("Yu et al. Sec. 5: movies rated at least 50 times, users with at least 20 ratings, the 100 users with most "
        "ratings as the tasks", "dataset/eachmovie_collab.yaml:dataset.params.min_item",
        "dataset/eachmovie_collab.yaml:dataset.params.min_user", "dataset/eachmovie_collab.yaml:dataset.params.n_tasks")
    add("Harrington Sec. 4.2: people who rated over 300 movies, each round among the target's first 300",
        "dataset/eachmovie_people.yaml:dataset.params.min_ratings", "dataset/eachmovie_people.yaml:dataset.params.strict",
        "dataset/eachmovie_people.yaml:dataset.params.first")
    add("Crammer & Singer Sec. 6: the partition of viewers with at least 100 ratings (the other file names 200)",
        "dataset/eachmovie_viewers100.yaml:dataset.params.min_ratings")
    add("Herbrich et al. (2000), used by Harrington Sec. 4.1 and Crammer & Singer Sec. 6: the generator's noise sd "
        "0.125, scale 10 and thresholds", "dataset/synthetic_hgo.yaml:dataset.params.noise_sd",
        "dataset/synthetic_hgo.yaml:dataset.params.scale", "dataset/synthetic_hgo.yaml:dataset.params.thresholds")
    add("the paper chooses the embedding's dimension and regularisation by cross-validation without the candidates; "
        "the grid searched is printed in the notes of shivaswamy2012/fig4",
        "dataset/movielens_coactive.yaml:dataset.params.dims", "dataset/movielens_coactive.yaml:dataset.params.regs")
    add(_RERUN, "dataset/movielens_coactive.yaml:dataset.params.sweeps")
    add("Elsas et al. Sec. 5: an alpha-bound of 0.85 for every perceptron",
        *(f"{t4}:algorithms.{a}.params.alpha" for a in ("com_a", "com_b", "pocket", "average")),
        *(f"{f1}:algorithms.{a}.params.alpha" for a in ("average", "pocket", "com20")),
        f"{t5}:algorithms.committee.params.alpha")
    add("Elsas et al. Table 4: Com 30, committee size 30",
        f"{t4}:algorithms.com_a.params.committee", f"{t4}:algorithms.com_b.params.committee")
    add("Elsas et al. Table 5: 50 iterations", f"{t5}:algorithms.committee.params.n_iter")
    add("the Table 4 notes print it ('RankBoost up to 300 rounds'; the paper gives no range)",
        f"{t4}:algorithms.rankboost.params.n_rounds")
    add(_RERUN, f"{t4}:algorithms.ranksvm.params.max_pass", f"{t4}:algorithms.ranksvm.params.eps",
        f"{t5}:algorithms.ranksvm.params.max_pass", f"{t5}:algorithms.ranksvm.params.eps",
        f"{t5}:algorithms.ranksvm_svmlight.params.max_pass", f"{t5}:algorithms.ranksvm_svmlight.params.eps",
        f"{t4}:algorithms.lambdamart.params.n_rounds", f"{t4}:algorithms.lambdamart.params.learning_rate",
        f"{t4}:algorithms.lambdamart.params.num_leaves")
    add("Harrington Sec. 4.1: N = 100 perceptrons per ensemble",
        *(f"experiment/harrington2003/{f}.yaml:algorithms.{a}.params.N" for f in ("_table2_common", "fig2", "table1")
          for a in ("oap_vp", "oap_bpm", "oap_bagg")))
    add("Shivaswamy & Joachims: Figs. 2 and 4 use strict feedback, Figs. 3 and 5 noisy feedback",
        "experiment/shivaswamy2012/fig2.yaml:algorithms.perceptron.params.feedback",
        "experiment/shivaswamy2012/fig4.yaml:algorithms.perceptron.params.feedback")
    add("the arena composes each experiment on its paper's and clears the paper's lists (Hydra replaces a list "
        "whole): its experiments replicate nothing, so they carry no published values, claims or sweeps",
        *(f"experiment/arena/_online.yaml:experiment.{k}" for k in ("published", "claims", "sensitivity",
                                                                      "multiverse")),
        *(f"experiment/arena/_letor.yaml:experiment.{k}" for k in ("published", "claims", "sensitivity",
                                                                     "significance", "multiverse")))
    add("the arena compares the LETOR rankers fold by fold (protocol letor) while Elsas et al.'s experiments, "
        "which it composes on, replicate over seeds (letor_seeds, compared as one draw, claims over queries, "
        "deterministic learners once): it sets the by-fold protocol's values back",
        *(f"experiment/arena/_letor.yaml:experiment.{k}" for k in ("compare", "claims_unit")),
        *(f"experiment/arena/_letor.yaml:algorithms.{a}.deterministic" for a in ("ranksvm", "rankboost", "lambdamart")))
    return k


#: ``file:key`` -> why the value is stated although it equals a default
KEEP: dict[str, str] = _keep()


def unjustified(found: list[Finding]) -> list[Finding]:
    """The findings no entry of :data:`KEEP` justifies."""
    return [f for f in found if f"{f.file}:{f.key}" not in KEEP]


def main(argv: list[str]) -> int:
    found = find(argv[0] if argv else None)
    for kind, title in (("schema", "restates a schema default (removable: the resolved config stays the same)"),
                        ("layer", "restates a file it is composed on (removable: the resolved config stays the same)"),
                        ("code", "restates an estimator's or builder's default (part of the resolved config and "
                                 "the cell fingerprint)")):
        rows = [f for f in found if f.kind == kind]
        print(f"{len(rows)} value(s) {title}")
        for f in rows:
            why = KEEP.get(f"{f.file}:{f.key}")
            print("  " + str(f) + (f"\n      kept: {why}" if why else "\n      NOT JUSTIFIED: remove it, or add it to KEEP with a reason"))
    return 1 if unjustified(found) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
