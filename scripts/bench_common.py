"""What every benchmark record of scripts/bench*.py carries: the date, the commit and the machine
(platform, CPUs, caches), and the machine's load average (the machine may be shared)."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: the folder of the benchmark records (JSON), read by scripts/bench_page.py
RECORDS = ROOT / "docs" / "bench"


def commit() -> str:
    """HEAD's short hash, "+dirty" when a tracked file is modified."""
    try:
        h = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                           check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                               capture_output=True, text=True).stdout.strip()
        return h + ("+dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def machine() -> dict:
    caches = {}
    base = Path("/sys/devices/system/cpu/cpu0/cache")
    for d in sorted(base.glob("index*")) if base.is_dir() else []:
        try:
            level, kind = (d / "level").read_text().strip(), (d / "type").read_text().strip()
            if kind != "Instruction":
                caches[f"L{level}"] = (d / "size").read_text().strip()
        except OSError:
            pass
    model = ""
    try:
        model = next((ln.split(":", 1)[1].strip() for ln in Path("/proc/cpuinfo").read_text().splitlines()
                      if ln.startswith("model name")), "")
    except OSError:
        pass
    mem = None
    try:
        mem = round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1)
    except (ValueError, OSError):
        pass
    return {"platform": platform.platform(), "cpu_count": os.cpu_count(), "cpu": model, "caches": caches,
            "memory_gb": mem, "python": platform.python_version()}


def machine_line(m: dict) -> str:
    return f"{m['platform']}, {m['cpu_count']} CPUs"


def stamp() -> dict:
    """date (UTC), commit, machine (one line) and its details, load average now."""
    m = machine()
    return {"date": time.strftime("%Y-%m-%d", time.gmtime()), "commit": commit(), "machine": machine_line(m),
            "machine_detail": m, "load_average_start": [round(v, 2) for v in os.getloadavg()]}


def write_record(name: str, record: dict, folder: Path = RECORDS) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(json.dumps(record, indent=1) + "\n")
    return path
