"""Which artefacts use which data set, read from the configs alone (no Hydra composition):
what ``rankrepro data-status`` and docs/data.md tell a user an absent original would change.

An experiment file (``config/experiment/<paper>/<artefact>.yaml``, files starting with ``_``
are shared parts) names its data set by ``override /dataset: <name>`` in its defaults, or takes
it from an experiment it lists there (``/experiment/<paper>/<artefact>``, the arena's files);
``config/dataset/<name>.yaml`` gives its ``source`` (a registry name; none for generated data).
The same defaults order as Hydra's: what a file sets itself (``_self_`` last) wins over what
its defaults give.  tests/test_data_uses.py checks the result against the composed catalog.
"""

from __future__ import annotations

import functools
from pathlib import Path

import yaml


def _load(path: Path) -> dict:
    data = yaml.safe_load(path.read_text()) or {}
    return data if isinstance(data, dict) else {}


def _experiment(config_dir: Path, rel: str, seen: tuple[str, ...] = ()) -> dict:
    """paper, artefact and dataset of experiment file ``rel`` (``<paper>/<name>``, no suffix)."""
    if rel in seen:
        raise ValueError(f"config/experiment/{rel}.yaml: its defaults include itself")
    cfg = _load(config_dir / "experiment" / f"{rel}.yaml")
    out: dict = {}
    for d in cfg.get("defaults") or []:
        if isinstance(d, str) and d.startswith("/experiment/"):
            out.update({k: v for k, v in _experiment(config_dir, d[len("/experiment/"):], (*seen, rel)).items()
                        if v is not None})
        elif isinstance(d, dict):
            for k, v in d.items():
                if str(k).replace("override", "").strip() in ("/dataset", "dataset"):
                    out["dataset"] = v
    exp = cfg.get("experiment") or {}
    for key in ("paper", "artefact"):
        if exp.get(key) is not None:
            out[key] = exp[key]
    return out


@functools.lru_cache(maxsize=8)
def _uses(config_dir: str) -> tuple[tuple[str, str], ...]:
    root = Path(config_dir)
    if not (root / "experiment").is_dir():  # an installed package without its checkout's configs
        return ()
    default = (_load(root / "config.yaml").get("defaults") or [])
    default_ds = next((d["dataset"] for d in default if isinstance(d, dict) and "dataset" in d), None)
    pairs = []
    for f in sorted((root / "experiment").rglob("*.yaml")):
        if f.name.startswith("_"):
            continue
        rel = str(f.relative_to(root / "experiment").with_suffix(""))
        e = _experiment(root, rel)
        ds = e.get("dataset") or default_ds
        source = _load(root / "dataset" / f"{ds}.yaml").get("source") if ds else None
        if source is not None:
            pairs.append((str(source), f"{e.get('paper', rel.split('/')[0])}/{e.get('artefact', f.stem)}"))
    return tuple(sorted(pairs))


def artefacts_by_source(config_dir: str | Path = "config") -> dict[str, list[str]]:
    """Registry name -> the artefacts (``paper/artefact``) whose configured data set it is."""
    out: dict[str, list[str]] = {}
    for source, artefact in _uses(str(Path(config_dir).resolve())):
        out.setdefault(source, []).append(artefact)
    return out
