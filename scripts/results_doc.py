"""Render docs/results.md from its template (docs/results.md.j2) and the records
(results/*/*.json and the summary tables beside them); see rankrepro.report.results_doc.

    python scripts/results_doc.py            # rewrite docs/results.md
    python scripts/results_doc.py --check    # exit 1, with a diff, when it is out of date
"""
from __future__ import annotations

import argparse
import difflib
import sys
from pathlib import Path

from rankrepro.report.results_doc import render

ROOT = Path(__file__).resolve().parents[1]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--doc", default=str(ROOT / "docs" / "results.md"))
    ap.add_argument("--template", default=str(ROOT / "docs" / "results.md.j2"))
    ap.add_argument("--results", default=str(ROOT / "results"))
    ap.add_argument("--check", action="store_true", help="do not write: exit 1 when the page differs")
    args = ap.parse_args(argv)
    doc = Path(args.doc)
    old = doc.read_text() if doc.is_file() else ""
    new = render(args.results, args.template)
    if args.check:
        if new != old:
            sys.stdout.writelines(difflib.unified_diff(old.splitlines(True), new.splitlines(True),
                                                       str(doc), str(doc) + " (from the records)"))
            return 1
        return 0
    if new != old:
        doc.write_text(new)
        print(f"{doc}: updated")
    return 0


if __name__ == "__main__":
    sys.exit(main())
