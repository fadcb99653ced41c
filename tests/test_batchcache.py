"""What `make smoke`'s paper jobs reuse (pipeline/batchcache.py), on two hand-made artefacts of
one claim family whose cell fingerprints the test sets: which artefacts :func:`plan` hands to
the paper's job, and which rows :func:`reusable_frames` takes from an existing cells file.
(End to end through Snakemake: tests/test_smoke_loop.py.)"""
import json
from types import SimpleNamespace

import pandas as pd
import pytest

from rankrepro.pipeline import batchcache


def _exp(name, cells):
    paper, artefact = name.split("/")
    return SimpleNamespace(name=name, paper=paper, artefact=artefact, figure_file=None,
                           all_cells=[SimpleNamespace(id=c) for c in cells], cfg=None)


@pytest.fixture
def world(tmp_path, monkeypatch):
    prints = {"p/a": {"x": "fx", "y": "fy"}, "p/b": {"z": "fz"}}
    catalog = {"p/a": _exp("p/a", ["x", "y"]), "p/b": _exp("p/b", ["z"])}
    monkeypatch.setattr(batchcache, "cell_prints", lambda exp: dict(prints[exp.name]))
    monkeypatch.setattr(batchcache, "config_fingerprint", lambda exp: "cfg-" + exp.name)
    monkeypatch.setattr(batchcache, "claim_family", lambda exp: "p")
    claims = {"p/a": [["p/a:c1", 0.25]], "p/b": [["p/b:c2", 0.5]]}

    def make(name):
        """What a paper job leaves: the cells file and its index, the record, the index's record part."""
        exp = catalog[name]
        base = tmp_path / "results" / exp.paper / exp.artefact
        base.mkdir(parents=True, exist_ok=True)
        f = base / "all_cells.parquet"
        pd.DataFrame({"cell": list(prints[name]), "v": range(len(prints[name]))}).to_parquet(f, index=False)
        batchcache.write_cells_index(f, "", prints[name])
        for ext in (".csv", ".md"):
            base.with_suffix(ext).write_text("x")
        base.with_suffix(".json").write_text(json.dumps({"config_fingerprint": "cfg-" + name}))
        other = "p/b" if name == "p/a" else "p/a"
        batchcache.write_record_index(f, claims[name], {other: claims[other]})
        return f

    return SimpleNamespace(root=tmp_path, catalog=catalog, prints=prints, make=make, claims=claims)


def plan(w):
    return batchcache.plan(w.catalog, {"p/a": "", "p/b": ""}, root=w.root)


def test_nothing_made_yet_every_artefact_runs_its_cells(world):
    assert plan(world) == {"p/a": "cells", "p/b": "cells"}


def test_after_a_run_nothing_is_planned(world):
    world.make("p/a"), world.make("p/b")
    assert plan(world) == {}


def test_a_changed_cell_runs_its_artefact_and_leaves_the_sibling_pending(world):
    world.make("p/a"), world.make("p/b")
    world.prints["p/a"]["y"] = "fy2"  # an edit of cell y (config or code)
    assert plan(world) == {"p/a": "cells", "p/b": "pending"}


def test_a_new_cell_other_data_or_a_replaced_file_run_the_cells(world):
    fa, _ = world.make("p/a"), world.make("p/b")
    world.prints["p/a"]["w"] = "fw"
    assert plan(world)["p/a"] == "cells"
    del world.prints["p/a"]["w"]
    assert batchcache.plan(world.catalog, {"p/a": "other-data", "p/b": ""}, root=world.root)["p/a"] == "cells"
    pd.DataFrame({"cell": ["x", "y"], "v": [9, 9]}).to_parquet(fa, index=False)  # not the indexed bytes
    assert plan(world)["p/a"] == "cells"


def test_a_record_from_other_claims_or_config_is_made_again(world):
    world.make("p/a"), world.make("p/b")
    idx = batchcache.index_path(world.root / "results/p/b/all_cells.parquet")
    d = json.loads(idx.read_text())
    d["family"] = {"p/a": [["p/a:c1", 0.3]]}  # a's p-values when b's record was made were other
    idx.write_text(json.dumps(d))
    assert plan(world) == {"p/b": "record"}
    world.make("p/b")
    (world.root / "results/p/a.json").write_text(json.dumps({"config_fingerprint": "older"}))
    assert plan(world) == {"p/a": "record"}
    (world.root / "results/p/a.md").unlink()
    assert plan(world) == {"p/a": "record"}


def test_reusable_frames_takes_the_unchanged_cells_only(world):
    f = world.make("p/a")
    prints = {"x": "fx", "y": "fy-new", "w": "fw"}
    got = batchcache.reusable_frames(world.catalog["p/a"], f, "", prints)
    assert list(got) == ["x"]
    pd.testing.assert_frame_equal(got["x"], pd.DataFrame({"cell": ["x"], "v": [0]}))
    assert batchcache.reusable_frames(world.catalog["p/a"], f, "other-data", prints) == {}
    pd.DataFrame({"cell": ["x", "y"], "v": [5, 6]}).to_parquet(f, index=False)  # replaced: its index no longer holds
    assert batchcache.reusable_frames(world.catalog["p/a"], f, "", prints) == {}
