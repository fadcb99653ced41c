"""The pipeline below the entry points: the catalog (each experiment composed with Hydra,
checked, its sweep expanded into cells, written as a resolved config the jobs read), seeding
and the trial runner, fingerprints and freshness (reruns decided by them), verification."""
