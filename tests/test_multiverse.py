"""The multiverse of readings (pipeline/multiverse.py, report.aggregate.multiverse_summary): the
readings a config's crossed choices give, their refusals, and each verdict's robustness over
them, on constructed sensitivity records (the committed ones: test_published_agreement and
scripts/recompute_verdicts.py)."""
from __future__ import annotations

import pytest

from rankrepro.pipeline.config_errors import ConfigError
from rankrepro.pipeline.multiverse import CHOICE, expand, readings
from rankrepro.report.readings import multiverse_summary, reading_key

A = {"choice": "a", "main": "x", "values": {"x": {}, "y": {"k.a": 1}}}
B = {"choice": "b", "main": "p", "values": {"p": {}, "q": {"k.b": 2}, "r": {"k.b": 3}}}
C = {"choice": "c", "main": "m", "values": {"m": {}, "n": {"k.c": True}}}


def _plain(cross, *choices):
    return {"experiment": {"sensitivity": [dict(c) for c in choices], "multiverse": {"cross": cross}}}


def test_the_product_less_the_one_at_a_time_readings():
    rows = readings([A, B, C], ["a", "b", "c"])
    # 2 x 3 x 2 = 12 readings: the main one, 1 + 2 + 1 one at a time, 7 with two or more off
    assert len(rows) == 12 - 1 - 4
    labels = [lb for lb, _, _ in rows]
    assert "y.q.n" in labels and "x.r.n" in labels and "y.p.m" not in labels
    sets = dict((lb, st) for lb, _, st in rows)
    assert sets["y.r.n"] == {"k.a": 1, "k.b": 3, "k.c": True}
    plain = _plain(["a", "b", "c"], A, B, C)
    expand("p/a", plain)
    mv = plain["experiment"]["sensitivity"][-1]
    assert mv["choice"] == CHOICE and mv["main"] == "main" and len(mv["values"]) == 8
    again = {"experiment": {**plain["experiment"]}}
    expand("p/a", again)  # a resolved config read back: left as it is
    assert again["experiment"]["sensitivity"] == plain["experiment"]["sensitivity"]


@pytest.mark.parametrize("cross, extra, key", [
    ([], [], "experiment.multiverse.cross"),
    (["a", "zz"], [], "experiment.multiverse.cross[1]"),
    (["a", "a"], [], "experiment.multiverse.cross[1]"),
    (["a", "d"], [{"choice": "d", "main": "u", "values": {"u": {}, "v": {"k.a": 7}}}], "experiment.multiverse.cross"),
])
def test_a_bad_multiverse_is_refused_naming_its_key(cross, extra, key):
    plain = _plain(cross, A, B, *extra)
    try:
        err = expand("p/a", plain)  # values crossing on one key: returned, raised after their own checks
    except ConfigError as e:
        err = e
    assert err is not None and err.key == key


def test_one_choice_alone_adds_no_reading():
    plain = _plain(["b"], A, B)
    expand("p/a", plain)
    assert [c["choice"] for c in plain["experiment"]["sensitivity"]] == ["a", "b"]


def test_the_choice_name_is_reserved():
    plain = {"experiment": {"sensitivity": [A, {"choice": CHOICE, "main": "x", "values": {"x": {}, "y": {}}}]}}
    with pytest.raises(ConfigError) as e:
        expand("p/a", plain)
    assert e.value.key == "experiment.sensitivity"


def _sens(verdict_of, table_of=lambda r: None):
    """A record's sensitivity block over A x C crossed: each value's reading, claim verdicts and
    table test from the functions of the reading."""
    def value(choice, label, reading, main=False):
        tt = table_of(reading)
        return {"value": label, "main": main, "reading": reading, "headline": [],
                "mean_abs_difference": float(len(reading)),
                "table_test": None if tt is None else {"p": 0.5 if tt else 0.01, "agrees": tt},
                "claims": [{"id": "k", "verdict": verdict_of(reading)}]}
    out = []
    for ch in (A, C):
        out.append({"choice": ch["choice"], "values": [value(ch["choice"], v, {} if v == ch["main"] else
                                                             {ch["choice"]: v}, v == ch["main"])
                                                       for v in ch["values"]]})
    out.append({"choice": CHOICE, "values": [value(CHOICE, "main", {}, True),
                                              value(CHOICE, "y.n", {"a": "y", "c": "n"})]})
    return out


