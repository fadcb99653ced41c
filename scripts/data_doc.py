"""Regenerate docs/data.md's table of the data sets from the registry
(rankrepro.data.doc).

    python scripts/data_doc.py            # rewrite docs/data.md
    python scripts/data_doc.py --check    # exit 1 when it is out of date
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rankrepro.data.doc import fill

ROOT = Path(__file__).resolve().parents[1]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--doc", default=str(ROOT / "docs" / "data.md"))
    ap.add_argument("--check", action="store_true", help="do not write: exit 1 when the page differs")
    args = ap.parse_args(argv)
    doc = Path(args.doc)
    old = doc.read_text()
    new = fill(old)
    if args.check:
        return int(new != old)
    doc.write_text(new)
    return 0


if __name__ == "__main__":
    sys.exit(main())
