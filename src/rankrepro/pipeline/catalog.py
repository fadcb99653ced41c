"""The experiment catalog: each ``config/experiment/<paper>/<artefact>.yaml`` composed with Hydra
and checked (:func:`load_experiment`), the resolved config files the jobs read instead, and every
experiment of a scale at once (:func:`load_catalog`), kept between runs, no two writing one output."""

from __future__ import annotations

import copy
import hashlib
import os
import re
from pathlib import Path

from omegaconf import DictConfig, OmegaConf

from ..config_files import find_config_dir, list_experiments, list_scales
from .cells import Experiment, cell_fingerprint
from .config_errors import YAML_MAX_DEPTH, ConfigError, check_name, check_yaml_bounds, config_error, require
from . import diagnoses, multiverse
from .config_meaning import check_unresolved, strict_numbers
from .config_limits import check_override_depth, check_resolvers, check_str_fields, check_text
from .names import name_problem
from .schema import SCHEMA, RootCfg, RootInCfg, targets_as_estimators
from .validate import add_sensitivity, as_written, same_as_written, validate


def _compose(config_dir: Path, name: str, scale: str, overrides: list[str]) -> DictConfig:
    # Hydra is imported here only: a job reads the resolved config and never composes
    from hydra import compose, initialize_config_dir
    from hydra.core.config_store import ConfigStore
    from hydra.core.global_hydra import GlobalHydra

    # as written: an algorithm may give _target_ (moved to estimator before the real schema)
    ConfigStore.instance().store(name="rankrepro_schema", node=RootInCfg)
    GlobalHydra.instance().clear()
    try:
        with initialize_config_dir(config_dir=str(config_dir), version_base="1.3"):
            return compose(config_name="config",
                           overrides=[f"experiment={name}", f"scale={scale}", *overrides])
    finally:
        GlobalHydra.instance().clear()


def output_prefix(scale: str) -> str:
    """Where a scale's outputs go: paper scale in the repository's results/ and figures/
    (committed), any other scale under runs/<scale>/."""
    return "" if scale == "paper" else f"runs/{scale}/"


def resolved_path(name: str, scale: str) -> str:
    """The resolved config of an experiment, written when the workflow starts."""
    return f"{output_prefix(scale)}results/{name}.config.yaml"


def load_resolved(path: str | os.PathLike, name: str, scale: str,
                  sensitivity: bool | tuple[str, str] | frozenset = True) -> Experiment:
    """An experiment from its resolved config file (written by the workflow when it starts,
    :func:`write_resolved`): what every job reads instead of composing the configs again.
    ``sensitivity``: False skips building the variants (a job running a main cell), a
    (choice, value) pair builds that variant only (a job running one of its cells), a frozenset
    of pairs those variants (a job running several cells)."""
    try:
        cfg = OmegaConf.merge(SCHEMA, OmegaConf.load(path))
        OmegaConf.to_container(cfg, throw_on_missing=True)
    except Exception as e:
        raise config_error(name, e) from None
    return _rebuilt(name, scale, cfg, sensitivity)


def _rebuilt(name: str, scale: str, cfg: DictConfig, sensitivity: bool | tuple[str, str] | frozenset = True) -> Experiment:
    """An experiment from the resolved config of one checked in full (a file the workflow wrote, or a
    kept catalog): what a job needs is rebuilt and checked (cells, sizes, variants, names), the checks
    of the report's parts (published values, claims, figure options: ~0.3 s) are not repeated."""
    OmegaConf.set_struct(cfg, True)
    exp = validate(name, scale, cfg, checked=True)
    if sensitivity:
        add_sensitivity(exp, only=sensitivity if isinstance(sensitivity, (tuple, frozenset)) else None, checked=True)
    return exp


