"""The claim-kind registry: the config validation takes its kinds and per-kind checks from
it, a key a kind does not read is refused naming the key, and a new kind is one module plus
its name in ``claims.MODULES`` (here: one class put in the registry for the test)."""
from __future__ import annotations

import copy
import importlib
from pathlib import Path

import pytest
from omegaconf import OmegaConf, open_dict

from rankrepro import claims
from rankrepro.claims import KINDS, MODULES, Claim, ClaimKind, Context
from rankrepro.claims.base import result
from rankrepro.pipeline.catalog import load_experiment
from rankrepro.pipeline.config_errors import ConfigError
from rankrepro.pipeline.validate import validate
from rankrepro.pipeline.schema import ClaimCfg
from rankrepro.report.aggregate import evaluate_claim, evaluate_claims, summarize

from test_claims import base_means, fake_trials

CONFIG = Path(__file__).resolve().parents[1] / "config"
T1 = "harrington2003/table1"


@pytest.fixture(scope="module")
def t1():
    return load_experiment(T1, "smoke", config_dir=CONFIG)


def test_registry_is_the_one_list_of_kinds():
    assert list(KINDS) == ["less", "monotone", "argmin", "spread", "falls", "levels"]
    for m in MODULES:  # each module defines one kind, registered under its own name
        kind = importlib.import_module(f"rankrepro.claims.{m}").KIND
        assert KINDS[kind.name] is kind and isinstance(kind, ClaimKind)
        # every key a kind reads exists in the config schema, with the default the registry assumes
        for k in kind.reads:
            assert k in ClaimCfg.__dataclass_fields__ and k in claims.OPTIONAL_DEFAULTS


def test_unknown_kind_lists_the_registry(t1):
    cfg = copy.deepcopy(t1.cfg)
    cfg.experiment.claims[0].kind = "bigger"
    with pytest.raises(ConfigError) as err:
        validate(T1, "smoke", cfg)
    assert err.value.key == "experiment.claims[0].kind"
    assert all(repr(k) in str(err.value) for k in KINDS)


@pytest.mark.parametrize("index, key, value", [
    (2, "expect", 0.5),  # a monotone claim does not read expect
    (2, "rhs", {"algorithm": "prank"}),  # nor rhs
    (1, "over", "tau"),  # a less claim does not read over
    (1, "stat", "ci"),
    (2, "significant", True),
])
def test_a_key_the_kind_does_not_read_is_refused(t1, index, key, value):
    cfg = copy.deepcopy(t1.cfg)
    OmegaConf.update(cfg, f"experiment.claims.{index}.{key}", value, merge=False)
    with pytest.raises(ConfigError) as err:
        validate(T1, "smoke", cfg)
    assert err.value.key == f"experiment.claims[{index}].{key}", str(err.value)
    assert "claims only" in str(err.value)


def test_claim_from_config_matches_the_dict(t1):
    node = t1.cfg.experiment.claims[0]
    c = Claim.from_config(node)
    assert c == Claim.from_config(OmegaConf.to_container(node))
    assert c.kind == "less" and c.match == ("tau",) and c.rhs and c.factor == 1.0
    with pytest.raises(Exception):
        c.kind = "monotone"  # frozen
    # absent keys take the schema's defaults
    bare = Claim.from_config({"id": "x", "text": "t", "kind": "spread", "metric": "m"})
    assert (bare.stat, bare.direction, bare.factor, bare.match, bare.rounds) == ("mean", "increasing", 1.0, (), None)


class _Never(ClaimKind):
    """A kind for the test: held when no lhs cell's final value is below ``expect``."""

    name = "never_below"
    reads = ("expect",)

    def check(self, claim, chk):
        chk.require("expect", claim.expect is not None, "a never_below claim needs 'expect'")

    def evaluate(self, claim, ctx: Context):
        vals = [float(ctx.values(c.id, claim.metric, claim.rounds).iloc[-1]["mean"]) for c in ctx.cells(claim.lhs)]
        return result(claim, "held" if min(vals) >= claim.expect else "not held", f"lowest {min(vals):.3f}")


def test_a_new_kind_is_one_class_in_the_registry(t1, monkeypatch):
    monkeypatch.setitem(KINDS, "never_below", _Never())
    cfg = copy.deepcopy(t1.cfg)
    with open_dict(cfg):
        cfg.experiment.claims[2].kind = "never_below"
        cfg.experiment.claims[2].over = None
        cfg.experiment.claims[2].stat = "mean"
        cfg.experiment.claims[2].direction = "increasing"
    with pytest.raises(ConfigError) as err:  # its own check, naming the key
        validate(T1, "smoke", cfg)
    assert err.value.key == "experiment.claims[2].expect"
    cfg.experiment.claims[2].expect = 0.1
    exp = validate(T1, "smoke", cfg)
    t = fake_trials(exp, base_means(exp))
    r = evaluate_claims(exp, summarize(exp, t), t)[2]
    assert r.verdict == "held" and r.evidence.startswith("lowest 0.2")
    cfg.experiment.claims[2].over = "tau"  # a key the new kind does not read
    with pytest.raises(ConfigError) as err:
        validate(T1, "smoke", cfg)
    assert err.value.key == "experiment.claims[2].over"


def test_evaluate_claim_takes_a_claim_or_its_config(t1):
    t = fake_trials(t1, base_means(t1))
    s = summarize(t1, t)
    for node in t1.cfg.experiment.claims:
        a = evaluate_claim(t1, node, s, t)
        b = evaluate_claim(t1, Claim.from_config(node), s, t)
        assert a == b
