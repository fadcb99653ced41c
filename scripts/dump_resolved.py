"""Dump every experiment's resolved config and cell fingerprints, to check that a config
refactor changes nothing that runs.

    PYTHONPATH=src python scripts/dump_resolved.py OUT_DIR [CONFIG_DIR]

writes OUT_DIR/<scale>/<paper>/<artefact>.yaml (``OmegaConf.to_yaml`` of the loaded
experiment, as ``results/<paper>/<artefact>.config.yaml``) and
OUT_DIR/<scale>/<paper>/<artefact>.cells (one line per main and sensitivity cell: id and
fingerprint) for the scales paper and smoke.  Run it with two checkouts' code and configs
and compare the folders with ``diff -r``.
"""

from __future__ import annotations

import sys
from pathlib import Path


def dump(out: Path, config_dir: Path | None = None) -> int:
    from rankrepro.config_files import find_config_dir, list_experiments
    from rankrepro.pipeline.catalog import load_experiment
    from rankrepro.pipeline.cells import cell_fingerprint

    root = Path(config_dir).resolve() if config_dir else find_config_dir()
    n = 0
    for scale in ("paper", "smoke"):
        for name in list_experiments(root):
            exp = load_experiment(name, scale, config_dir=root)
            base = out / scale / name
            base.parent.mkdir(parents=True, exist_ok=True)
            base.with_suffix(".yaml").write_text(exp.to_yaml())
            lines = []
            for c in exp.all_cells:
                ex, mc = exp.variant_of(c)
                lines.append(f"{c.id} {cell_fingerprint(ex, mc)}")
            base.with_suffix(".cells").write_text("\n".join(lines) + "\n")
            n += 1
    return n


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    print(dump(Path(sys.argv[1]), Path(sys.argv[2]) if len(sys.argv) == 3 else None), "experiment x scale dumped")
