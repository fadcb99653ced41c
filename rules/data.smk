# Data: fetch and verify (data/raw/<dataset>/MANIFEST.json), then preprocess once
# (data/processed/<dataset>/data.npz).  Sources: data/raw, $RANKREPRO_DATA_MIRROR, home page.


rule data:
    input:
        data_outputs(),
        "data/processed/kept_arrays.json",
        "data/processed/compiled_kernels.json",
        "data/processed/smoke_catalog.json",


# the arrays some builders keep beside the processed data (the coactive movie setup, the
# collaborative GP's kernel: ~15 s), built here rather than by the first cell job needing them
rule keep_arrays:
    input:
        kept_array_inputs,
    output:
        "data/processed/kept_arrays.json",
    params:
        builds=kept_array_params,
        data=kept_array_data,
        scale=SCALE,
        config_dir=CONFIG_DIR,
    log:
        "logs/data/kept_arrays.log",
    conda:
        "../environment.yml"
    script:
        "../scripts/keep_arrays.py"


# the Numba kernels compiled into Numba's cache (beside their modules), here rather than by the
# first cell jobs of a new clone (~15 s over many jobs); again when the package's code changes
rule compile_kernels:
    input:
        kernel_sources,
    output:
        "data/processed/compiled_kernels.json",
    log:
        "logs/data/compiled_kernels.log",
    conda:
        "../environment.yml"
    script:
        "../scripts/compile_kernels.py"


# the smoke scale's catalog composed, checked and kept in the catalog cache, here rather than by
# `make smoke`'s first start (~10 s); again when a config file or the package's code changes
# (the cache key, a parameter)
rule keep_smoke_catalog:
    output:
        "data/processed/smoke_catalog.json",
    params:
        key=lambda w: catalog_key(Path(CONFIG_DIR), "smoke"),
        config_dir=CONFIG_DIR,
    log:
        "logs/data/smoke_catalog.log",
    conda:
        "../environment.yml"
    script:
        "../scripts/keep_catalog.py"


rule fetch_data:
    output:
        "data/raw/{dataset}/MANIFEST.json",
    log:
        "logs/data/{dataset}.fetch.log",
    conda:
        "../environment.yml"
    script:
        "../scripts/fetch_data.py"


rule preprocess_data:
    input:
        "data/raw/{dataset}/MANIFEST.json",
    output:
        npz="data/processed/{dataset}/data.npz",
        manifest="data/processed/{dataset}/manifest.json",
    params:
        options=preprocess_options,
    log:
        "logs/data/{dataset}.preprocess.log",
    conda:
        "../environment.yml"
    script:
        "../scripts/preprocess_data.py"
