"""Command line: ``rankrepro data-status | fetch NAME... | preprocess NAME... | experiments``."""

from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="rankrepro", description=__doc__)
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("data-status", help="each data set: verified, in the mirror, downloadable, absent or replaced")
    s.add_argument("--no-probe", action="store_true", help="do not try to reach home pages")
    f = sub.add_parser("fetch", help="fetch and verify data sets into data/raw/")
    f.add_argument("names", nargs="+")
    p = sub.add_parser("preprocess", help="build data/processed/<name>/data.npz")
    p.add_argument("names", nargs="+")
    sub.add_parser("experiments", help="list the experiment catalog")
    args = ap.parse_args(argv)

    from .data.fetch import ChecksumError, DataUnavailable, fetch, status_table

    if args.cmd == "data-status":
        print(status_table(probe=not args.no_probe))
    elif args.cmd == "fetch":
        rc = 0
        for n in args.names:
            try:
                print(fetch(n))
            except (DataUnavailable, ChecksumError, KeyError) as e:
                print(f"error: {e}", file=sys.stderr)
                rc = 1
        return rc
    elif args.cmd == "preprocess":
        from .data.preprocess import preprocess

        for n in args.names:
            print(preprocess(n))
    elif args.cmd == "experiments":
        from .pipeline.catalog import load_catalog

        for name, e in load_catalog("paper").items():
            print(f"{name:32s} {len(e.cells):3d} cells  {e.n_trials} trials  {e.cfg.dataset.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
