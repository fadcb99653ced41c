"""A learner from outside the package, named by ``_target_`` in an experiment config
(docs/own_learner.md): it runs end to end, a bad target is refused at load naming the key,
and its module's code (not its comments) is in its cells' fingerprints."""
import shutil
import uuid
from pathlib import Path

import pytest

from rankrepro.pipeline.catalog import load_experiment
from rankrepro.pipeline.cells import cell_fingerprint
from rankrepro.pipeline.config_errors import ConfigError

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "own_learner"


@pytest.fixture
def own(tmp_path, monkeypatch):
    """A config folder with the example experiment, pointing at a fresh copy of the example
    learner under a module name no other test uses; returns (config dir, module file, module name)."""
    conf = tmp_path / "config"
    shutil.copytree(ROOT / "config", conf)
    shutil.copytree(EXAMPLE / "experiment" / "mine", conf / "experiment" / "mine")
    mod = f"own_{uuid.uuid4().hex[:10]}"
    src = tmp_path / "learners"
    src.mkdir()
    (src / f"{mod}.py").write_text((EXAMPLE / "margin_prank.py").read_text())
    yml = conf / "experiment" / "mine" / "margin_prank.yaml"
    yml.write_text(yml.read_text().replace("_target_: margin_prank.MarginPRank", f"_target_: {mod}.MarginPRank"))
    monkeypatch.syspath_prepend(str(src))
    monkeypatch.setenv("RANKREPRO_CONFIG_DIR", str(conf))
    monkeypatch.chdir(tmp_path)
    return conf, src / f"{mod}.py", mod


def test_own_learner_runs_end_to_end(own, tmp_path):
    import json

    import pandas as pd

    from rankrepro.cli import main
    from rankrepro.protocols import PROTOCOLS

    conf, path, mod = own
    out = tmp_path / "out"
    assert main(["run", "mine/margin_prank", "--out", str(out)]) == 0
    rec = json.loads((out / "results" / "mine" / "margin_prank.json").read_text())
    assert [c["estimator"] for c in rec["cells"]] == ["prank", f"{mod}.MarginPRank", f"{mod}.MarginPRank"]
    assert mod in rec["code"]["modules"]  # the record names the learner's module among its code
    cells = out / "results" / "mine" / "margin_prank" / "cells"
    df = pd.read_parquet(cells / "margin_prank-margin0.5.parquet")
    assert set(df["trial"]) == {0, 1} and (df["metric"] == "online_rank_loss").all()
    assert df["value"].between(0, 4).all()
    # a different margin is a different learner: different numbers on the same data
    other = pd.read_parquet(cells / "margin_prank-margin2.0.parquet")
    assert not df["value"].equals(other["value"])
    assert (out / "figures" / "mine" / "margin_prank.png").is_file()
    assert "PRank, margin" in (out / "results" / "report" / "index.html").read_text()
    # the class stood in the registry only while its trials ran
    assert f"{mod}.MarginPRank" not in PROTOCOLS["online"].estimators


@pytest.mark.parametrize("target,says", [
    ("no_such_module_xyz.Learner", "cannot import module 'no_such_module_xyz'"),
    ("{mod}.NoSuchClass", "has no attribute 'NoSuchClass'"),
    ("{mod}.Incomplete", "lacks method 'fit_online'"),
    ("{mod}.NoRanks", "lacks hyperparameter 'n_ranks'"),
])
def test_a_bad_target_is_a_config_error_naming_the_key(own, target, says):
    conf, path, mod = own
    path.write_text(path.read_text() + "\n\nclass Incomplete(MarginPRank):\n    fit_online = None\n\n\n"
                    "class NoRanks(MarginPRank):\n    def __init__(self, *, margin=0.5):\n        self.margin = margin\n")
    with pytest.raises(ConfigError) as err:
        load_experiment("mine/margin_prank", "smoke", overrides=[f"algorithms.margin_prank._target_={target.format(mod=mod)}"],
                        config_dir=conf)
    assert err.value.key == "algorithms.margin_prank._target_"
    assert says in str(err.value)


