# The replication report: every artefact, paper beside reproduction, claims, provenance.


rule report:
    input:
        records=records(),
        figures=figures(),
        # the arena's comparisons (rules/arena.smk): their records and critical-difference diagrams
        comparisons=arena_outputs(),
    output:
        report(
            out("results/report/index.html"),
            caption="report/replication.rst",
            category="Replication report",
            labels={"file": "index.html"},
        ),
    log:
        out("logs/report.log"),
    params:
        scale=SCALE,
        # the reproduced records kept although their data are absent here, and why
        kept={n: why for n, why in KEPT.items() if "could not be rerun" in why},
    conda:
        "../environment.yml"
    script:
        "../scripts/report.py"
