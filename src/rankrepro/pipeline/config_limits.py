"""What an experiment config may hold beyond its types (issue 41, items 5 and 9): the resolvers
it may call, the text it may carry, the sizes it may ask for, and the settings that would be
accepted but mean nothing (a published target given twice, a sensitivity value that is the
main one again).  Each check raises :class:`.ConfigError` naming the key.

Not imported by any learner, protocol or data builder: editing it moves no cell's fingerprint."""

from __future__ import annotations

import re
from typing import Any, Iterator

from .config_errors import ConfigError, require

#: the OmegaConf/Hydra resolvers an experiment config may call.  A plain interpolation of
#: another key (``${experiment.n_train}``) is always allowed.  Everything else is refused:
#: ``oc.env`` copies the environment (secrets) into the records and the report,
#: ``now`` seeds from the clock (a result nobody can repeat), ``oc.decode`` parses text into
#: values the schema never saw, ``hydra:`` writes the caller's paths.
ALLOWED_RESOLVERS = frozenset({"oc.select"})

#: the most values (cells) one experiment's grids may expand to: every cell is a job, a file
#: and a line of the report; the project's largest experiment has 48.  Loading is linear in
#: the number of values up to this bound (docs/config.md).
MAX_CELLS = 10_000

#: the largest integer a learner's hyperparameter may take (an ensemble's size, a number of
#: iterations, samples or features): each unit is at least one vector of state or one pass
#: over the data, and 10**6 of them already exceed the memory and the hours of this project's
#: runs; the papers use at most a few hundred (OAP's N = 100).
MAX_HYPERPARAMETER_INT = 1_000_000

#: the most examples, trials or curve points an experiment may ask for, with the reason
#: (the largest data set the project reads has ~2 * 10**6 ratings; a trial is a job's loop)
MAX_SIZES = {
    "experiment.n_trials": (10_000, "trials are run one after another within a cell's job"),
    "experiment.n_train": (10_000_000, "more training rounds than any data set of the project holds"),
    "experiment.n_test": (10_000_000, "more test examples than any data set of the project holds"),
    "experiment.curve_points": (100_000, "points of a learning curve kept per trial and cell"),
}

#: characters no title, label or note may hold: NUL and the other C0 controls (tab, line feed
#: and carriage return excepted) cut strings in C libraries, terminals and file formats
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
#: a resolver call inside an interpolation: ``${name:`` (``\${`` is an escaped literal)
_RESOLVER = re.compile(r"(?<!\\)\$\{\s*([^${}:\s]+)\s*:")
_INTERPOLATION = re.compile(r"(?<!\\)\$\{")