def test_a_class_its_module_does_not_define_is_refused_before_the_module_runs(own, tmp_path):
    """Issue 58, item 7: a _target_ naming a class its module does not define was refused only
    after the module was imported, its import-time code run.  The module's source is read
    first: a name it plainly never binds is refused with none of its code run; a module that
    may bind it at run time (``import *``, ``globals()``) is imported, as before."""
    conf, path, mod = own
    ran = tmp_path / "ran"
    side = f"{mod}_side"
    path.with_name(f"{side}.py").write_text(f"open({str(ran)!r}, 'a').write('imported')\n"
                                            f"from {mod} import MarginPRank\n")
    with pytest.raises(ConfigError) as err:
        load_experiment("mine/margin_prank", "smoke", overrides=[f"algorithms.margin_prank._target_={side}.NoSuchClass"],
                        config_dir=conf)
    assert err.value.key == "algorithms.margin_prank._target_"
    assert "has no attribute 'NoSuchClass'" in str(err.value) and "none of its code has run" in str(err.value)
    assert not ran.exists()
    # bound by name: imported (and it runs), as any Hydra _target_
    load_experiment("mine/margin_prank", "smoke", overrides=[f"algorithms.margin_prank._target_={side}.MarginPRank"],
                    config_dir=conf)
    assert ran.read_text() == "imported"
    dyn = f"{mod}_dyn"
    path.with_name(f"{dyn}.py").write_text(f"from {mod} import *\n")
    load_experiment("mine/margin_prank", "smoke", overrides=[f"algorithms.margin_prank._target_={dyn}.MarginPRank"],
                    config_dir=conf)


def test_a_target_and_an_estimator_together_are_refused(own):
    conf, _, _ = own
    with pytest.raises(ConfigError) as err:
        load_experiment("mine/margin_prank", "smoke", overrides=["algorithms.margin_prank.estimator=prank"],
                        config_dir=conf)
    assert err.value.key == "algorithms.margin_prank._target_" and "not both" in str(err.value)


def test_the_learners_code_is_in_its_fingerprints_and_its_comments_are_not(own):
    conf, path, mod = own

    def prints():
        exp = load_experiment("mine/margin_prank", "smoke", config_dir=conf)
        return {c.id: cell_fingerprint(exp, c) for c in exp.cells}

    before = prints()
    path.write_text(path.read_text().replace('"""PRank updating on', '"""(edited docstring) PRank updating on')
                    + "\n# a comment at the end, and another line of it\n")
    assert prints() == before
    path.write_text(path.read_text().replace("self.thresholds_ -= tau", "self.thresholds_ -= 0.5 * tau"))
    after = prints()
    assert after["prank"] == before["prank"]  # the package's learner does not run that module
    assert after["margin_prank-margin0.5"] != before["margin_prank-margin0.5"]
    assert after["margin_prank-margin2.0"] != before["margin_prank-margin2.0"]


def test_a_module_of_the_learners_own_project_is_in_its_fingerprints(own):
    """A helper the learner imports from its own folder is part of its code; a library is not."""
    conf, path, mod = own
    helper = path.with_name(f"{mod}_helper.py")
    helper.write_text("STEP = 1.0\n")
    path.write_text(path.read_text().replace("import numpy as np\n", f"import numpy as np\nfrom {mod}_helper import STEP\n", 1))
    exp = load_experiment("mine/margin_prank", "smoke", config_dir=conf)
    from rankrepro.pipeline.codeprint import cell_identity

    ident = cell_identity(exp, exp.cell("margin_prank-margin0.5"))
    assert {mod, f"{mod}_helper", "rankrepro.algorithms.base"} <= set(ident["modules"])
    assert "numpy" in ident["libraries"] and not any(m.startswith("numpy") for m in ident["modules"])
    before = cell_fingerprint(exp, exp.cell("margin_prank-margin0.5"))
    helper.write_text("STEP = 2.0  # changed\n")
    assert cell_fingerprint(exp, exp.cell("margin_prank-margin0.5")) != before