def write_resolved(exp: Experiment, path: str | os.PathLike, dry: bool = False) -> bool:
    """Write the resolved config unless the file already says the same (its time then stays,
    so nothing reruns).  Returns whether it wrote (``dry``: whether it would, writing nothing)."""
    from ..files import write_text

    p = Path(path)
    text = exp.to_yaml()
    if p.is_file() and p.read_text() == text:
        return False
    if dry:  # a dry run, --report, --lint (pipeline.invocation): nothing written
        return True
    write_text(p, text)  # atomic: a full disk leaves no partial file, and the error names the file
    return True


def load_experiment(name: str, scale: str = "paper", overrides: list[str] | tuple = (),
                    config_dir: str | os.PathLike | None = None) -> Experiment:
    """Compose, validate and expand one experiment.  Raises :class:`ConfigError`."""
    root = Path(config_dir).resolve() if config_dir else find_config_dir()
    if name not in list_experiments(root):
        raise ConfigError(name, "experiment", f"no file config/experiment/{name}.yaml "
                                              f"(known: {', '.join(list_experiments(root))})")
    if scale not in list_scales(root):
        raise ConfigError(name, "scale", f"unknown scale '{scale}' (known: {', '.join(list_scales(root))})")
    _check_experiment_name(name, root)
    check_name(name, "scale", "scale", scale)
    check_yaml_bounds(name, root)
    check_override_depth(name, list(overrides), YAML_MAX_DEPTH)
    overrides, added = _added_algorithms(name, list(overrides))
    check_resolvers(name, added)
    try:
        with strict_numbers():  # a number written as text is refused at its key, not converted
            composed = _compose(root, name, scale, overrides)
        unresolved = OmegaConf.to_container(composed, resolve=False)
        check_resolvers(name, unresolved)  # before any resolver runs
        check_unresolved(name, unresolved)
        OmegaConf.resolve(composed)
        plain = OmegaConf.to_container(composed)
    except ConfigError:
        raise
    except Exception as e:  # Hydra wraps the OmegaConf error that names the key
        raise config_error(name, e) from None
    # the diagnoses, from their own file (config/diagnoses/<paper>/<artefact>.yaml): an error
    # at one of them is reported at that file's key
    unmatched: list[ConfigError] = []
    located = diagnoses.merge(name, root, plain, unmatched)
    try:
        with strict_numbers():
            exp = _checked_dropping(name, scale, plain, added, overrides, root)
    except ConfigError as err:
        raise diagnoses.relocate(name, err, located) from None
    if unmatched:  # a diagnosis of a published value or claim the experiment does not have
        raise unmatched[0]
    return exp


def _checked_dropping(name: str, scale: str, plain: dict, added: dict[str, dict], overrides: list[str],
                      root: Path) -> Experiment:
    """:func:`_checked`; with a user's overrides that remove, sweep or change a learner, the published
    values, claims, tests and panels that select it are dropped (:mod:`.user_drops`), named in
    the experiment's ``override_note``, provided the experiment loads without the overrides."""
    from . import user_drops

    why = user_drops.touched(overrides)
    drops: list[tuple[str, int]] = []
    needs: dict[tuple[str, int], set[str]] = {}
    while True:
        try:
            exp = _checked(name, scale, user_drops.pruned(plain, drops, why), copy.deepcopy(added))
            break
        except ConfigError as err:
            at = user_drops.entry_of(plain, err.key) if why else None
            if at is None:
                raise
            entry = (at[0], user_drops.original_index(plain, drops, *at))
            need = user_drops.droppable(plain, entry, why)
            if not need or entry in drops:
                raise
            drops.append(entry)
            needs[entry] = need
    if drops:
        load_experiment(name, scale, config_dir=root)  # the committed config itself: checked strictly
        exp.override_note = user_drops.note(plain, drops, needs, why)
        exp.override_drops = tuple(drops)
    return exp