def walk(node: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    """(dotted key, value) of every leaf and mapping key of a plain container; iterative, so a
    deeply nested value cannot exhaust the interpreter's stack."""
    stack = [(path, node)]
    while stack:
        p, n = stack.pop()
        if isinstance(n, dict):
            for k, v in n.items():
                sub = f"{p}.{k}" if p else str(k)
                yield sub, k
                stack.append((sub, v))
        elif isinstance(n, (list, tuple)):
            for i, v in enumerate(n):
                stack.append((f"{p}[{i}]", v))
        else:
            yield p, n


def check_resolvers(name: str, container: Any) -> None:
    """Every interpolation in an unresolved config calls an allowed resolver (or none)."""
    for key, v in walk(container):
        if not isinstance(v, str) or "${" not in v:
            continue
        for m in _RESOLVER.finditer(v):
            resolver = m.group(1)
            require(name, key, resolver in ALLOWED_RESOLVERS,
                    f"the resolver '{resolver}' is not allowed in an experiment config (allowed: "
                    f"{', '.join(sorted(ALLOWED_RESOLVERS))} and plain ${{key}} interpolations): "
                    + _WHY.get(resolver, "its value would come from outside the config files"))


_WHY = {
    "oc.env": "it copies the environment (a secret, a user's path) into the records and the report",
    "oc.decode": "it turns text into values the schema never checks",
    "now": "a value from the clock makes a result nobody can repeat",
    "hydra": "it writes the caller's paths and options into the results",
}


def check_text(name: str, container: Any) -> None:
    """No key or string value of the resolved config holds a control character, and none
    still holds an interpolation (an escaped ``\\${...}`` becomes one when a job reads the
    resolved file back)."""
    for key, v in walk(container):
        if not isinstance(v, str):
            continue
        m = _CONTROL.search(v)
        require(name, key, m is None,
                f"holds the control character {m.group()!r}" if m else "")
        require(name, key, _INTERPOLATION.search(v) is None,
                f"holds the text '${{' after interpolation ({v[:60]!r}): the jobs would read it as an interpolation "
                "of the resolved file; remove it")


def check_str_fields(name: str, cfg: Any) -> None:
    """A mapping or a list where the schema wants text (a notes item written as
    ``{_target_: os.system}``: OmegaConf keeps it inside a typed list of strings, and it would be
    printed as its Python repr) is refused naming its key.  ``cfg``: the config after the
    schema merge."""
    from omegaconf import DictConfig, ListConfig

    stack: list[tuple[str, Any]] = [("", cfg)]
    while stack:
        p, node = stack.pop()
        if isinstance(node, DictConfig):
            items = [(f"{p}.{k}" if p else str(k), node._get_node(k)) for k in node.keys()]
        elif isinstance(node, ListConfig):
            items = [(f"{p}[{i}]", node._get_node(i)) for i in range(len(node))]
        else:
            continue
        wants_text = getattr(node._metadata, "element_type", None) is str
        for key, child in items:
            if wants_text and isinstance(child, (DictConfig, ListConfig)):
                what = "mapping" if isinstance(child, DictConfig) else "list"
                raise ConfigError(name, key, f"must be text, got a {what}")
            stack.append((key, child))


def check_override_depth(name: str, overrides: list[str], max_depth: int) -> None:
    """A command-line override nested deeper than the config files may be (brackets or braces
    counted, linear in its length) is refused naming its key, before Hydra's recursive parser
    runs out of stack."""
    for o in overrides:
        depth = deepest = commas = 0
        quote = None
        for ch in o:
            commas += ch == "," and quote is None
            if quote:
                quote = None if ch == quote else quote
            elif ch in "'\"":
                quote = ch
            elif ch in "[{(":
                depth += 1
                deepest = max(deepest, depth)
            elif ch in "]})":
                depth -= 1
        key = o.split("=", 1)[0].lstrip("+~") or o[:40]
        require(name, key, deepest <= max_depth,
                f"the override is nested {deepest:,} levels deep, more than a config may be ({max_depth})")
        require(name, key, commas < MAX_CELLS,
                f"the override lists {commas + 1:,} values, more than an experiment may have cells ({MAX_CELLS:,}): "
                "refused before Hydra parses it")


def check_sizes(name: str, cfg: Any) -> None:
    """The sizes an experiment asks for, within :data:`MAX_SIZES` (the reason given)."""
    for key, (bound, why) in MAX_SIZES.items():
        v = cfg.experiment[key.split(".", 1)[1]]
        require(name, key, v is None or v <= bound, f"{v:,} is more than {bound:,}: {why}")


def check_hyperparameter_int(name: str, key: str, value: Any) -> None:
    if isinstance(value, int) and not isinstance(value, bool):
        require(name, key, abs(value) <= MAX_HYPERPARAMETER_INT,
                f"{value:,} is more than {MAX_HYPERPARAMETER_INT:,}: no learner of the project is meaningful "
                "there (each unit is a vector of state or a pass over the data; the papers use a few hundred), "
                "and the run would exhaust the machine's memory or hours")


def check_published_twins(name: str, cfg: Any, cells: list) -> None:
    """Two published values for one target (the same cell, metric and round) with different
    means: the report could show only one of them."""
    from omegaconf import OmegaConf

    from .cells import equal_values, select

    seen: dict[tuple, int] = {}
    for i, p in enumerate(cfg.experiment.published):
        hit = select(cells, OmegaConf.to_container(p.select))
        if len(hit) != 1:
            continue  # reported by the selector's own check
        target = (hit[0].id, str(p.metric), p.get("round"))
        if target in seen:
            first = cfg.experiment.published[seen[target]]
            require(name, f"experiment.published[{i}].mean", equal_values(first.mean, p.mean),
                    f"published[{seen[target]}] gives the same target (cell {hit[0].id}, {p.metric}"
                    f"{'' if p.get('round') is None else ', round ' + str(p.get('round'))}) the mean {first.mean}, "
                    f"this one {p.mean}: one target has one published value")
            raise ConfigError(name, f"experiment.published[{i}]",
                              f"repeats published[{seen[target]}] (cell {hit[0].id}, {p.metric}): list a target once")
        seen[target] = i
