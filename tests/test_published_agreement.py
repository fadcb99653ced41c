"""The published comparison's verdicts (difference interval, equivalence, the former overlap
rule), the printed precision of every published value, the reproducibility measures of a
record and the scorecard's counts and per-paper measures."""
import dataclasses
import json
import re
from pathlib import Path

import numpy as np
import pytest
import yaml
from omegaconf import OmegaConf, open_dict
from scipy import stats

from rankrepro.pipeline.catalog import load_experiment
from rankrepro.report.aggregate import compare_published, experiment_claims, resolve, summarize
from rankrepro.report.reproducibility import HIGHER_IS_BETTER, measures
from rankrepro.report.scorecard import scorecard
from rankrepro.metrics import METRICS
from rankrepro.stats import printed_precision

from test_claims import base_means, fake_trials

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def table1():
    return load_experiment("harrington2003/table1", "smoke")


def test_verdict_overlap_and_equivalence_of_a_cell(table1):
    """OAP-VP tau = 0.3 published 0.32 +- 0.01 over the paper's 20 trials: the printed numbers
    stand for a mean in [0.315, 0.325] and a half-width in [0.005, 0.015].  The verdict is
    *consistent* exactly when some published pair the printing allows gives a Welch interval
    (scipy) containing 0 (checked by brute force over a grid of them); the equivalence test is
    within the margin Table 1 declares (0.02), less the rounding."""
    means = base_means(table1)
    for shift in (0.336, 0.345, 0.352, 0.30):
        means["oap_vp-tau0.3"] = shift
        comp = compare_published(table1, summarize(table1, fake_trials(table1, means, sd=0.02)))
        r = comp[comp.cell == "oap_vp-tau0.3"].iloc[0]
        assert r.published_n == 20 and r.difference_basis == "welch" and r.rounding == pytest.approx(0.005)
        assert (r.margin, r.margin_source) == (pytest.approx(0.02), "declared")
        se_r = r.ci / stats.t.ppf(0.975, r.n - 1)
        any_contains = False
        for pub in np.linspace(0.315, 0.325, 21):
            for pci in np.linspace(0.005, 0.015, 11):
                se_p = pci / stats.t.ppf(0.975, 19)
                t = stats.ttest_ind_from_stats(r["mean"], se_r * np.sqrt(r.n), r.n, pub, se_p * np.sqrt(20), 20,
                                               equal_var=False)
                any_contains |= t.pvalue >= 0.05  # the 95% interval contains 0

        assert (r.verdict == "consistent") == any_contains, shift
        # equivalence: the 90% interval of the difference within +-(margin - rounding) at the widest half-width
        se_p = 0.015 / stats.t.ppf(0.975, 19)
        se = np.hypot(se_r, se_p)
        df = (se_r ** 2 + se_p ** 2) ** 2 / (se_r ** 4 / (r.n - 1) + se_p ** 4 / 19)
        h90 = stats.t.ppf(0.95, df) * se
        inside = abs(r.difference) + h90 < 0.02 - 0.005
        assert (r.equivalence == "equivalent") == inside, shift
        assert r.equivalence_reachable == (h90 < 0.015)
    # an artefact's declared absolute margin replaces the default
    cfg = OmegaConf.create(OmegaConf.to_container(table1.cfg))
    with open_dict(cfg):
        cfg.experiment.equivalence = {"margin": 0.2, "relative": None, "why": "a test"}
    wide = dataclasses.replace(table1, cfg=cfg)
    means["oap_vp-tau0.3"] = 0.336
    r2 = compare_published(wide, summarize(table1, fake_trials(table1, means, sd=0.02)))
    r2 = r2[r2.cell == "oap_vp-tau0.3"].iloc[0]
    assert (r2.margin, r2.margin_source, r2.equivalence) == (0.2, "declared", "equivalent")
    # none declared: the project's default, a tenth of the published value
    with open_dict(cfg):
        cfg.experiment.equivalence = {"margin": None, "relative": None, "why": ""}
    r3 = compare_published(dataclasses.replace(table1, cfg=cfg), summarize(table1, fake_trials(table1, means, sd=0.02)))
    r3 = r3[r3.cell == "oap_vp-tau0.3"].iloc[0]
    assert (r3.margin, r3.margin_source) == (pytest.approx(0.032), "default (relative)")