def _checked(name: str, scale: str, plain: dict, added: dict[str, dict]) -> Experiment:
    """The composed experiment (plain data, its diagnoses merged) checked and expanded."""
    check_text(name, plain)
    check_text(name, added)
    for key, entry in added.items():
        require(name, f"algorithms.{key}", key not in plain["algorithms"],
                f"+algorithms.{key}=...: the experiment already has an algorithm '{key}' (set its keys instead, "
                f"e.g. algorithms.{key}.params.<name>=<value>)")
        plain["algorithms"][key] = entry
    # an algorithm that names a class at ``estimator:`` (not ``_target_:``) is reported there
    as_estimator = {k for k, a in (plain.get("algorithms") or {}).items()
                    if isinstance(a, dict) and a.get("_target_") is None and "." in str(a.get("estimator") or "")}
    try:
        plain = targets_as_estimators(plain)
    except ValueError as e:
        raise ConfigError(name, e.args[0], e.args[1]) from None
    crossing = multiverse.expand(name, plain)  # the crossed readings, as one more sensitivity choice
    try:
        # Merge into a fresh schema: catches keys that a '+key=value' override slipped past
        # struct mode.  Touching every value surfaces MISSING keys too.
        cfg = OmegaConf.merge(OmegaConf.structured(RootCfg), plain)
        OmegaConf.set_struct(cfg, True)
        OmegaConf.to_container(cfg, throw_on_missing=True)
    except Exception as e:
        raise config_error(name, e) from None
    check_str_fields(name, cfg)
    try:
        exp = validate(name, scale, cfg)
    except ConfigError as err:
        m = re.fullmatch(r"algorithms\.([^.]+)\._target_", err.key)
        if m is None or m.group(1) not in as_estimator:
            raise
        raise ConfigError(name, f"algorithms.{m.group(1)}.estimator", str(err).split(": ", 1)[-1]) from None
    add_sensitivity(exp)
    if crossing is not None:  # values that cross on one key: after the values' own checks
        raise crossing
    return exp


def composed_config(name: str, scale: str = "paper", overrides: list[str] | tuple = (),
                    config_dir: str | os.PathLike | None = None, drops: tuple = ()) -> DictConfig:
    """The config as Hydra composes it, interpolations unresolved and nothing checked, with the
    entries '+algorithms.<key>' overrides add (as written): what ``rankrepro run --cfg job``
    prints.  :func:`load_experiment` first, for the errors."""
    root = Path(config_dir).resolve() if config_dir else find_config_dir()
    from . import user_drops

    given = list(overrides)
    overrides, added = _added_algorithms(name, given)
    plain = OmegaConf.to_container(_compose(root, name, scale, overrides), resolve=False)
    plain["algorithms"].update(added)
    diagnoses.merge(name, root, plain)
    if drops:  # what the user's overrides took away (load_experiment found them: user_drops)
        plain = user_drops.pruned(plain, list(drops), user_drops.touched(given))
    return OmegaConf.create(plain)


_ADD_ALGORITHM = re.compile(r"^\+algorithms\.([A-Za-z0-9_]+)=(.*)$", re.S)
#: an entry's keys one by one, '+algorithms.<key>._target_=pkg.mod.Class +algorithms.<key>.label=Mine'
_ADD_ALGORITHM_KEY = re.compile(r"^\+algorithms\.([A-Za-z0-9_]+)\.([A-Za-z_][\w.]*)=(.*)$", re.S)


def _added_algorithms(name: str, overrides: list[str]) -> tuple[list[str], dict[str, dict]]:
    """The overrides that add a whole algorithm entry, ``+algorithms.<key>={_target_: pkg.mod.Class,
    label: Mine}`` (Hydra cannot assign a mapping into the typed algorithm entries), taken out
    of ``overrides`` and parsed: (the other overrides, key -> entry).  Each entry joins the
    composed config as if an experiment file had it, and is checked as one."""
    from hydra.core.override_parser.overrides_parser import OverridesParser

    rest, added = [], {}
    for o in overrides:
        m = _ADD_ALGORITHM.match(o)
        if m is None:
            rest.append(o)
            continue
        try:
            value = OverridesParser.create().parse_override(o).value()
        except Exception as e:  # noqa: BLE001 - Hydra's parse error, with the key
            raise ConfigError(name, f"algorithms.{m.group(1)}", f"override '{o}' does not parse: {e}") from None
        require(name, f"algorithms.{m.group(1)}", isinstance(value, dict),
                f"+algorithms.{m.group(1)}= takes a mapping, e.g. '+algorithms.{m.group(1)}={{_target_: "
                f"pkg.module.Class, label: Mine}}', got {value!r}")
        added[m.group(1)] = value
    return _added_by_key(name, rest, added)


