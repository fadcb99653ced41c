"""The platform spread (issue 60; docs/reproducibility.md, 'The platform spread'): how far the same
code moves a committed cell when it runs under another CPU kernel -- OpenBLAS's core type, NumPy's
SIMD level, numba's CPU target -- measured by recomputing the cell under each setting of
:data:`KERNELS` (``rankrepro verify --kernel NAME --record-spread``, ``make spread``) and kept in
``results/platform_spread.json``:

* ``measured``: one entry per kernel setting and machine, with the BLAS it loaded and, per cell
  measured, the committed bytes it was compared with (sha256) and what it found (identical, last
  bits, moved);
* ``cells``: per moved cell and metric, the largest absolute and relative difference;
* ``outcomes``: per artefact and kernel, the verdicts, claims and diagnosis labels that change when
  the record is aggregated again with the cells as recomputed under that kernel (none, expected;
  :func:`rankrepro.records_check.outcome_changes`).

A measurement holds for the committed bytes it names only: a cell made again is measured again.
``rankrepro verify`` accepts a cell that moves within its spread, or, for a cell not measured
itself, within the spread of its learner's measured cell in the same artefact (the sample measures
the cheapest cell of each learner); each record carries its section (:func:`record_section`).
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import sys
from pathlib import Path

#: the kernel settings a user's CPU may give (at least AVX-512, AVX2 and a pre-AVX2 baseline)
KERNELS: dict[str, dict[str, str]] = {
    "skylakex": {"OPENBLAS_CORETYPE": "SkylakeX"},
    # OpenBLAS's AVX2 kernels beside NumPy's AVX-512 loops: what OpenBLAS gives an AMD Zen CPU
    "zen": {"OPENBLAS_CORETYPE": "Haswell"},
    "haswell": {"OPENBLAS_CORETYPE": "Haswell", "NPY_DISABLE_CPU_FEATURES": "X86_V4 AVX512_ICL AVX512_SPR",
                "NUMBA_CPU_NAME": "haswell"},
    "sandybridge": {"OPENBLAS_CORETYPE": "Sandybridge",
                    "NPY_DISABLE_CPU_FEATURES": "X86_V3 X86_V4 AVX512_ICL AVX512_SPR", "NUMBA_CPU_NAME": "sandybridge"},
}
#: what each needs of the CPU (/proc/cpuinfo flags): a kernel the CPU lacks would stop on an illegal instruction
NEEDS = {"skylakex": "avx512f", "zen": "avx2", "haswell": "avx2", "sandybridge": "avx"}
ENV_KEYS = ("OPENBLAS_CORETYPE", "NPY_DISABLE_CPU_FEATURES", "NUMBA_CPU_NAME")
SPREAD = Path("results") / "platform_spread.json"


class KernelError(ValueError):
    pass


def _cpu_flags() -> set[str] | None:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("flags"):
                return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return None


def under_kernel(name: str, argv: list[str]) -> None:
    """Run this command again (``python -m rankrepro.cli argv``) under the kernel setting ``name``,
    unless the environment already is it: OpenBLAS and NumPy read it when they load."""
    if name not in KERNELS:
        raise KernelError(f"--kernel {name}: not a kernel setting (one of {', '.join(KERNELS)})")
    flags = _cpu_flags()
    if flags is not None and NEEDS[name] not in flags:
        raise KernelError(f"--kernel {name}: this CPU has no {NEEDS[name].upper()}, which that kernel needs")
    env = {k: v for k, v in os.environ.items() if k not in ENV_KEYS} | KERNELS[name]
    if all(os.environ.get(k) == env.get(k) for k in ENV_KEYS):
        return
    sys.stdout.flush()
    os.execve(sys.executable, [sys.executable, "-m", "rankrepro.cli", *argv], env)


def current_kernel() -> str:
    """The setting of :data:`KERNELS` this process runs under, or a description of its environment."""
    here = {k: os.environ[k] for k in ENV_KEYS if k in os.environ}
    for name, env in KERNELS.items():
        if here == env:
            return name
    return "default" if not here else " ".join(f"{k}={v}" for k, v in sorted(here.items()))


def load(root: Path = Path(".")) -> dict:
    from ..files import read_json

    path = root / SPREAD
    return read_json(path, "platform spread") if path.is_file() else {}


def _current(entry: dict, key: str, root: Path) -> bool:
    """Whether a measurement of cell ``key`` was made against today's committed bytes."""
    from .integrity import file_digest

    paper, artefact, cell = key.split("/", 2)
    path = root / "results" / paper / artefact / "cells" / f"{cell}.parquet"
    return path.is_file() and entry.get("sha256") == file_digest(path)


