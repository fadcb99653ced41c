"""What the workflow was asked to do, read from Snakemake's own command line at parse time
(Snakemake tells the Snakefile whether it is a dry run only once the executor exists, after
the rules are read): a run that only plans or describes (``-n``/``--dry-run``, ``--report``,
``--lint``, ``--summary``, ``--list-*``, ``--dag``) writes nothing under results/ or figures/."""

from __future__ import annotations

import logging

#: the options that only plan, describe or check: (attribute of Snakemake's parsed arguments, name)
_PLANNING = (("dryrun", "dry run"), ("report", "--report"), ("lint", "--lint"), ("summary", "--summary"),
             ("detailed_summary", "--detailed-summary"), ("list_rules", "--list-rules"),
             ("list_target_rules", "--list-target-rules"), ("dag", "--dag"), ("rulegraph", "--rulegraph"),
             ("filegraph", "--filegraph"), ("d3dag", "--d3dag"), ("list_changes", "--list-changes"))


def planning_only(argv: list[str]) -> str | None:
    """The first option of ``argv`` (Snakemake's arguments) that makes the run only plan or
    describe, named ("dry run", "--report", ...), or None for a run that executes jobs."""
    try:
        from snakemake.cli import get_argument_parser

        ns, _ = get_argument_parser().parse_known_args(argv)
    except (Exception, SystemExit):  # noqa: BLE001 - not Snakemake's command line: read the flags by hand
        ns = None
    for attr, name in _PLANNING:
        v = getattr(ns, attr, None) if ns is not None else None
        if v not in (None, False, []):
            return name
    if ns is None and any(a in ("-n", "--dry-run", "--dryrun") or (a.startswith("-") and not a.startswith("--")
                                                                  and "n" in a[1:2]) for a in argv):
        return "dry run"
    return None


class MetadataNotes(logging.Filter):
    """Snakemake's notes on the metadata it keeps in .snakemake/ (not committed): in a fresh clone
    every committed output lacks it by design, and reruns here follow each cell's fingerprint
    (pipeline/freshness.py), not that metadata.  Dropped: "N jobs have missing provenance/metadata
    ..."; and ``--report``'s "Missing metadata for file X" (one per committed file, ~2,700 in a
    fresh clone) becomes one note, the first time."""

    def __init__(self):
        super().__init__()
        self.said = False

    def filter(self, record: logging.LogRecord) -> bool:
        msg = str(record.msg)
        if "have missing provenance/metadata" in msg:
            return False
        if msg.startswith("Missing metadata for file"):
            if self.said:
                return False
            self.said = True
            record.msg, record.args = ("Snakemake has no run records (.snakemake/, not committed) for the files a "
                                       "fresh clone holds: its report lists them without run times (one note "
                                       "instead of one per file)"), ()
        return True