def _added_by_key(name: str, overrides: list[str], added: dict[str, dict]) -> tuple[list[str], dict[str, dict]]:
    """An entry added key by key, as Hydra users write it: the '+algorithms.<key>.<path>=value'
    overrides of a key that one of them gives a ``_target_`` (or that a whole-entry override
    adds) make that entry; the others (a new key of an existing entry) stay Hydra's."""
    from hydra.core.override_parser.overrides_parser import OverridesParser

    keyed = [(o, _ADD_ALGORITHM_KEY.match(o)) for o in overrides]
    new = {m.group(1) for _, m in keyed if m and m.group(2) == "_target_"} | set(added)
    rest = []
    for o, m in keyed:
        if m is None or m.group(1) not in new:
            rest.append(o)
            continue
        key, path = m.group(1), m.group(2).split(".")
        try:
            value = OverridesParser.create().parse_override(o).value()
        except Exception as e:  # noqa: BLE001 - Hydra's parse error, with the key
            raise ConfigError(name, f"algorithms.{key}.{m.group(2)}", f"override '{o}' does not parse: {e}") from None
        node = added.setdefault(key, {})
        for part in path[:-1]:
            node = node.setdefault(part, {})
            require(name, f"algorithms.{key}.{m.group(2)}", isinstance(node, dict),
                    f"'{o}': algorithms.{key}.{part} is not a mapping")
        require(name, f"algorithms.{key}.{m.group(2)}", path[-1] not in node, f"'{o}' sets a key given twice")
        node[path[-1]] = value
    return rest, added


def _check_experiment_name(name: str, root: Path) -> None:
    """The experiment's file name, ``config/experiment/<paper>/<artefact>.yaml``: two valid
    names (:data:`rankrepro.pipeline.names.NAME_PATTERNS`), and no other experiment file that
    differs from it in case only (on a case-insensitive file system both would write the same
    outputs)."""
    parts = name.split("/")
    require(name, "experiment", len(parts) == 2,
            f"config/experiment/{name}.yaml: an experiment file lies one folder deep, "
            "config/experiment/<paper>/<artefact>.yaml")
    for kind, part in zip(("paper", "artefact"), parts):
        why = name_problem(kind, part)
        require(name, f"experiment.{kind}", why is None, f"config/experiment/{name}.yaml: {why}")
    twins = [n for n in list_experiments(root) if n != name and n.casefold() == name.casefold()]
    require(name, "experiment.artefact", not twins,
            f"config/experiment/{name}.yaml and config/experiment/{twins[0] if twins else ''}.yaml differ in case "
            "only: on a case-insensitive file system their outputs are the same files")