def current_keys(rec: dict, root: Path = Path(".")) -> set[str]:
    """The cells measured against today's committed bytes (under any kernel)."""
    return {k for m in rec.get("measured", []) for k, v in m.get("cells", {}).items() if _current(v, k, root)}


def spread_of(rec: dict, experiment: str, cell: str, algorithm: str | None, root: Path = Path("."),
              current: set[str] | None = None) -> dict:
    """The spread that applies to a cell: its own, when measured against its committed bytes, else
    the largest of its learner's measured cells in the same artefact (per metric ``{abs, rel}``)."""
    current = current_keys(rec, root) if current is None else current
    key = f"{experiment}/{cell}"
    if key in current:
        return (rec.get("cells") or {}).get(key, {})
    out: dict[str, dict] = {}
    for k, v in (rec.get("cells") or {}).items():
        if k in current and k.startswith(experiment + "/") and (rec.get("learners") or {}).get(k) == algorithm:
            for m, d in v.items():
                o = out.setdefault(m, {"abs": 0.0, "rel": 0.0})
                out[m] = {"abs": max(o["abs"], d["abs"]), "rel": max(o["rel"], d["rel"])}
    return out


def record(checks: list, catalog: dict, root: Path = Path("."), scratch: Path | None = None,
           outcomes=None) -> tuple[int, int]:
    """Merge a verify run's checks (this process's kernel) into ``results/platform_spread.json``:
    every cell measured (identical or not) with the committed bytes it was compared with, each
    moved cell's per-metric differences, and, per artefact with a moved cell, the outcomes that
    change when its record is aggregated again with the recomputed cells (``outcomes(catalog,
    name, moved, root, scratch)``: :func:`rankrepro.records_check.outcome_changes`, which the
    command line passes: aggregating is the top floor's).  Returns (cells measured, cells moved)."""
    from threadpoolctl import threadpool_info

    from ..io import atomic_write
    from .integrity import cell_file, file_digest

    # where rankrepro verify recomputes the cells (pipeline/verify.py's SCRATCH)
    scratch = scratch if scratch is not None else root / "runs" / "verify"
    rec = load(root) or {
        "about": ("How far the same code moves committed cells under another CPU kernel (OpenBLAS core type, NumPy "
                  "SIMD level, numba target), measured by recomputing them under each setting (`make spread`): per "
                  "cell and metric the largest absolute and relative difference from the committed values; per "
                  "artefact the outcomes that change. docs/reproducibility.md, 'The platform spread'."),
        "command": "make spread  (rankrepro verify --kernel NAME --per-learner --record-spread)",
        "kernels": KERNELS, "measured": [], "cells": {}, "learners": {}, "outcomes": {}}
    blas = sorted({f"{i.get('internal_api')} {i.get('version')} {i.get('architecture')}" for i in threadpool_info()
                   if i.get("user_api") == "blas"})
    kernel = current_kernel()
    where = {"kernel": kernel, "machine": platform.platform(), "processor": platform.processor() or platform.machine(),
             "kernel_env": {k: os.environ[k] for k in ENV_KEYS if k in os.environ}, "blas": blas}
    entry = next((m for m in rec["measured"] if all(m.get(k) == v for k, v in where.items())), None)
    if entry is None:
        entry = {**where, "cells": {}}
        rec["measured"].append(entry)
    entry["date"] = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
    moved_by: dict[str, list] = {}
    n_moved = 0
    for c in checks:
        if c.problem:
            continue
        key = f"{c.experiment}/{c.cell}"
        exp = catalog[c.experiment]
        digest = file_digest(cell_file(root, exp, c.cell))
        if any(m.get("cells", {}).get(key, {}).get("sha256", digest) != digest for m in rec["measured"]):
            # the committed cell was made again since: its earlier measurements no longer hold
            for m in rec["measured"]:
                m.get("cells", {}).pop(key, None)
            rec["cells"].pop(key, None)
        found = "identical" if c.identical else ("last bits" if c.verdict == "last bits" else "moved")
        entry["cells"][key] = {"sha256": digest, "found": found}
        rec["learners"][key] = next((x.algorithm for x in exp.all_cells if x.id == c.cell), None)
        if c.identical:
            continue
        cell = rec["cells"].setdefault(key, {})
        for m, (a, r) in c.by_metric.items():
            old = cell.get(m, {"abs": 0.0, "rel": 0.0})
            cell[m] = {"abs": max(old["abs"], a), "rel": max(old["rel"], r)}
        moved_by.setdefault(c.experiment, []).append(c.cell)
        n_moved += 1
    for name in sorted({c.experiment for c in checks}):
        changes = outcomes(catalog, name, moved_by.get(name, []), root, scratch) if outcomes else []
        rec["outcomes"].setdefault(name, {})[kernel] = changes
    entry["cells"] = dict(sorted(entry["cells"].items()))
    for k in ("cells", "learners", "outcomes"):
        rec[k] = dict(sorted(rec[k].items()))
    atomic_write(root / SPREAD, lambda tmp: Path(tmp).write_text(json.dumps(rec, indent=1) + "\n"))
    return sum(c.problem == "" for c in checks), n_moved


