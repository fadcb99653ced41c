"""A forged data.npz with its manifest's sum updated is not used (issue 58, item 5): the manifest
is sealed under the user's secret by preprocessing; one without a seal that verifies is checked
once against the arrays the raw files give."""
from __future__ import annotations

import hashlib
import io
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from rankrepro.data.fetch import Paths
from rankrepro.data.preprocess import preprocess
from rankrepro.data.processed_check import ProcessedDataRefused, STAMPS, check_processed
from rankrepro.data.processed_seal import SEAL

ROOT = Path(__file__).resolve().parents[1]
NAME = "cystic-fibrosis"


@pytest.fixture
def checkout(tmp_path, monkeypatch):
    src = ROOT / "data/raw" / NAME
    if not (src / "MANIFEST.json").is_file():
        pytest.skip(f"{src} is not fetched here")
    monkeypatch.setenv("RANKREPRO_CACHE_DIR", str(tmp_path / "cache"))
    shutil.copytree(src, tmp_path / "data/raw" / NAME)
    out = preprocess(NAME, paths=Paths.under(tmp_path / "data"), progress=lambda m: None)
    assert (out.parent / SEAL).is_file()
    return tmp_path, out


def test_the_preprocessed_file_is_used(checkout):
    root, npz = checkout
    assert check_processed(npz, root=root) == npz


def test_a_forged_npz_with_its_manifest_sum_updated_is_refused(checkout):
    root, npz = checkout
    arrays = dict(np.load(npz, allow_pickle=False))
    k = next(k for k, v in arrays.items() if v.dtype.kind in "iuf" and v.size)
    arrays[k] = arrays[k].copy()
    arrays[k].flat[0] = arrays[k].flat[0] + 1
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    npz.write_bytes(buf.getvalue())
    manifest = npz.parent / "manifest.json"
    m = json.loads(manifest.read_text())
    m["sha256"] = hashlib.sha256(buf.getvalue()).hexdigest()
    manifest.write_text(json.dumps(m, indent=2))
    (npz.parent / STAMPS).unlink(missing_ok=True)
    with pytest.raises(ProcessedDataRefused, match=f"not what data/raw/{NAME} gives: its array '{k}'"):
        check_processed(npz, root=root)


def test_a_genuine_npz_without_a_seal_is_checked_once_and_sealed(checkout):
    root, npz = checkout
    (npz.parent / SEAL).unlink()
    assert check_processed(npz, root=root) == npz
    assert (npz.parent / SEAL).is_file()
