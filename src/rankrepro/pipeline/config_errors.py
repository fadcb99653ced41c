"""The :class:`ConfigError` every check raises, naming the offending key; how an error of
Hydra, OmegaConf or the YAML parser becomes one (the key and file line it points at); and the
bounds every YAML file of the config folder is held to before Hydra composes any."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, OmegaConf
from omegaconf.errors import OmegaConfBaseException

from .names import name_problem


class ConfigError(ValueError):
    """A config that cannot run; ``key`` is the offending key (dotted path)."""

    def __init__(self, experiment: str, key: str, message: str):
        self.experiment = experiment
        self.key = key
        self.message = message
        super().__init__(f"config error in experiment '{experiment}' at key '{key}': {message}")

    def __reduce__(self):
        # whole across processes (the catalog composes its experiments in several)
        return (type(self), (self.experiment, self.key, self.message), self.__dict__)


def require(name: str, key: str, ok: bool, message: str) -> None:
    if not ok:
        raise ConfigError(name, key, message)


def check_name(name: str, key: str, kind: str, value: Any) -> None:
    why = name_problem(kind, value)
    require(name, key, why is None, str(why))


def config_error(name: str, exc: BaseException) -> ConfigError:
    """The most precise description in an exception chain: the key and the first line
    of the OmegaConf message, with the config file Hydra was composing.  A YAML syntax
    error or duplicate key names the key at its line (and file:line); an interpolation that
    cannot be resolved names the key holding it; an error inside a list element (reported
    by OmegaConf relative to the element) is located in the file it came from."""
    where = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    e: BaseException | None = exc
    while e is not None:
        if isinstance(e, OmegaConfBaseException) and getattr(e, "full_key", None):
            msg = str(e).splitlines()[0]
            key = str(e.full_key)
            if where.startswith("In '"):
                msg = f"{msg} ({where.split(':')[0]})"
                key = _locate_in_file(exc, where, key, getattr(e, "value", None)) or key
            return ConfigError(name, key, msg)
        mark = getattr(e, "context_mark", None) or getattr(e, "problem_mark", None)
        if mark is not None and getattr(mark, "name", None):  # a YAML scanner/parser/constructor error
            dup = re.search(r"found duplicate key (\S+)", str(e))
            line = (getattr(e, "problem_mark", None) or mark).line + 1 if dup else mark.line + 1
            key = _yaml_key_at(exc, mark.name, line)
            problem = (getattr(e, "problem", None) or str(e).splitlines()[-1]).strip()
            return ConfigError(name, key, f"{mark.name}:{line}: {problem}")
        if isinstance(e, OmegaConfBaseException) and "nterpolation" in type(e).__name__:
            key, msg = _find_bad_interpolation(exc)
            if key:
                return ConfigError(name, key, msg)
        e = e.__cause__ or e.__context__
    # an error OmegaConf annotates only in its text (not an OmegaConf exception): its key from there
    if (m := re.search(r"(?m)^\s*full_key: (\S+)", str(exc))) is not None:
        if "'NoneType' object has no attribute" in where:  # a mapping merged into a null block
            return ConfigError(name, m.group(1), "is null in the experiment's file, and a block cannot be set there "
                                                 "from the command line: write the block in the experiment's file")
        return ConfigError(name, m.group(1), where)
    return ConfigError(name, "defaults", where)


def _frame_local(exc: BaseException, local: str, kind: type) -> Any:
    """A local variable of a frame the exception passed through (innermost first)."""
    tb, found = exc.__traceback__, None
    while tb is not None:
        v = tb.tb_frame.f_locals.get(local)
        if isinstance(v, kind):
            found = v
        tb = tb.tb_next
    return found


def _find_bad_interpolation(exc: BaseException) -> tuple[str | None, str]:
    """The key whose interpolation fails, found by resolving the composed config leaf by leaf
    (``OmegaConf.resolve`` reports no key)."""
    cfg = _frame_local(exc, "cfg", DictConfig)
    if cfg is None:
        return None, ""
    try:
        OmegaConf.to_container(cfg, resolve=True)
    except OmegaConfBaseException as err:
        if getattr(err, "full_key", None):
            return str(err.full_key), f"cannot resolve {err.child_node if err.child_node is not None else ''}: " \
                                      f"{str(err).splitlines()[0]}"
    return None, ""


def _group_prefix(exc: BaseException, rel: str) -> str:
    """The dotted key under which a config file is mounted: '' for experiment files (global
    package), 'dataset.', 'scale.', or 'algorithms.<key>.' for an algorithm file (looked up
    in the experiment's defaults list)."""
    group, _, stem = rel.partition("/")
    if group in ("dataset", "scale"):
        return group + "."
    if group == "algorithm":
        cfg_dir = _frame_local(exc, "root", Path)
        exp = _frame_local(exc, "name", str)
        if cfg_dir is not None and exp:
            f = Path(cfg_dir) / "experiment" / f"{exp}.yaml"
            text = f.read_text() if f.is_file() else ""
            m = re.search(r"/algorithm@algorithms\.(\w+)\s*:\s*" + re.escape(stem) + r"\s*$", text, re.M)
            if m:
                return f"algorithms.{m.group(1)}."
        return f"algorithms.{stem}."
    return ""


def _yaml_key_at(exc: BaseException, file: str, line: int) -> str:
    """The dotted key of ``line`` of a YAML file, from the indentation of the lines above
    (list items are shown as [i])."""
    try:
        lines = Path(file).read_text(errors="replace").splitlines()[:line]
    except OSError:
        return Path(file).name
    parts: list[tuple[int, str]] = []
    for text in lines:
        stripped = text.lstrip(" ")
        if not stripped or stripped.startswith("#"):
            continue
        ind = len(text) - len(stripped)
        item = stripped.startswith("- ")
        body = stripped[2:] if item else stripped
        while parts and parts[-1][0] >= ind + (0 if not item else 1) and not (item and parts[-1][1].startswith("[")
                                                                               and parts[-1][0] == ind):
            parts.pop()
        if item:
            n = 0
            if parts and parts[-1][1].startswith("[") and parts[-1][0] == ind:
                n = int(parts.pop()[1][1:-1]) + 1
            parts.append((ind, f"[{n}]"))
            ind += 2
        m = re.match(r"([A-Za-z_][\w@/.-]*)\s*:", body)
        if m:
            parts.append((ind, m.group(1)))
    rel = _config_rel(file)
    key = "".join(p if p.startswith("[") else f".{p}" for _, p in parts).lstrip(".")
    if rel.startswith("experiment/") and key.startswith("defaults"):
        return "defaults"
    return (_group_prefix(exc, rel) + key).rstrip(".") or rel


def _config_rel(file: str) -> str:
    """'group/stem' of a config file path (the part after the config folder)."""
    p = Path(file).with_suffix("")
    parts = p.parts
    for i in range(len(parts) - 1, -1, -1):
        if parts[i] in ("experiment", "algorithm", "dataset", "scale"):
            return "/".join(parts[i:])
    return p.name


def _locate_in_file(exc: BaseException, where: str, key: str, value: Any) -> str | None:
    """Full key of a bad value that OmegaConf reports relative to a list element: find the
    leaf ``key`` holding ``value`` in the file Hydra names (``In 'group/file'``)."""
    if "." in key or "[" in key:
        return None
    m = re.match(r"In '([^']+)'", where)
    cfg_dir = _frame_local(exc, "root", Path)
    if not m or cfg_dir is None:
        return None
    f = Path(cfg_dir) / f"{m.group(1)}.yaml"
    try:
        raw = OmegaConf.to_container(OmegaConf.load(f), resolve=False)
    except Exception:  # noqa: BLE001 - best effort; the plain key is reported otherwise
        return None
    hits: list[str] = []

    def walk(node, path):
        if isinstance(node, dict):
            for k, v in node.items():
                sub = f"{path}.{k}" if path else str(k)
                if str(k) == key and not isinstance(v, (dict, list)) and str(v) == str(value):
                    hits.append(sub)
                walk(v, sub)
        elif isinstance(node, list):
            for i, v in enumerate(node):
                walk(v, f"{path}[{i}]")

    walk(raw, "")
    return _group_prefix(exc, m.group(1)) + hits[0] if len(hits) == 1 else None


#: bounds on every config file, checked before Hydra composes it: a YAML alias bomb (a few
#: lines whose anchors expand to billions of nodes when OmegaConf copies them) or a file of
#: runaway size or depth would otherwise hang the load
YAML_MAX_BYTES = 1 << 20
YAML_MAX_NODES = 200_000
YAML_MAX_DEPTH = 40
#: the longest list: a grid of more values than an experiment may have cells
#: (:data:`rankrepro.pipeline.config_limits.MAX_CELLS`) is refused before Hydra composes it
#: (composing costs ~1.5 ms per value: 100,000 values took ~100 s before the refusal)
YAML_MAX_LIST = 10_000
#: files found within the bounds: (path, size, mtime) -> None, checked once per process
_YAML_OK: dict[tuple[str, int, int], None] = {}


class _YamlTooBig(Exception):
    def __init__(self, path: list[str], message: str):
        self.path, self.message = path, message


def _yaml_measure(node: Any, memo: dict[int, tuple[int, int]], active: set[int]) -> tuple[int, int]:
    """(nodes, depth) of a composed YAML node once every alias is expanded, without expanding
    them (each node measured once)."""
    import yaml

    if id(node) in memo:
        return memo[id(node)]
    if id(node) in active:
        raise _YamlTooBig([], "an alias refers to a node that contains it (a recursive structure)")
    if isinstance(node, yaml.ScalarNode):
        return 1, 1
    if isinstance(node, yaml.SequenceNode) and len(node.value) > YAML_MAX_LIST:
        raise _YamlTooBig([], f"a list of {len(node.value):,} values, more than a config list may hold "
                              f"({YAML_MAX_LIST:,}: the most cells an experiment may have)")
    active.add(id(node))
    size, depth = 1, 0
    mapping = isinstance(node, yaml.MappingNode)
    for child, key in ([(v, k) for k, v in node.value] if mapping else [(v, None) for v in node.value]):
        try:
            n, d = _yaml_measure(child, memo, active)
            if d + 1 > YAML_MAX_DEPTH:
                raise _YamlTooBig([], f"nested more than {YAML_MAX_DEPTH} levels deep")
        except _YamlTooBig as e:  # the key it is under: mapping keys down to the first list
            e.path = [str(getattr(key, "value", key)), *e.path] if mapping else []
            raise
        size, depth = size + n, max(depth, d)
    active.discard(id(node))
    memo[id(node)] = (size, depth + 1)
    return memo[id(node)]


def _yaml_where(node: Any, memo: dict[int, tuple[int, int]]) -> list[str]:
    """The keys down to the mapping entry that holds most of an oversized document."""
    import yaml

    path: list[str] = []
    while isinstance(node, yaml.MappingNode) and node.value:
        k, v = max(node.value, key=lambda kv: memo.get(id(kv[1]), (0, 0))[0])
        path.append(str(getattr(k, "value", k)))
        node = v
    return path


def check_yaml_bounds(name: str, root: Path) -> None:
    """Every YAML file under the config folder within :data:`YAML_MAX_BYTES`,
    :data:`YAML_MAX_NODES` (aliases expanded) and :data:`YAML_MAX_DEPTH`, measured on the
    composed node graph (linear in the file's size) before anything expands it."""
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    for f in sorted(root.rglob("*.yaml")):
        try:
            st = f.stat()
        except OSError:
            continue
        memo_key = (str(f), st.st_size, st.st_mtime_ns)
        if memo_key in _YAML_OK:
            continue
        rel = f.relative_to(root).as_posix()
        owner = rel.split("/", 1)[1][:-len(".yaml")] if rel.startswith(("experiment/", "diagnoses/")) \
            and not f.name.startswith("_") else name
        prefix = {"dataset": "dataset.", "scale": "scale."}.get(rel.split("/")[0], "")
        problem, where = None, []
        if st.st_size > YAML_MAX_BYTES:
            problem = f"{st.st_size:,} bytes, more than a config file may have ({YAML_MAX_BYTES:,})"
        else:
            try:
                doc = yaml.compose(f.read_bytes(), Loader=loader)
            except yaml.YAMLError:
                doc = None  # a syntax error: reported, with its line, when Hydra composes the file
            except RecursionError:
                doc, problem = None, f"nested more than {YAML_MAX_DEPTH} levels deep"
            if doc is not None:
                memo: dict[int, tuple[int, int]] = {}
                try:
                    size, _ = _yaml_measure(doc, memo, set())
                    if size > YAML_MAX_NODES:
                        problem = (f"its aliases expand to {size:,} values, more than a config may hold "
                                   f"({YAML_MAX_NODES:,}): an alias bomb?")
                        where = _yaml_where(doc, memo)
                except _YamlTooBig as e:
                    problem, where = e.message, e.path
                except RecursionError:
                    problem = f"nested more than {YAML_MAX_DEPTH} levels deep"
        if problem is not None:
            raise ConfigError(owner, prefix + ".".join(where) if where else rel, f"config/{rel}: {problem}")
        _YAML_OK[memo_key] = None
