"""Long cells first: the order in which the workflow starts its cell jobs.

Snakemake starts the ready job of highest ``priority`` first.  A cell's priority is its
expected work in seconds, as the last whole-pipeline benchmark measured it at paper scale
(``scripts/bench_pipeline.py`` writes them to :data:`SECONDS_FILE`), plus the work of the
cells that wait for it (a sensitivity cell taking over its trials,
:func:`~rankrepro.pipeline.cells.reused_trials`): the longest chains start first and the
short cells fill the cores at the end, instead of one long cell running alone while the other
cores idle.  A cell never measured (a new config) counts as the median cell.  Only the order
changes: every cell computes the same numbers whatever the order.
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Iterable

from ..files import write_text

#: measured seconds of work per cell at paper scale, "paper/artefact/cell" -> seconds
SECONDS_FILE = Path(__file__).resolve().parents[3] / "rules" / "cell_seconds.json"


def load_seconds(path: str | Path = SECONDS_FILE) -> dict[str, float]:
    """The measured seconds per cell (empty when the file is absent or unreadable: every
    cell then has the same priority, and Snakemake's own order applies)."""
    try:
        data = json.loads(Path(path).read_text())
        return {str(k): float(v) for k, v in data["seconds"].items()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return {}


def _estimate(seconds: dict[str, float], key: str) -> float:
    if key in seconds:
        return seconds[key]
    return statistics.median(seconds.values()) if seconds else 1.0


def _waiting(exp) -> dict[str, list[str]]:
    """Main cell id -> the cells that take over its trials, found once per experiment (the
    workflow asks for every cell's priority)."""
    found = exp.__dict__.get("_waiting_cells")
    if found is None:
        from .cells import reread_of, reused_trials

        found = {}
        for c in exp.sensitivity_cells:
            hit = reused_trials(exp, c)
            base = hit[0] if hit is not None else reread_of(exp, c)
            if base is not None:
                found.setdefault(base, []).append(c.id)
        exp.__dict__["_waiting_cells"] = found
    return found


def cell_priority(exp, cell_id: str, seconds: dict[str, float]) -> float:
    """The cell's expected seconds plus those of the cells waiting for it."""
    own = _estimate(seconds, f"{exp.name}/{cell_id}")
    after = sum(_estimate(seconds, f"{exp.name}/{c}") for c in _waiting(exp).get(cell_id, []))
    return round(own + after, 3)


def artefact_priority(exp, seconds: dict[str, float]) -> float:
    """All cells of an artefact in one job (``batch_cells``): their seconds summed."""
    return round(sum(_estimate(seconds, f"{exp.name}/{c.id}") for c in exp.all_cells), 3)


def write_seconds(jobs: Iterable[dict], path: str | Path = SECONDS_FILE, note: str = "") -> int:
    """Keep the work seconds of the cell jobs of a paper-scale run (records of
    :mod:`rankrepro.timing`; a pack's job, each of its cells); returns how many.  Cells not in ``jobs`` keep their old value."""
    seconds = load_seconds(path)
    n = 0
    for j in jobs:
        if j.get("rule") == "run_cell" and j.get("cell"):
            seconds[f"{j['experiment']}/{j['cell']}"] = round(float(j["work_s"]), 2)
            n += 1
        elif j.get("rule") == "run_cells":  # a pack: each cell computed in it, its own seconds
            for c in j.get("cells") or []:
                if not c.get("kept"):
                    seconds[f"{j['experiment']}/{c['cell']}"] = round(float(c["work_s"]), 2)
                    n += 1
    text = json.dumps({"about": "seconds of work per cell job at paper scale, from scripts/bench_pipeline.py; "
                                "read by the workflow to start long cells first (rankrepro.pipeline.schedule)"
                                + (f"; {note}" if note else ""),
                       "seconds": dict(sorted(seconds.items()))}, indent=1)
    write_text(path, text + "\n")
    return n


#: a cell measured at most this many seconds of work joins a pack (:func:`cell_packs`)
PACK_CELL_S = 15.0
#: a pack stops growing once its cells' seconds reach this (long enough that a job's fixed
#: cost -- interpreter, imports, the experiment read, the kernels loaded: about 1.4 CPU s on an
#: idle machine -- is a few percent of it, short enough to keep both cores busy to the end)
PACK_S = 40.0
#: and holds at most this many cells (the log of a pack stays readable)
PACK_CELLS = 40


def cell_packs(exp, seconds: dict[str, float], copies: Iterable[str] = (), cell_s: float = PACK_CELL_S,
               pack_s: float = PACK_S, max_cells: int = PACK_CELLS) -> list[list[str]]:
    """The cells of ``exp`` the workflow runs several to a job (one process: the start-up is
    paid once), as lists of cell ids in the experiment's order.  A cell joins a pack when the
    last paper-scale benchmark measured it (``seconds``) at most ``cell_s`` seconds of work;
    consecutive such cells fill a pack until their seconds reach ``pack_s`` or it holds
    ``max_cells`` cells.  A cell whose fits other cells read
    (:func:`~rankrepro.pipeline.cells.reread_of`) joins a pack with all of its readers, right
    after it, when every one of them is measured short enough: the pack's job hands each
    reader its frame from the same fits.  A cell that takes over its main cell's trials
    (:func:`~rankrepro.pipeline.cells.reused_trials`) and the cell it takes them from keep a
    job of their own (their jobs hand results to each other), as do readers whose cell does
    not join a pack; the cells taken from a twin (``copies``: they compute nothing) are
    packed apart from those that compute, so that no pack waits for another pack of its own
    experiment that waits for it.  A cell never measured (a new config) keeps its own job,
    as does a pack of one.  Which cells share a job changes how many processes run, never a
    number: each cell is computed as its own job computes it, and its results and fingerprint
    file are its own."""
    from .cells import reread_of, reused_trials

    copies = set(copies)
    waiting = _waiting(exp)
    packs: list[list[str]] = []
    filling: dict[bool, list[str]] = {False: [], True: []}  # computing cells, copies of a twin
    total = {False: 0.0, True: 0.0}

    def close(kind: bool) -> None:
        if len(filling[kind]) > 1:
            packs.append(filling[kind])
        filling[kind], total[kind] = [], 0.0

    def short(cid: str) -> bool:
        own = seconds.get(f"{exp.name}/{cid}")
        return own is not None and own <= cell_s

    for c in exp.all_cells:
        if not short(c.id) or reused_trials(exp, c) is not None or reread_of(exp, c) is not None:
            continue
        group = [c.id]
        readers = waiting.get(c.id, [])
        if readers:
            # packed with all its readers, or not at all (a cell taking over its trials, a
            # reader not measured or long, a copy that computes no fits)
            if (c.id in copies or any(reread_of(exp, exp.cell(r)) != c.id or not short(r) for r in readers)):
                continue
            group += readers
        kind = c.id in copies
        if filling[kind] and len(filling[kind]) + len(group) > max_cells:
            close(kind)
        filling[kind].extend(group)
        total[kind] += sum(seconds[f"{exp.name}/{g}"] for g in group)
        if total[kind] >= pack_s or len(filling[kind]) >= max_cells:
            close(kind)
    close(False)
    close(True)
    return packs


def pack_priority(exp, cells: list[str], seconds: dict[str, float]) -> float:
    """A pack's expected seconds: its cells' summed."""
    return round(sum(_estimate(seconds, f"{exp.name}/{c}") for c in cells), 3)
