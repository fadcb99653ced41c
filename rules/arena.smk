# The arena's comparisons (config/arena/<family>.yaml): each family's learners compared over its
# experiments' data sets (rankrepro.report.arena), from the cells of its member experiments
# (the families and input functions: rules/common.smk).


rule arena_comparison:
    wildcard_constraints:
        family="|".join(f for f in ARENAS if f not in FOLDED) or "(?!)",
    input:
        cells=arena_cells,
        definition="config/arena/{family}.yaml",
        resolved=lambda w: [out(f"results/{n}.config.yaml") for n in ARENAS[w.family].experiments],
    output:
        json=out("results/arena/comparison/{family}.json"),
        md=out("results/arena/comparison/{family}.md"),
        csv=out("results/arena/comparison/{family}.csv"),
        png=out("figures/arena/comparison/cd_{family}.png"),
        pdf=out("figures/arena/comparison/cd_{family}.pdf"),
    log:
        out("logs/arena/comparison_{family}.log"),
    params:
        family="{family}",
        scale=SCALE,
        config_dir=CONFIG_DIR,
    conda:
        "../environment.yml"
    script:
        "../scripts/arena.py"