def load_catalog(scale: str = "paper", config_dir: str | os.PathLike | None = None,
                 cache_dir: str | os.PathLike | None = None, jobs: int = 1) -> dict[str, Experiment]:
    """Every experiment, validated.  The first bad config raises.

    ``cache_dir``: keep the validated catalog there and read it back while nothing it depends
    on changed (:func:`catalog_key`: the config files' contents, the scale, this package's
    code and the versions of Python, OmegaConf, Hydra and Matplotlib).  Composing and checking
    the 20 experiments and their variants takes ~10 s, reading them back ~1 s: the workflow
    does it at every start.  The kept file is data, never code (JSON: each experiment's
    resolved config and its cells' fingerprints, :mod:`rankrepro.pipeline.cache`), sealed
    with an HMAC under this user's secret in ``cache_dir``: its MAC is checked before anything
    in it is used (a file planted under the key, which anyone can compute, is never used and
    nothing it names is imported), then it is validated; a file that does not verify or
    validate is ignored with one warning line naming it, composed again and replaced.
    A config that does not load is never kept.

    ``jobs``: compose the experiments in that many processes when none is kept (the workflow
    passes its cores: the 31 experiments take ~18 s in one process on this project's 2-core
    machine); each is the very experiment :func:`load_experiment` makes, and the first bad config
    in the catalog's order raises, as in one process."""
    root = Path(config_dir).resolve() if config_dir else find_config_dir()
    names = list_experiments(root)
    diagnoses.check_files(root, names)
    if cache_dir is not None:
        from . import cache

        key = catalog_key(root, scale)
        build = lambda n, resolved: _rebuilt(n, scale, OmegaConf.create(resolved))  # noqa: E731
        kept = cache.read(cache_dir, names, scale, key, build, check_collisions)
        if kept is not None:
            return _frozen(kept)
    composed = _composed(names, scale, root, jobs, read_back=cache_dir is not None)
    cat = {n: exp for n, (exp, _) in composed.items()}
    check_collisions(cat)
    if cache_dir is not None:
        cache.write(cache_dir, cat, scale, key, build, check_collisions, _same_catalogs,
                    read_back_checked=all(ok for _, ok in composed.values()))
    return _frozen(cat)


def _composed(names: list[str], scale: str, root: Path, jobs: int,
              read_back: bool = False) -> dict[str, tuple[Experiment, bool]]:
    """Each experiment composed and checked (:func:`load_experiment`), in ``jobs`` forked
    processes when there are several (a platform that cannot fork composes them in this one),
    with whether it reads back the same from a kept catalog (``read_back``; else False).  The
    results are taken in the catalog's order: the first bad config in that order raises."""
    import multiprocessing as mp

    workers = min(int(jobs or 1), len(names))
    if workers <= 1 or "fork" not in mp.get_all_start_methods():
        return {n: (load_experiment(n, scale, config_dir=root), False) for n in names}
    from concurrent.futures import ProcessPoolExecutor

    # fork: the workers start with this process's imports (a fresh interpreter would spend
    # ~1.5 s importing Hydra and the package before composing anything)
    with ProcessPoolExecutor(workers, mp_context=mp.get_context("fork")) as pool:
        futures = [pool.submit(_compose_one, n, scale, root, read_back) for n in names]
        return {n: f.result() for n, f in zip(names, futures)}


def _compose_one(name: str, scale: str, root: Path, read_back: bool) -> tuple[Experiment, bool]:
    """One experiment composed in a worker, and (``read_back``) whether a kept catalog would
    give it back the same (:func:`rankrepro.pipeline.cache.read_back`): the check a kept
    catalog's writing makes, done here in parallel instead of afterwards in one process."""
    exp = load_experiment(name, scale, config_dir=root)
    if not read_back:
        return exp, False
    from . import cache

    return exp, cache.read_back(name, exp, lambda n, resolved: _rebuilt(n, scale, OmegaConf.create(resolved)),
                                _same_catalogs)