def test_a_printed_zero_half_width_is_a_half_width_below_half_a_unit(table1):
    """Voted PRank's published 0.31 +- 0.00: a half-width in [0, 0.005), not zero (so a run whose
    own interval prints +-0.00 is not contradicted by it)."""
    from rankrepro.report.aggregate import experiment_published

    p = next(p for p in experiment_published(table1) if p.select == {"algorithm": "voted_prank"})
    assert p.ci == 0.0 and p.rounding == pytest.approx(0.005) and p.ci_rounding == pytest.approx(0.005)
    wh = next(p for p in experiment_published(table1) if p.select.get("algorithm") == "widrow_hoff")
    assert wh.ci_rounding == pytest.approx(0.05)  # "0.30 +- 0.2": a half-width printed to one digit


def test_substitute_data_keeps_the_statistics_but_no_verdicts(table1):
    s = summarize(table1, fake_trials(table1, base_means(table1)))
    comp = compare_published(table1, s, reference_only=True)
    assert set(comp.verdict) == set(comp.overlap) == set(comp.equivalence) == {"reference"}
    assert comp.difference_low.notna().all() and comp.equivalence_p.notna().all()


def _published_lines(path: Path) -> list[dict]:
    """Each published entry of a config file as written: its parsed mapping and the literal of
    its mean."""
    out = []
    for line in path.read_text().splitlines():
        m = re.match(r"^\s+- (\{select: .*\})\s*(#.*)?$", line)
        if m and "metric:" in line and " mean: " in line:
            entry = yaml.safe_load(m.group(1))
            entry["literal"] = re.search(r"[{,] mean: ([-0-9.]+)[,}]", line).group(1)
            out.append(entry)
    return out


#: values the paper prints with fewer digits than the rest of their column
PRINTED_SHORTER = {("elsas2008/table4_td2004", "rankboost", "test_ndcg@1"): "Table 4 prints RankBoost's 0.48"}


def test_every_published_value_keeps_its_printed_precision():
    """The equivalence margin is half a unit of the paper's last printed digit, read from the
    value unless the config states ``precision``: a value written with trailing zeros
    (0.440) that the float loses must state it, and a column of one table has one precision
    (a value written 0.5 in a column of 0.xx lost its zero: it states precision 0.01)."""
    checked = 0
    for path in sorted((ROOT / "config/experiment").glob("*/[!_]*.yaml")):
        name = f"{path.parent.name}/{path.stem}"
        entries = _published_lines(path)
        exp_published = OmegaConf.load(path).get("experiment", {}).get("published") or []
        assert len(entries) == len(exp_published), f"{name}: write each published entry on one line"
        by_column: dict[str, set] = {}
        for e in entries:
            lit = e["literal"]
            written = 10.0 ** -len(lit.split(".")[1]) if "." in lit else 1.0
            eff = e.get("precision") or printed_precision(float(lit))
            assert eff <= written * (1 + 1e-9), f"{name} {e['select']} {e['metric']}: precision {eff} coarser than {lit}"
            if (name, e["select"].get("algorithm"), e["metric"]) not in PRINTED_SHORTER:
                by_column.setdefault(e["metric"], set()).add(round(eff, 12))
            checked += 1
        for metric, precs in by_column.items():
            assert len(precs) == 1, f"{name} {metric}: published values of one column with precisions {precs}"
    assert checked > 150


