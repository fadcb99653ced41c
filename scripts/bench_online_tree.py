"""The online rows of ``make bench`` (scripts/bench.py's online_workload) on the learners of
another source tree, against this checkout's tight loops (algorithms/reference_tight): the
'before' of a change to the learners, measured by the same harness in the same session.

    git worktree add /tmp/before <commit>
    python scripts/bench_online_tree.py /tmp/before/src [--rounds 200000] [--repeat 7]
"""
from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("src", help="the other tree's src folder (holding rankrepro/)")
    ap.add_argument("--rounds", type=int, default=200_000)
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()
    src = str(Path(args.src).resolve())
    sys.path.insert(0, src)
    import rankrepro.algorithms as algorithms

    if not algorithms.__file__.startswith(src):
        sys.exit(f"rankrepro imported from {algorithms.__file__}, not from {src}")
    # this checkout's tight loops, put into the other tree's package
    name = "rankrepro.algorithms.reference_tight"
    spec = importlib.util.spec_from_file_location(name, HERE.parent / "src/rankrepro/algorithms/reference_tight.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    algorithms.reference_tight = mod
    sys.path.insert(0, str(HERE))
    import bench

    bench.online_workload(args.rounds, args.repeat)


if __name__ == "__main__":
    main()
