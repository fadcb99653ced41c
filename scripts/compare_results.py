"""Compare two result trees under the rule for a change that moves numbers (issue 31;
docs/reproducibility.md): per artefact the largest relative change and the largest change as a
share of the cell's 95% interval half-width, over every metric of every cell (timing metrics
apart), and any change of a verdict, claim, diagnosis or sensitivity flip; exits 1 when a
change breaks the rule.  With ``--spread [FILE]`` a value may also move within its cell's
platform spread (issue 60: results/platform_spread.json, or FILE); ``--measure-spread OUT``
measures one from trees the old code computed under several CPU kernels.

    git worktree add /tmp/main-results main
    python scripts/compare_results.py /tmp/main-results/results results [--different-path 'yu2006/tables/cgpor-*']
    python scripts/compare_results.py OLD NEW --spread spread.json
    python scripts/compare_results.py DEFAULT HASWELL --also SANDYBRIDGE --measure-spread spread.json
"""
import sys

from rankrepro.pipeline.compare import main

if __name__ == "__main__":
    sys.exit(main())