def test_reproducibility_measures_by_hand(table1):
    """RMSE, Kendall's tau and the effect ratios of Table 1's claims on trials of known means."""
    means = base_means(table1)
    means.update({"prank": 0.30, "voted_prank": 0.31, "widrow_hoff-eta0.1": 0.28})
    s = summarize(table1, fake_trials(table1, means, sd=1e-4))
    comp = compare_published(table1, s)
    rep = measures(table1, comp, experiment_claims(table1), lambda sel, m: resolve(table1.cells, sel, s, m), True)
    assert rep["judged"] is True
    [r] = rep["rmse"]
    assert r["metric"] == "test_rank_loss" and r["cells"] == len(comp)
    assert r["rmse"] == pytest.approx(np.sqrt(np.mean((comp["mean"] - comp.published_mean) ** 2)))
    [k] = rep["kendall_tau"]
    assert k["column"] == {} and k["tau"] == pytest.approx(stats.kendalltau(comp.published_mean, comp["mean"]).statistic)
    # bpm_beats_wh: OAP-BPM (advanced, lower loss) against WH eta = 0.1 (baseline) at each tau
    e = next(x for x in rep["effects"] if x["claim"] == "bpm_beats_wh")
    pair = next(p for p in e["pairs"] if p["advanced"] == "oap_bpm-tau0.3")
    assert pair["baseline"] == "widrow_hoff-eta0.1"
    assert pair["published_improvement"] == pytest.approx(0.30 - 0.23)
    assert pair["reproduced_improvement"] == pytest.approx(0.28 - 0.20, abs=1e-3)
    assert pair["effect_ratio"] == pytest.approx(0.08 / 0.07, rel=1e-2)
    assert pair["delta_ri"] == pytest.approx(0.07 / 0.30 - 0.08 / 0.28, abs=1e-3)
    pub = sum(p["published_improvement"] for p in e["pairs"])
    assert e["effect_ratio"] == pytest.approx(sum(p["reproduced_improvement"] for p in e["pairs"]) / pub)


def test_metric_directions_name_known_metrics():
    assert HIGHER_IS_BETTER <= set(METRICS)
    assert {"test_map", "list_ndcg"} <= HIGHER_IS_BETTER and not {"mae", "test_rank_loss"} & HIGHER_IS_BETTER


def _rec(name, paper, original, rows, repro=None):
    return {"name": name, "paper": paper, "artefact": name.split("/")[1], "title": name, "status": "ran",
            "dataset": {"original": original}, "claims": [], "table": rows,
            "reproducibility": repro or {"judged": original, "rmse": [], "effects": [], "kendall_tau": []}}


def test_scorecard_counts_and_paper_measures():
    rows = [{"verdict": "consistent", "overlap": "consistent", "equivalence": "equivalent"},
            {"verdict": "differs", "overlap": "consistent", "equivalence": "undecided", "diagnosis": None},
            {"verdict": "differs", "overlap": "differs", "equivalence": "different", "diagnosis": None},
            {"verdict": None}]
    a = _rec("p/a", "p", True, rows, {"judged": True, "rmse": [{"metric": "m", "cells": 2, "rmse": 0.1}],
                                     "effects": [{"claim": "c1", "metric": "m", "pairs": [], "effect_ratio": 0.5,
                                                  "delta_ri": 0.1}],
                                     "kendall_tau": [{"metric": "m", "column": {}, "cells": 3, "tau": 1.0}]})
    b = _rec("p/b", "p", True, [], {"judged": True, "rmse": [{"metric": "m", "cells": 1, "rmse": 0.4}],
                                    "effects": [{"claim": "c2", "metric": "m", "pairs": [], "effect_ratio": 1.5,
                                                 "delta_ri": None}],
                                    "kendall_tau": [{"metric": "m", "column": {}, "cells": 3, "tau": 0.0}]})
    c = _rec("p/c", "p", False, [{"verdict": "reference", "overlap": "reference", "equivalence": "reference"}],
             {"judged": False, "rmse": [{"metric": "m", "cells": 4, "rmse": 1.0}], "effects": [], "kendall_tau": []})
    sc = scorecard([a, b, c])
    s = sc.artefacts[0]
    assert (s.consistent, s.compared, s.overlap_consistent, s.verdict_changes) == (1, 3, 2, 1)
    assert (s.equivalent, s.different, s.undecided) == (1, 1, 1)
    assert sc.total("verdict_changes") == 1 and sc.artefacts[2].references == 1
    orig, sub = sc.papers
    assert (orig.paper, orig.original, orig.artefacts) == ("p", True, ["p/a", "p/b"])
    assert orig.rmse == [{"metric": "m", "cells": 3, "rmse": pytest.approx(np.sqrt((2 * 0.01 + 0.16) / 3))}]
    assert orig.kendall_tau_mean == pytest.approx(0.5) and orig.effect_ratio_median == pytest.approx(1.0)
    assert orig.delta_ri_median == pytest.approx(0.1) and [k["artefact"] for k in orig.kendall_tau] == ["p/a", "p/b"]
    assert (sub.original, sub.rmse[0]["rmse"], sub.kendall_tau_mean) == (False, 1.0, None)


