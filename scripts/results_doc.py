"""Render docs/results.md from its template (docs/results.md.j2) and the records
(results/*/*.json and the summary tables beside them), the README's status table, and the
replication article of each paper (results/<paper>/article.md, article.html, metadata.yaml);
see rankrepro.report.results_doc and rankrepro.report.article.

    python scripts/results_doc.py            # rewrite docs/results.md, the README's status table, the articles
    python scripts/results_doc.py --check    # exit 1, with a diff, when any is out of date
"""
from __future__ import annotations

import argparse
import difflib
import os
import sys
from pathlib import Path

from rankrepro.report.article import outputs as article_outputs
from rankrepro.checkout import OutsideCheckout, refuse_outside
from rankrepro.files import DamagedFile
from rankrepro.report.results_doc import DocError, readme_status, render

ROOT = Path(__file__).resolve().parents[1]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--doc", default=str(ROOT / "docs" / "results.md"))
    ap.add_argument("--template", default=str(ROOT / "docs" / "results.md.j2"))
    ap.add_argument("--results", default=str(ROOT / "results"))
    ap.add_argument("--readme", default=str(ROOT / "README.md"))
    ap.add_argument("--citation", default=str(ROOT / "CITATION.cff"), help="the original references (articles)")
    ap.add_argument("--no-articles", action="store_true", help="leave the per-paper articles alone")
    ap.add_argument("--check", action="store_true", help="do not write: exit 1 when the page differs")
    args = ap.parse_args(argv)
    try:
        return _write(args)
    except (DocError, OutsideCheckout, DamagedFile, OSError) as e:  # a missing or outside record, a full disk: one line
        print(f"results_doc.py: error: {e}", file=sys.stderr)
        return 2


def _record_problems(results: Path) -> list[str]:
    """What is wrong with the artefact records rendered (their seal, their cells' bytes)."""
    from rankrepro.files import read_json
    from rankrepro.pipeline.integrity import record_problems

    out = []
    for p in sorted(results.glob("*/*.json")):
        rec = read_json(p, "record")
        if isinstance(rec, dict) and "artefact" in rec and "paper" in rec:
            out += record_problems(p, rec)
    return out


def _write(args) -> int:
    # the records rendered are the checkout's (results/ or runs/<scale>/results/): a folder
    # elsewhere is refused before anything is read
    refuse_outside(args.results, ROOT, "--results (the records rendered)")
    # and read where it leads (a link from elsewhere into results/: the figures are beside the records)
    args.results = os.path.realpath(args.results)
    problems = _record_problems(Path(args.results))
    if problems:  # an edited record is never rendered into a page
        raise DocError(f"{len(problems)} record(s) refused, nothing written: {problems[0]}"
                       + (f" (and {len(problems) - 1} more)" if len(problems) > 1 else "")
                       + "; `rankrepro verify --records` says more, the workflow aggregates them again")
    stale = 0
    pages = [(Path(args.doc), lambda old: render(args.results, args.template)),
             (Path(args.readme), lambda old: readme_status(old, args.results))]
    if not args.no_articles:
        # the replication articles, one per paper, from the same records (rankrepro.report.article)
        pages += [(p, lambda old, text=text: text) for p, text in article_outputs(args.results, args.citation).items()]
    for path, make in pages:
        old = path.read_text() if path.is_file() else ""
        new = make(old)
        if args.check:
            if new != old:
                sys.stdout.writelines(difflib.unified_diff(old.splitlines(True), new.splitlines(True),
                                                           str(path), str(path) + " (from the records)"))
                stale = 1
        elif new != old:
            path.write_text(new)
            print(f"{path}: updated")
    return stale


if __name__ == "__main__":
    sys.exit(main())