def record_section(name: str, results: Path, cells_sha256: dict[str, str]) -> dict | None:
    """A record's ``platform`` section: what ``results/platform_spread.json`` says of this artefact's
    cells, counting only measurements made against the bytes the record names (its
    ``cells_sha256``, cell id -> sha256); None when none of them was measured."""
    path = Path(results) / SPREAD.name
    if not path.is_file():
        return None
    rec = json.loads(path.read_text())
    digests = {f"{name}/{cell}": digest for cell, digest in cells_sha256.items()}
    kernels: dict[str, dict] = {}
    current: set[str] = set()
    for m in rec.get("measured", []):
        mine = {k: v for k, v in m.get("cells", {}).items() if digests.get(k) == v.get("sha256")}
        if mine:
            current |= set(mine)
            got = kernels.setdefault(m["kernel"], {"cells": 0, "identical": 0, "last_bits": 0, "moved": 0})
            got["cells"] += len(mine)
            for v in mine.values():
                got[v["found"].replace(" ", "_")] += 1
    if not kernels:
        return None
    moved = {k.split("/", 2)[2]: {m: d["abs"] for m, d in v.items()} for k, v in (rec.get("cells") or {}).items()
             if k in current}
    changes = {k: v for k, v in (rec.get("outcomes") or {}).get(name, {}).items() if k in kernels and v}
    return {"kernels": dict(sorted(kernels.items())), "moved": dict(sorted(moved.items())),
            "outcome_changes": changes, "depends_on_platform": bool(changes),
            "text": platform_text(kernels, moved, changes)}


#: metrics that count steps of a solver rather than measure a prediction: named apart in the text
COUNTS = {"em_iterations": "EM iterations", "ep_unconverged": "unconverged EP runs"}


def platform_text(kernels: dict, moved: dict, changes: dict) -> str:
    n = max(k["cells"] for k in kernels.values())
    names = ", ".join(sorted(kernels))
    if not moved:
        head = f"{n} cell(s) recomputed under {names}: every value bit-identical"
    else:
        # a count (EM iterations, unconverged EP runs) is named apart: its move is not a metric's
        values = [(a, c, m) for c, ms in moved.items() for m, a in ms.items() if m not in COUNTS]
        counts = [(a, c, m) for c, ms in moved.items() for m, a in ms.items() if m in COUNTS]
        head = f"{n} cell(s) recomputed under {names}: {len(moved)} move(s)"
        if values:
            worst = max(values)
            head += f", the largest {worst[0]:.2g} ({worst[2]} of {worst[1]})"
        for m in sorted({m for _, _, m in counts}):
            head += f"; {COUNTS[m]} by up to {max(a for a, _, k in counts if k == m):g}"
    if changes:
        return head + "; DEPENDS ON THE PLATFORM: " + "; ".join(f"under {k}: {', '.join(v[:3])}" for k, v in changes.items())
    return head + "; no verdict, claim or diagnosis label changes"
