"""The seeds of every trial (kept apart from the runner: every cell's code fingerprint
includes this module, and only this, of the pipeline).

Trial i of an experiment with root seed s draws its data from
``SeedSequence(s, spawn_key=(i, 0))`` -- the same stream for every cell, so algorithms are
compared on common random numbers -- and its algorithm randomness from
``SeedSequence(s, spawn_key=(i, 1, crc32(cell id)))``.
"""

from __future__ import annotations

import zlib

import numpy as np


def cell_hash(cell_id: str) -> int:
    return zlib.crc32(cell_id.encode("utf-8"))


def trial_seeds(root_seed: int, trial: int, cell_id: str) -> tuple[np.random.SeedSequence, np.random.SeedSequence]:
    data = np.random.SeedSequence(root_seed, spawn_key=(trial, 0))
    algo = np.random.SeedSequence(root_seed, spawn_key=(trial, 1, cell_hash(cell_id)))
    return data, algo