def test_robust_and_flipped_verdicts():
    claims = [{"id": "k", "verdict": "held"}]
    robust = multiverse_summary(_sens(lambda r: "held"), claims, True, ["a", "c"])
    assert robust["readings"] == 4 and robust["claims"][0]["robust"] and robust["claims"][0]["counts"] == {"held": 4}
    # the verdict turns when a is off its main value, whatever c is: a flips it, c does not
    by_a = multiverse_summary(_sens(lambda r: "not held" if r.get("a") else "held"), claims, True, ["a", "c"])
    k = by_a["claims"][0]
    assert not k["robust"] and k["counts"] == {"held": 2, "not held": 2} and k["flipped_by"] == ["a"]
    assert by_a["word"]["flipped_by"] == ["a"]
    # only both off together turns it: an interaction, flipped by each choice with the other off
    both = multiverse_summary(_sens(lambda r: "not held" if len(r) == 2 else "held"), claims, True, ["a", "c"])
    assert both["claims"][0]["counts"] == {"held": 3, "not held": 1}
    assert sorted(both["claims"][0]["flipped_by"]) == ["a", "c"]


def test_the_confidence_set_restricts_the_robustness():
    claims = [{"id": "k", "verdict": "held"}]
    # the table agrees only where a is off: the verdicts count over those two readings
    s = multiverse_summary(_sens(lambda r: "held" if r.get("a") else "not held", table_of=lambda r: bool(r.get("a"))),
                           claims, True, ["a", "c"])
    assert s["over"] == "confidence set"
    assert sorted(s["confidence_set"]) == sorted(["a=y", "a=y, c=n"])
    assert s["claims"][0]["of"] == 2 and s["claims"][0]["counts"] == {"held": 2} and s["claims"][0]["robust"]
    # over every reading it is not: the main reading, outside the set, says otherwise
    assert s["claims"][0]["main"] == "not held" and not s["claims"][0]["all"]["robust"]
    assert reading_key({}) == "main" and reading_key({"a": "y", "c": "n"}) == "a=y, c=n"


def test_every_reading_once():
    # 2 x 2: main, a=y, c=n, both: the multiverse's own 'main' value is the main reading again
    s = multiverse_summary(_sens(lambda r: "held"), [{"id": "k", "verdict": "held"}], True, ["a", "c"])
    keys = [r["key"] for r in s["list"]]
    assert keys[0] == "main" and len(keys) == len(set(keys)) == 4
    assert {frozenset(r["reading"].items()) for r in s["list"]} == {
        frozenset(d.items()) for d in ({}, {"a": "y"}, {"c": "n"}, {"a": "y", "c": "n"})}


def _committed():
    import json
    from pathlib import Path

    root = Path(__file__).resolve().parents[1] / "results"
    return [json.loads(p.read_text()) for p in sorted(root.glob("*/*.json"))
            if '"multiverse"' in p.read_text()]


def test_every_committed_multiverse_is_its_declared_product():
    """Each committed record with a multiverse has every reading of the product of its crossed
    choices once (the other choices one at a time beside them), the confidence set is exactly the
    readings whose table test agrees, and the status table says so."""
    import math

    import yaml

    from rankrepro.report.scorecard import artefact_score, readings_cell

    recs = [r for r in _committed() if r.get("multiverse")]
    assert {r["name"] for r in recs} >= {"harrington2003/table1", "harrington2003/table2_cystic_fibrosis",
                                         "harrington2003/table2_eachmovie", "crammer_singer2005/fig6"}
    for r in recs:
        mv = r["multiverse"]
        sens = yaml.safe_load(r["config"])["experiment"]["sensitivity"]
        sizes = {s["choice"]: len(s["values"]) for s in sens if s["choice"] != CHOICE}
        others = sum(n - 1 for c, n in sizes.items() if c not in mv["cross"])
        assert mv["readings"] == math.prod(sizes[c] for c in mv["cross"]) + others, r["name"]
        assert len({x["key"] for x in mv["list"]}) == mv["readings"]
        assert sorted(mv["confidence_set"]) == sorted(x["key"] for x in mv["list"] if x["table_agrees"])
        for c in mv["claims"]:
            pool = [x for x in mv["list"] if x["key"] in mv["confidence_set"]] or mv["list"]
            got = [x["claims"][c["id"]] for x in pool]
            assert c["robust"] == (len(set(got)) == 1) and c["of"] == len(pool), (r["name"], c["id"])
        cell = readings_cell(artefact_score(r))
        assert cell.startswith(f"{len(mv['confidence_set'])} of {mv['readings']} compatible" if mv["confidence_set"]
                               else f"none of {mv['readings']} compatible" if mv["table"] else f"{mv['readings']} readings")


def test_the_specification_curve_draws_every_reading_and_its_choices():
    """The report's curve: one point per reading (the main one ringed), one filled square per
    choice off its main value, every choice named beside its row of the grid."""
    from rankrepro.report.speccurve import svg

    r = next(r for r in _committed() if r["name"] == "harrington2003/table1")
    mv = r["multiverse"]
    out = svg(mv)
    assert out.count("<circle cx") - out.count('r="1.5"') == mv["readings"]
    assert out.count('stroke="#000"') == 1  # the main reading
    assert out.count("<rect ") == sum(len(x["reading"]) for x in mv["list"])
    assert all(f">{c}</text>" in out for c in mv["cross"])
    assert svg(None) == ""
