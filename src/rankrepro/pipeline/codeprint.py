"""The code a cell's numbers come from, as a fingerprint.

A cell's numbers are computed by its protocol's module, its learner's module, its data
builder's module and the trial seeds (:mod:`.seeding`), and by whatever these import inside
the package.  That *import closure* is read from the modules' own import statements (every
statement, also those inside functions; nothing is executed, no list is kept by hand), and
each module in it is hashed by its code: the syntax tree without docstrings, so that an edit
of comments, docstrings or layout changes nothing, and an edit of code changes the hash.
The major.minor versions of the numeric libraries the closure imports (numpy, scipy, numba,
lightgbm) join it: a new minor version may round differently.

Registries are the one exception to following every import: a module that sets
``__registry__ = True`` (``algorithms/__init__``, ``data/builders``, ``protocols/__init__``)
maps config names to every learner, builder or protocol of the package.  Importing a name
from it follows that name only (``FEATURE_MAPS`` -> ``algorithms/feature_maps``), and the
registry's own imports are not followed: what a cell takes from it by name (its learner
class, its builder) is a root of the cell's closure instead.  So editing PRank's module
changes the fingerprints of exactly the cells that run a learner of that module (OAP's PRank
members run the compiled step of ``algorithms/_compiled``, in the closure of every compiled
learner's cells), and editing the report, the command line or a figure's style changes none.

A learner from outside the package (``_target_: package.module.ClassName``, :mod:`.targets`)
adds its module and the modules of its own project it imports (:func:`external_closure`,
hashed by the same rule), and the package modules those import as roots: its cells rerun
when its code changes, never for its comments, and the package's own cells never move.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import json
from importlib import metadata
from pathlib import Path
from typing import Iterable

PACKAGE = "rankrepro"
_SRC = Path(__file__).resolve().parents[1]  # .../rankrepro

#: third-party libraries whose results can change with their version (major.minor counts)
NUMERIC_LIBRARIES = {"numpy": "numpy", "scipy": "scipy", "numba": "numba", "lightgbm": "lightgbm"}

#: modules every cell runs through besides its protocol, learner and builder
ALWAYS = ("rankrepro.pipeline.seeding",)


def module_path(name: str) -> Path | None:
    """The source file of package module ``name`` (None when there is none)."""
    if name != PACKAGE and not name.startswith(PACKAGE + "."):
        return None
    rel = name.split(".")[1:]
    base = _SRC.joinpath(*rel)
    for p in (base.with_suffix(".py"), base / "__init__.py"):
        if p.is_file():
            return p
    return None


@functools.lru_cache(maxsize=None)
def _parsed(name: str) -> ast.Module:
    path = module_path(name)
    if path is None:
        raise KeyError(f"no module {name} in the package")
    return ast.parse(path.read_text(encoding="utf-8"), str(path))


def _without_docstrings(tree: ast.AST) -> ast.AST:
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                    and isinstance(body[0].value.value, str):
                node.body = body[1:]
    return tree


def canonical(source: str) -> str:
    """The code of a module as text that only code changes: its syntax tree without
    docstrings, empty fields and load/store contexts (those make the dump independent of
    the small differences between Python versions' trees)."""
    tree = _without_docstrings(ast.parse(source))
    out: list[str] = []

    def walk(node) -> None:
        if isinstance(node, ast.AST):
            out.append(type(node).__name__ + "(")
            for f in node._fields:
                if f in ("ctx", "type_comment", "kind"):
                    continue
                v = getattr(node, f, None)
                if v is None or (isinstance(v, list) and not v):
                    continue
                out.append(f + "=")
                walk(v)
                out.append(",")
            out.append(")")
        elif isinstance(node, list):
            out.append("[")
            for x in node:
                walk(x)
                out.append(",")
            out.append("]")
        else:
            out.append(repr(node))

    walk(tree)
    return "".join(out)


@functools.lru_cache(maxsize=None)
def module_digest(name: str) -> str:
    path = module_path(name)
    if path is None:
        raise KeyError(f"no module {name} in the package")
    return hashlib.sha256(canonical(path.read_text(encoding="utf-8")).encode()).hexdigest()[:16]


def _is_registry(name: str) -> bool:
    for node in _parsed(name).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__registry__"
                                                for t in node.targets):
            return True
    return False


