"""``rankrepro check-learner``: the conformance checks on a class from anywhere, each printed
with pass/fail and why, exit code 1 on any failure."""
import uuid
from pathlib import Path

import pytest

from rankrepro.cli import main

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "own_learner" / "margin_prank.py"

BROKEN = '''

class Mutating(MarginPRank):
    """Scales its input rows in place."""

    def fit_online(self, X, y):
        X *= 2.0
        return super().fit_online(X, y)


class Unchecked(MarginPRank):
    """A hyperparameter without a constraint."""

    def __init__(self, *, n_ranks=5, margin=0.5, step=1.0):
        super().__init__(n_ranks=n_ranks, margin=margin)
        self.step = step


class GlobalRandom(MarginPRank):
    """Explores: a tenth of its online predictions are drawn from NumPy's global random state,
    not from a seed hyperparameter; its final rule (predict) is MarginPRank's, deterministic."""

    def _online(self, X, y):
        out = super()._online(X, y)
        explore = np.random.random(len(out)) < 0.1
        out[explore] = np.random.randint(1, self.n_ranks + 1, size=int(explore.sum()))
        return out


class NoOnline:
    """No learner at all."""

    @classmethod
    def _param_names(cls):
        return []

    def validate(self):
        return self
'''


@pytest.fixture
def module(tmp_path, monkeypatch):
    name = f"own_{uuid.uuid4().hex[:10]}"
    (tmp_path / f"{name}.py").write_text(EXAMPLE.read_text() + BROKEN)
    monkeypatch.syspath_prepend(str(tmp_path))
    return name


def test_a_conforming_learner_passes_every_check(module, capsys):
    assert main(["check-learner", f"{module}.MarginPRank"]) == 0
    out = capsys.readouterr().out
    rows = [ln for ln in out.splitlines() if ln.startswith(("PASS", "FAIL"))]
    assert len(rows) == 8 and all(r.startswith("PASS") for r in rows)
    assert "protocol calls" in out and "an online trial ran" in out
    assert "8 of 8 checks passed" in out


def test_a_learner_that_mutates_its_input_fails_that_check_only(module, capsys):
    assert main(["check-learner", f"{module}.Mutating", "--family", "online"]) == 1
    out = capsys.readouterr().out
    failed = [ln for ln in out.splitlines() if ln.startswith("FAIL")]
    assert len(failed) == 1 and "inputs unchanged" in failed[0] and "modified in place" in failed[0]


def test_online_predictions_from_the_global_random_state_fail_the_same_seed_check(module, capsys):
    """predict alone is the same for two fits; the online predictions fit_online returns (what
    the online protocol scores) are not, and the check compares them too."""
    assert main(["check-learner", f"{module}.GlobalRandom"]) == 1
    out = capsys.readouterr().out
    failed = [ln for ln in out.splitlines() if ln.startswith("FAIL")]
    assert len(failed) == 1 and "same seed, same result" in failed[0] and "fit_online" in failed[0], out


def test_a_hyperparameter_without_constraint_fails(module, capsys):
    assert main(["check-learner", f"{module}.Unchecked"]) == 1
    out = capsys.readouterr().out
    failed = [ln for ln in out.splitlines() if ln.startswith("FAIL")]
    assert len(failed) == 1 and "parameters checked" in failed[0] and "['step'] have no constraint" in failed[0]


def test_a_class_without_the_protocols_methods_fails_the_interface(module, capsys):
    assert main(["check-learner", f"{module}.NoOnline", "--family", "online"]) == 1
    out = capsys.readouterr().out
    assert "FAIL  interface" in out and "lacks method 'fit_online', method 'predict'" in out
    assert main(["check-learner", f"{module}.NoOnline"]) == 1  # no family by its bases
    assert "give --family" in capsys.readouterr().out


def test_a_target_that_does_not_import_fails(capsys):
    assert main(["check-learner", "no_such_module_xyz.Learner"]) == 1
    assert "FAIL  import  cannot import module 'no_such_module_xyz'" in capsys.readouterr().out
