"""Loads that do not end (issue 30, item 5): a YAML alias bomb, a recursive alias, a file of
runaway depth or size, anywhere under config/, stops the load at once with a ConfigError
naming the file and the key, instead of hanging while OmegaConf expands it."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from test_config_names import _add, config_copy, experiment_text  # noqa: F401 - fixture


def _bomb(indent: str, levels: int = 9) -> str:
    """Anchors a0..a8, each a list of nine of the one before: 9**9 strings once expanded."""
    lines = [f'{indent}- &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    lines += [f"{indent}- &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


def _load_in_subprocess(config_dir, name, timeout=120):
    """load_experiment in a child process, with a deadline (a hang is a failure, not a stall)."""
    code = textwrap.dedent(f"""
        import json
        from rankrepro.pipeline.catalog import load_experiment
        from rankrepro.pipeline.config_errors import ConfigError
        try:
            load_experiment({name!r}, "smoke", config_dir={str(config_dir)!r})
            print(json.dumps({{"loaded": True}}))
        except ConfigError as e:
            print(json.dumps({{"key": e.key, "experiment": e.experiment, "message": str(e)}}))
    """)
    try:
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout,
                           env={**os.environ, "PYTHONHASHSEED": "0"})
    except subprocess.TimeoutExpired:
        pytest.fail(f"loading {name} did not end within {timeout} s")
    assert r.returncode == 0, r.stderr[-2000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


CASES = [
    # (text under experiment:, top-level text, the key named (prefix))
    ("  notes:\n" + _bomb("    "), "", "experiment.notes"),
    ("", "lol:\n  bombs:\n" + _bomb("    "), "lol"),
    ("", "loop: &l {again: *l}\n", "loop"),
    ("", "deep: " + "[" * 60 + "]" * 60 + "\n", "deep"),
]


@pytest.mark.parametrize("experiment_extra,extra,key", CASES, ids=["notes", "unknown_key", "recursive", "deep"])
def test_a_runaway_yaml_is_a_config_error_at_once(config_copy, experiment_extra, extra, key):
    f = _add(config_copy, "harrington2003/bomb.yaml",
             experiment_text("harrington2003", "bomb", extra, experiment_extra))
    try:
        got = _load_in_subprocess(config_copy, "harrington2003/bomb")
    finally:
        f.unlink()
    assert got.get("key", "").startswith(key), got
    assert "config/experiment/harrington2003/bomb.yaml" in got["message"]


def test_a_huge_file_is_a_config_error(config_copy):
    f = _add(config_copy, "harrington2003/huge.yaml",
             experiment_text("harrington2003", "huge", "", "  notes:\n" + '    - "x"\n' * 200_000))
    try:
        got = _load_in_subprocess(config_copy, "harrington2003/huge")
    finally:
        f.unlink()
    assert "bytes" in got["message"] and "huge.yaml" in got["message"], got


def test_a_bomb_in_an_algorithm_file_is_named(config_copy):
    f = config_copy / "algorithm" / "prank.yaml"
    original = f.read_text()
    f.write_text(original + "note_list:\n" + _bomb("  "))
    try:
        got = _load_in_subprocess(config_copy, "harrington2003/table1")
    finally:
        f.write_text(original)
    assert "config/algorithm/prank.yaml" in got["message"], got