def _absolute(name: str, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    path = module_path(name)
    here = name if path is not None and path.name == "__init__.py" else name.rpartition(".")[0]
    for _ in range(node.level - 1):
        here = here.rpartition(".")[0]
    return f"{here}.{node.module}" if node.module else here


def _deepest(dotted: str) -> str | None:
    """The deepest package module a dotted name lies in."""
    while dotted and module_path(dotted) is None:
        dotted = dotted.rpartition(".")[0]
    return dotted or None


@functools.lru_cache(maxsize=None)
def _edges(name: str) -> tuple[tuple[tuple[str, str | None], ...], frozenset[str]]:
    """What module ``name`` imports: ((module, name taken from it or None), ...) inside the
    package, and the top-level third-party libraries."""
    inside: list[tuple[str, str | None]] = []
    outside: set[str] = set()
    for node in ast.walk(_parsed(name)):
        if isinstance(node, ast.Import):
            for a in node.names:
                mod = _deepest(a.name)
                if mod is not None:
                    inside.append((mod, None))
                else:
                    outside.add(a.name.split(".")[0])
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(name, node)
            if not (base == PACKAGE or base.startswith(PACKAGE + ".")):
                if not node.level:
                    outside.add(base.split(".")[0])
                continue
            for a in node.names:
                sub = f"{base}.{a.name}"
                if module_path(sub) is not None:  # `from pkg import submodule`
                    inside.append((sub, None))
                else:
                    mod = _deepest(base)
                    if mod is not None:
                        inside.append((mod, a.name))
    return tuple(inside), frozenset(outside)


def _registry_source(registry: str, attr: str) -> str | None:
    """The module a registry imported ``attr`` from (None: the registry defines it)."""
    for node in _parsed(registry).body:
        if isinstance(node, ast.ImportFrom):
            for a in node.names:
                if (a.asname or a.name) == attr:
                    base = _absolute(registry, node)
                    sub = f"{base}.{a.name}"
                    return sub if module_path(sub) is not None else _deepest(base)
    return None


@functools.lru_cache(maxsize=None)
def closure(roots: tuple[str, ...]) -> tuple[tuple[str, ...], frozenset[str]]:
    """The package modules ``roots`` run (sorted) and the third-party libraries they import."""
    seen: set[str] = set()
    libraries: set[str] = set()
    todo = [r for r in roots if module_path(r) is not None]
    while todo:
        m = todo.pop()
        if m in seen:
            continue
        seen.add(m)
        inside, outside = _edges(m)
        if _is_registry(m):
            # a registry's imports are what it registers: followed only by name, from its importers
            libraries |= {o for o in outside if o in NUMERIC_LIBRARIES}
            continue
        libraries |= outside
        for mod, attr in inside:
            if attr is not None and _is_registry(mod):
                src = _registry_source(mod, attr)
                if src is not None and src != mod:
                    todo.append(src)
            todo.append(mod)
    return tuple(sorted(seen)), frozenset(libraries)


@functools.lru_cache(maxsize=None)
def library_version(dist: str) -> str:
    """major.minor of an installed distribution ("absent" when it is not installed)."""
    try:
        return ".".join(metadata.version(dist).split(".")[:2])
    except metadata.PackageNotFoundError:
        return "absent"


def identity(roots: Iterable[str]) -> dict:
    """``{"modules": {module: digest}, "libraries": {library: major.minor}}`` of the code
    ``roots`` run: what a cell's code fingerprint hashes, and what a record keeps so that the
    report can name the modules that changed since."""
    mods, libs = closure(tuple(sorted(set(roots))))
    return {"modules": {m: module_digest(m) for m in mods},
            "libraries": {lib: library_version(NUMERIC_LIBRARIES[lib]) for lib in sorted(libs)
                          if lib in NUMERIC_LIBRARIES}}


def fingerprint(ident: dict) -> str:
    return hashlib.sha256(json.dumps(ident, sort_keys=True).encode()).hexdigest()[:16]


def merge(identities: Iterable[dict]) -> dict:
    """One identity for several cells (an artefact's record)."""
    out: dict = {"modules": {}, "libraries": {}}
    for ident in identities:
        out["modules"].update(ident["modules"])
        out["libraries"].update(ident["libraries"])
    return {"modules": dict(sorted(out["modules"].items())), "libraries": dict(sorted(out["libraries"].items()))}


def changed(recorded: dict | None, now: dict) -> list[str]:
    """The modules and libraries of ``recorded`` (a record's identity) whose code or version
    differs today, as ``module`` or ``library x.y -> x.z`` (every module recorded that no
    longer exists counts as changed)."""
    if not recorded:
        return []
    out = [m for m, d in recorded.get("modules", {}).items() if now["modules"].get(m) != d]
    out += [f"{lib} {v} -> {now['libraries'].get(lib, 'absent')}" for lib, v in recorded.get("libraries", {}).items()
            if now["libraries"].get(lib) != v]
    return out


def current(recorded: dict) -> dict:
    """Today's identity of the modules and libraries a record names."""
    mods = {}
    for m in recorded.get("modules", {}):
        try:
            mods[m] = module_digest(m)
        except KeyError:
            try:  # a learner's module from outside the package (_target_)
                mods[m] = external_digest(m)
            except KeyError:
                mods[m] = "absent"
    return {"modules": mods, "libraries": {lib: library_version(NUMERIC_LIBRARIES.get(lib, lib))
                                           for lib in recorded.get("libraries", {})}}


# -- learners from outside the package (``_target_``, :mod:`.targets`) -------------------------
def _spec_file(name: str) -> Path | None:
    """The source file of module ``name`` wherever it is importable from (None: no such
    module, or not a Python source file)."""
    import importlib.util

    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError, AttributeError):
        return None
    if spec is None or not spec.origin or not spec.origin.endswith(".py"):
        return None
    return Path(spec.origin).resolve()