def catalog_jobs() -> int:
    """The processes a command that loads the whole catalog composes it in: the CPUs this
    process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _frozen(cat: dict[str, Experiment]) -> dict[str, Experiment]:
    """The catalog with every config (and variant's) read-only: the workflow only reads them,
    and an experiment whose config cannot change writes its YAML once (``Experiment.to_yaml``:
    the resolved file and the config fingerprint, ~3 s of each workflow start otherwise)."""
    for exp in cat.values():
        for e in (exp, *exp.variants.values()):
            OmegaConf.set_readonly(e.cfg, True)
    return cat


def _same_catalogs(a: dict[str, Experiment], b: dict[str, Experiment]) -> bool:
    """Whether two catalogs are the same for every use: resolved configs (main and variants),
    sizes, cells (every field) and fingerprints."""
    if list(a) != list(b):
        return False
    for name in a:
        x, y = a[name], b[name]
        # configs compared as written, as their YAML texts would be (validate.same_as_written)
        if (not same_as_written(as_written(x.cfg), as_written(y.cfg)) or x.all_cells != y.all_cells
                or list(x.variants) != list(y.variants)
                or any(not same_as_written(as_written(x.variants[k].cfg), as_written(y.variants[k].cfg))
                       or x.variants[k].cells != y.variants[k].cells for k in x.variants)):
            return False
        if any(getattr(x, f) != getattr(y, f) for f in ("scale", "n_trials", "n_train", "n_test", "curve_points",
                                                          "max_steps", "max_users")):
            return False
        if any(cell_fingerprint(*x.variant_of(c)) != cell_fingerprint(*y.variant_of(c)) for c in x.all_cells):
            return False
    return True


def check_collisions(cat: dict[str, Experiment]) -> None:
    """No two experiments write the same output: the same artefact files
    (``results/<paper>/<artefact>.*``) or the same figure (``figures/<paper>/<file>.png``),
    compared without case (one file on a case-insensitive file system).  Otherwise the
    workflow would plan one job for both and silently drop one of them.  Raises
    :class:`ConfigError` on the later experiment, naming both."""
    seen: dict[tuple[str, str, str], str] = {}
    for name, exp in cat.items():
        outs = [("artefact", f"results/{exp.paper}/{exp.artefact}.json", "experiment.artefact")]
        if exp.cfg.experiment.figure is not None:
            key = "experiment.figure.file" if exp.cfg.experiment.figure.file is not None else "experiment.figure"
            outs.append(("figure", f"figures/{exp.paper}/{exp.figure_file}.png", key))
        for what, path, key in outs:
            other = seen.setdefault((what, path.casefold(), ""), name)
            if other != name:
                theirs = cat[other]
                how = ("" if theirs.cfg.experiment.figure is None or what != "figure"
                       else f" (its figure.file is {theirs.cfg.experiment.figure.file!r})"
                       if theirs.cfg.experiment.figure.file is not None else " (its artefact's name)")
                raise ConfigError(name, key, f"experiments '{other}' and '{name}' both write {path}{how}: "
                                             f"give one of them another {'figure.file' if what == 'figure' else 'name'}")


def default_cache_dir() -> Path:
    """Where the workflow keeps validated catalogs: ``$RANKREPRO_CACHE_DIR``, else
    ``$XDG_CACHE_HOME/rankrepro`` (``~/.cache/rankrepro``).  Shared by checkouts and scratch
    copies alike: a file is only read for the very configs, code and libraries it was made from."""
    from ..user_secret import cache_dir

    return cache_dir()


def catalog_key(config_dir: str | os.PathLike, scale: str) -> str:
    """What a validated catalog depends on, hashed: every file under the config folder (path
    and bytes), the scale, every module of this package, and the versions of the libraries
    that compose and check it."""
    from importlib.metadata import PackageNotFoundError, version
    import sys

    h = hashlib.sha256(f"{scale}\0{sys.version}\0".encode())
    for dist in ("omegaconf", "hydra-core", "matplotlib"):
        try:
            h.update(f"{dist}={version(dist)}\0".encode())
        except PackageNotFoundError:
            h.update(f"{dist}=?\0".encode())
    for base, pattern in ((Path(config_dir), "*"), (Path(__file__).resolve().parents[1], "*.py")):
        for p in sorted(base.rglob(pattern)):
            if p.is_file() and "__pycache__" not in p.parts:
                h.update(str(p.relative_to(base)).encode() + b"\0")
                h.update(p.read_bytes())
                h.update(b"\0")
    return h.hexdigest()[:20]