def test_committed_records_carry_the_agreement_statistics():
    """Every published cell of a committed record: its verdict is its difference interval's
    (consistent when it contains 0), the former rule's verdict beside it, an equivalence
    verdict and margin; every record with published cells has its reproducibility section."""
    n = 0
    for p in sorted((ROOT / "results").glob("*/*.json")):
        r = json.loads(p.read_text())
        if r.get("status") != "ran":
            continue
        pub = [t for t in r["table"] if t["published_mean"] is not None]
        if pub:
            assert r["reproducibility"]["rmse"], r["name"]
        for t in pub:
            n += 1
            assert t["margin"] > 0 and t["overlap"] in ("consistent", "differs", "reference")
            assert t["margin_source"] in ("declared", "declared (relative)", "default (relative)")
            assert isinstance(t["equivalence_reachable"], bool) and t["rounding"] >= 0
            if t["verdict"] == "reference":
                assert t["equivalence"] == "reference"
                continue
            inside = t["difference_low"] <= 1e-12 and t["difference_high"] >= -1e-12
            if t["difference_basis"] == "deterministic":  # a learner run once: judged by equivalence
                inside = t["equivalence"] == "equivalent"
            assert t["verdict"] == ("consistent" if inside else "differs"), (r["name"], t["label"])
            assert (t["difference_p"] >= 0.05) == (t["verdict"] == "consistent") or \
                t["difference_basis"] == "deterministic", (r["name"], t["label"])
            assert t["equivalence"] in ("equivalent", "different", "undecided")
            if t["equivalence_trials"] is not None:  # unreachable now, reachable with that many trials
                assert not t["equivalence_reachable"] and t["equivalence_trials"] > t["n"]
        if pub and r["dataset"]["original"]:
            tt = r["table_test"]
            assert tt["cells"] == len(pub) and tt["consistent"] == sum(t["verdict"] == "consistent" for t in pub)
            assert tt["agrees"] == ((tt["p"] is None or tt["p"] >= 0.05) and not tt["exact_outside"])
    assert n > 150


def test_published_significance_marks_are_compared():
    """Elsas et al. Table 4 prints which rows beat RankBoost (*) and RankSVM (dagger): the
    record says, row by row, whether ours carry the same marks."""
    import json
    from pathlib import Path

    from rankrepro.pipeline.catalog import load_experiment
    from rankrepro.report.artefact import marks_comparison

    exp = load_experiment("elsas2008/table4_ohsumed", "paper")
    rows = [{"label": "A", "metric": "m", "marks": "*", "published_marks": "*"},
            {"label": "B", "metric": "m", "marks": "*\u2020", "published_marks": "\u2020*"},
            {"label": "C", "metric": "m", "marks": "", "published_marks": "*"},
            {"label": "D", "metric": "m", "marks": "*", "published_marks": None}]
    sm = marks_comparison(exp, rows, judged=True)
    assert (sm["compared"], sm["agree"]) == (3, 2) and len(sm["differ"]) == 1 and "C m" in sm["differ"][0]
    assert marks_comparison(exp, rows, judged=False)["agree"] is None
    rec = json.loads((Path(__file__).resolve().parents[1] / "results/elsas2008/table4_ohsumed.json").read_text())
    committed = rec["significance_marks"]
    assert committed["compared"] == 24 and committed["agree"] == 24 - len(committed["differ"])