def _system_dirs() -> list[Path]:
    import sysconfig

    return [Path(p).resolve() for k in ("stdlib", "platstdlib", "purelib", "platlib")
            if (p := sysconfig.get_paths().get(k))]


def _under(path: Path, folder: Path) -> bool:
    return folder == path or folder in path.parents


_EXTERNAL: dict[tuple[str, int, int], str] = {}


def external_digest(name: str) -> str:
    """The digest of module ``name`` outside the package, by the same rule as the package's
    modules (its code without docstrings or comments); KeyError when it cannot be found."""
    path = _spec_file(name)
    if path is None:
        raise KeyError(f"no module {name} found")
    st = path.stat()
    key = (str(path), st.st_mtime_ns, st.st_size)
    if key not in _EXTERNAL:
        _EXTERNAL[key] = hashlib.sha256(canonical(path.read_text(encoding="utf-8")).encode()).hexdigest()[:16]
    return _EXTERNAL[key]


def external_closure(module: str) -> tuple[dict[str, str], list[str], frozenset[str]]:
    """The code a learner module from outside the package runs: ``({module: digest}`` of it and
    of the modules it imports from its own project (its top-level package's folder; for a
    top-level module, its folder unless that is an installation folder), ``[package modules it
    imports]`` (closure roots, followed as :func:`closure` follows them: a registry by name
    only), and the third-party libraries it imports)."""
    first = _spec_file(module)
    if first is None:
        raise KeyError(f"no module {module} found")
    top = module.split(".")[0]
    if "." in module:
        top_file = _spec_file(top)
        project = top_file.parent if top_file is not None else first.parent
    else:
        project = first.parent
        if any(_under(project, d) for d in _system_dirs()):
            project = first  # a module installed on its own: only itself
    seen: dict[str, str] = {}
    roots: set[str] = set()
    libraries: set[str] = set()

    def place(dotted: str) -> None:
        if dotted == PACKAGE or dotted.startswith(PACKAGE + "."):
            mod = _deepest(dotted)
            if mod is not None:
                roots.add(mod)
            return
        path = _spec_file(dotted)
        if path is not None and _under(path, project):
            todo.append(dotted)
        else:
            libraries.add(dotted.split(".")[0])

    todo = [module]
    while todo:
        m = todo.pop()
        if m in seen:
            continue
        path = _spec_file(m)
        if path is None:
            continue
        seen[m] = external_digest(m)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                for a in node.names:
                    place(a.name)
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    here = m if path.name == "__init__.py" else m.rpartition(".")[0]
                    for _ in range(node.level - 1):
                        here = here.rpartition(".")[0]
                    base = f"{here}.{node.module}" if node.module else here
                else:
                    base = node.module or ""
                if base == PACKAGE or base.startswith(PACKAGE + "."):
                    for a in node.names:  # as the package's own modules import (registries by name)
                        sub = f"{base}.{a.name}"
                        if module_path(sub) is not None:
                            roots.add(sub)
                            continue
                        mod = _deepest(base)
                        if mod is None:
                            continue
                        if _is_registry(mod):
                            src = _registry_source(mod, a.name)
                            if src is not None and src != mod:
                                roots.add(src)
                        roots.add(mod)
                    continue
                for a in node.names:
                    sub = f"{base}.{a.name}"
                    place(sub if _spec_file(sub) is not None else base)
    return dict(sorted(seen.items())), sorted(roots), frozenset(libraries)


def cell_roots(exp, cell) -> list[str]:
    """The modules a cell's computation starts from: its protocol's, its learner's and its
    data builder's, and the seeds'."""
    from ..data.builders import BUILDERS
    from ..protocols import PROTOCOLS

    e = exp.cfg.experiment
    protocol = PROTOCOLS[e.protocol]
    roots = [type(protocol).__module__, *ALWAYS]
    learner = protocol.estimators.get(cell.estimator)
    if learner is not None:
        roots.append(learner.__module__)
    builder = BUILDERS.get(str(exp.cfg.dataset.builder))
    if builder is not None:
        roots.append(builder.__module__)
    return roots


def cell_identity(exp, cell) -> dict:
    from .targets import is_target

    roots = cell_roots(exp, cell)
    if not is_target(cell.estimator):
        return identity(roots)
    # a learner from outside the package: its module and its project's modules it imports,
    # beside the package modules they import
    module = cell.estimator.rpartition(".")[0]
    ext, pkg_roots, libs = external_closure(module)
    ident = identity([*roots, *pkg_roots])
    ident["modules"] = dict(sorted({**ident["modules"], **ext}.items()))
    ident["libraries"] = dict(sorted({**ident["libraries"], **{lib: library_version(NUMERIC_LIBRARIES[lib])
                                                                 for lib in libs if lib in NUMERIC_LIBRARIES}}.items()))
    return ident


def experiment_identity(exp) -> dict:
    """The code of every cell of an experiment (its record's ``code``), with its fingerprint."""
    ident = merge(cell_identity(*exp.variant_of(c)) for c in exp.all_cells)
    return {"fingerprint": fingerprint(ident), **ident}
