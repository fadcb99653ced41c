"""Issue 41, items 5, 6, 8 and 9: configs that would change results or leak are refused naming
their key; loading stays linear in the grid size up to a stated bound; damaged project files
and failed writes are one line naming the file, with no partial file left; config text in the
Markdown outputs is escaped; refusals name the key the user wrote."""
from __future__ import annotations

import errno
import json
import math
import os
import pathlib
import re
import stat

import pytest
from omegaconf import OmegaConf

from rankrepro.pipeline import validate as validate_module
from rankrepro.pipeline.catalog import load_experiment, write_resolved
from rankrepro.pipeline.config_errors import ConfigError
from rankrepro.pipeline.config_limits import MAX_CELLS

from test_config_names import CONFIG, _add, config_copy, experiment_text  # noqa: F401 - fixture

WH = "algorithms:\n  wh: {estimator: widrow_hoff, label: WH, grid: {eta: [0.1, 0.5]}}\n"
SECRET = "s3cr3t-value-from-the-environment"

# (top-level text, text under experiment:, overrides, the key named, a word the message must hold)
CASES = {
    "oc.env in a title": ("", '  description: "key ${oc.env:RANKREPRO_TEST_SECRET}"\n', [],
                          "experiment.description", "oc.env"),
    "oc.env in a note": ("", '  notes: ["${oc.env:RANKREPRO_TEST_SECRET}"]\n', [], "experiment.notes[0]", "oc.env"),
    "oc.env in an override": ("", "", ["experiment.description=${oc.env:RANKREPRO_TEST_SECRET}"],
                              "experiment.description", "oc.env"),
    "oc.env nested in oc.select": ("", '  description: "${oc.select:nothing,${oc.env:RANKREPRO_TEST_SECRET}}"\n', [],
                                   "experiment.description", "oc.env"),
    "escaped interpolation": ("", '  description: "\\\\${oc.env:RANKREPRO_TEST_SECRET}"\n', [],
                              "experiment.description", "interpolation"),
    "now as the seed": ("", "", ["experiment.seed=${now:%S}"], "experiment.seed", "clock"),
    "oc.decode": ("", "  description: \"${oc.decode:'1'}\"\n", [], "experiment.description", "oc.decode"),
    "a NUL byte in the title": ("", "", [], "experiment.title", "control character"),
    "a notes item that is a mapping": ("", "  notes:\n    - {_target_: os.system}\n", [], "experiment.notes[0]",
                                       "mapping"),
    "a claim comparing a cell with itself": (
        WH, "  claims:\n    - {id: c, text: t, kind: less, metric: online_rank_loss, "
            "lhs: {algorithm: wh, eta: 0.1}, rhs: {algorithm: wh, eta: 0.1}}\n", [], "experiment.claims[0]", "distinct"),
    "two published means for one target": (
        "", "  published:\n    - {select: {algorithm: prank}, metric: online_rank_loss, mean: 0.5}\n"
            "    - {select: {algorithm: prank}, metric: online_rank_loss, mean: 0.6}\n", [],
        "experiment.published[1].mean", "one published value"),
    "N: 10**12": ("algorithms:\n  oap: {estimator: oap_vp, label: O, params: {N: 1000000000000}}\n", "", [],
                  "algorithms.oap.params.N", "1,000,000"),
    "N: 10**12 in a grid": ("algorithms:\n  oap: {estimator: oap_vp, label: O, grid: {N: [10, 1000000000000]}}\n",
                            "", [], "algorithms.oap.grid.N[1]", "1,000,000"),
    "n_train: 10**12": ("", "", ["experiment.n_train=1000000000000"], "experiment.n_train", "more than"),
    "a sensitivity value equal to the main one": (
        "", "  sensitivity:\n    - {choice: s, main: a, why: w, values: {a: {}, b: {experiment.n_train: 60}}}\n", [],
        "experiment.sensitivity[0].values.b", "main value"),
    "estimator: os.system": ("algorithms:\n  x: {estimator: os.system, label: X}\n", "", [],
                             "algorithms.x.estimator", "not a class"),
    "a 100,000-deep list in an override": ("", "", ["experiment.notes=" + "[" * 100_000 + "]" * 100_000],
                                           "experiment.notes", "levels deep"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_config_that_changes_results_or_leaks_is_refused_naming_its_key(config_copy, monkeypatch, case):
    extra, experiment_extra, overrides, key, word = CASES[case]
    monkeypatch.setenv("RANKREPRO_TEST_SECRET", SECRET)
    text = experiment_text("harrington2003", "hardening", extra, experiment_extra)
    if case == "a NUL byte in the title":
        text = text.replace('title: "a names test"', 'title: "a \\0 title"')
    f = _add(config_copy, "harrington2003/hardening.yaml", text)
    try:
        with pytest.raises(ConfigError) as err:
            load_experiment("harrington2003/hardening", "smoke", overrides=overrides, config_dir=config_copy)
    finally:
        f.unlink()
    assert err.value.key == key, str(err.value)
    assert word in str(err.value), str(err.value)
    assert SECRET not in str(err.value)
    assert "recursion" not in str(err.value)


def test_the_refused_cases_load_once_made_meaningful(config_copy):
    """The same shapes with a meaning load: a plain interpolation, distinct published targets,
    a sensitivity value that changes the main config, a sane N."""
    f = _add(config_copy, "harrington2003/meaningful2.yaml", experiment_text(
        "harrington2003", "meaningful2",
        "algorithms:\n  oap: {estimator: oap_vp, label: O, params: {N: 100}}\n",
        '  description: "${experiment.title}, p < 0.05 & more"\n'
        "  notes: [\"tab\\tand newline\\n are fine\"]\n"
        "  published:\n    - {select: {algorithm: prank}, metric: online_rank_loss, mean: 0.5}\n"
        "    - {select: {algorithm: oap}, metric: online_rank_loss, mean: 0.6}\n"
        "  sensitivity:\n    - {choice: s, main: a, why: w, values: {a: {}, b: {experiment.n_train: 50}}}\n"))
    try:
        exp = load_experiment("harrington2003/meaningful2", "smoke", config_dir=config_copy)
    finally:
        f.unlink()
    assert exp.cfg.experiment.description == "a names test, p < 0.05 & more"
    assert [c.id for c in exp.cells] == ["prank", "oap"]


def _grid_experiment(config_copy, n: int, name: str):
    vals = ", ".join(repr(round(0.0001 * (i + 1), 6)) for i in range(n))
    return _add(config_copy, f"harrington2003/{name}.yaml", experiment_text(
        "harrington2003", name, "algorithms:\n  wh: {estimator: widrow_hoff, label: WH, grid: {eta: [%s]}}\n" % vals))


def test_loading_compares_grid_values_in_linear_time(config_copy, monkeypatch):
    """The duplicate check of a grid compared every pair of values (2,000 values: ~2 million
    comparisons, 3,000 values 14 s); now sorted neighbours only: fewer comparisons than values."""
    calls = []
    real = validate_module.same_value
    monkeypatch.setattr(validate_module, "same_value", lambda a, b: calls.append(1) or real(a, b))
    f = _grid_experiment(config_copy, 2000, "linear")
    try:
        exp = load_experiment("harrington2003/linear", "smoke", config_dir=config_copy)
    finally:
        f.unlink()
    assert len(exp.cells) == 2001
    grid_calls = len(calls) - 0  # sensitivity checks add none here (no sensitivity block)
    assert grid_calls < 2 * 2000, grid_calls


def test_a_duplicate_grid_value_is_still_found_where_it_is(config_copy):
    f = _add(config_copy, "harrington2003/dupgrid.yaml", experiment_text(
        "harrington2003", "dupgrid",
        "algorithms:\n  wh: {estimator: widrow_hoff, label: WH, grid: {eta: [0.3, 0.1, 0.2, 0.10, 0.2]}}\n"))
    try:
        with pytest.raises(ConfigError) as err:
            load_experiment("harrington2003/dupgrid", "smoke", config_dir=config_copy)
    finally:
        f.unlink()
    assert err.value.key == "algorithms.wh.grid.eta[3]", str(err.value)  # the first repeat, as before


def test_a_grid_beyond_the_stated_bound_is_refused(config_copy):
    f = _grid_experiment(config_copy, MAX_CELLS, "toobig")  # plus PRank: one cell over the bound
    try:
        with pytest.raises(ConfigError) as err:
            load_experiment("harrington2003/toobig", "smoke", config_dir=config_copy)
    finally:
        f.unlink()
    assert err.value.key == "algorithms.wh.grid" and f"{MAX_CELLS + 1:,} cells" in str(err.value)


# ---------------------------------------------------------------- item 6: damage named


def _full_disk(monkeypatch, after: int = 5):
    """Every text write puts ``after`` characters on disk, then fails as a full disk does."""
    def write_text(self, data, encoding=None, errors=None, newline=None):
        with open(self, "w", encoding=encoding or "utf-8") as fh:
            fh.write(data[:after])
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(pathlib.Path, "write_text", write_text)


def test_a_full_disk_names_the_file_and_leaves_no_partial_file(tmp_path, monkeypatch):
    from rankrepro.files import WriteFailed

    exp = load_experiment("harrington2003/table1", "smoke", config_dir=CONFIG)
    target = tmp_path / "results" / "harrington2003" / "table1.config.yaml"
    target.parent.mkdir(parents=True)
    _full_disk(monkeypatch)
    with pytest.raises(WriteFailed) as err:
        write_resolved(exp, target)
    assert str(target) in str(err.value) and "No space left on device" in str(err.value)
    assert "\n" not in str(err.value)
    assert list(target.parent.iterdir()) == []  # neither the file nor a .tmp


def test_a_full_disk_in_a_fingerprint_or_report_write_leaves_no_partial_file(tmp_path, monkeypatch):
    from rankrepro.files import WriteFailed
    from rankrepro.pipeline.freshness import write_fingerprint

    exp = load_experiment("harrington2003/table1", "smoke", config_dir=CONFIG)
    fp = tmp_path / "cells" / "prank.fingerprint"
    fp.parent.mkdir()
    fp.write_text("the previous fingerprint\n")
    fp.with_suffix(".parquet").write_bytes(b"the cell's results")  # its sha256 goes into the fingerprint file
    _full_disk(monkeypatch)
    with pytest.raises(WriteFailed) as err:
        write_fingerprint(exp, exp.cells[0].id, None, fp)
    assert str(fp) in str(err.value)
    monkeypatch.undo()
    assert fp.read_text() == "the previous fingerprint\n"  # untouched, not truncated
    assert sorted(p.name for p in fp.parent.iterdir()) == ["prank.fingerprint", "prank.parquet"]


def _report_tree(tmp_path, text: str) -> pathlib.Path:
    rec = tmp_path / "results" / "harrington2003" / "table1.json"
    rec.parent.mkdir(parents=True)
    rec.write_text(text)
    return rec


GOOD = (pathlib.Path(__file__).resolve().parents[1] / "results" / "harrington2003" / "table1.json").read_text()


@pytest.mark.parametrize("damage,problem", [
    (lambda t: t[: len(t) // 2], "truncated"),
    (lambda t: t.replace('"mean": ', '"mean": NaN, "was": ', 1), "NaN"),
    (lambda t: t.replace('"mean": ', '"mean": 1e999, "was": ', 1), "1e999"),
    (lambda t: "[1, 2]", "not a JSON object"),
    (lambda t: json.dumps({k: v for k, v in json.loads(t).items() if k != "paper"}), "'paper'"),
], ids=["truncated", "nan", "overflow", "list", "no-paper"])
def test_make_report_on_a_damaged_record_is_one_line_naming_it(tmp_path, monkeypatch, capsys, damage, problem):
    from rankrepro import cli

    rec = _report_tree(tmp_path, damage(GOOD))
    monkeypatch.chdir(tmp_path)
    rc = cli.main(["report"])
    err = capsys.readouterr().err.strip()
    assert rc == 1
    assert len(err.splitlines()) == 1, err
    assert str(rec.relative_to(tmp_path)) in err and problem in err, err
    assert not (tmp_path / "results" / "report" / "index.html").exists()


def test_make_report_calls_the_one_line_command():
    make = (pathlib.Path(__file__).resolve().parents[1] / "Makefile").read_text()
    body = make.split("\nreport:", 1)[1].split("\n\n", 1)[0]
    assert "rankrepro.cli report" in body


def test_readers_of_project_files_name_the_file(tmp_path):
    from rankrepro.files import DamagedFile
    from rankrepro.pipeline.freshness import manifest_identity

    man = tmp_path / "manifest.json"
    man.write_text('{"sources": {"a": "b"}')
    with pytest.raises(DamagedFile) as err:
        manifest_identity(man)
    assert str(man) in str(err.value) and "processed-data manifest" in str(err.value)


# ---------------------------------------------------------------- item 8: Markdown escaped

HOSTILE = '<img src=x onerror=alert(1)> a|b &amp; <script>x</script>'


def _table_cells(line: str) -> list[str]:
    """The cells of a GFM table row, split as GFM does: on every '|' not escaped by a backslash."""
    return [c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]


def _raw_html(text: str) -> list[str]:
    """What CommonMark would read as raw HTML: '<' followed by a tag name, '/', '!' or '?'."""
    return re.findall(r"<[A-Za-z/!?][^>]*>", text)


def test_the_artefact_markdown_escapes_config_text():
    from rankrepro.report.artefact import markdown

    exp = load_experiment("harrington2003/table1", "smoke", config_dir=CONFIG)
    OmegaConf.set_readonly(exp.cfg, False)
    exp.cfg.experiment.title = HOSTILE
    exp.cfg.experiment.notes = [HOSTILE]
    row = {"metric": exp.cfg.experiment.metrics[0], "round": 10, "label": HOSTILE, "mean": 0.5, "ci": 0.1,
           "published_mean": 0.4, "published_ci": None, "published_marks": "|", "difference": 0.1,
           "verdict": "differs", "overlap": None, "diagnosis": None}
    claim = {"id": "c", "verdict": "held", "text": HOSTILE, "evidence": HOSTILE}
    md = markdown(exp, [row], [claim], data_label=HOSTILE)
    assert _raw_html(md) == [], _raw_html(md)
    header, table_row = [ln for ln in md.splitlines() if ln.startswith("| ")][:2]
    assert len(_table_cells(table_row)) == len(_table_cells(header)) == 8
    assert _table_cells(table_row)[0] == "&lt;img src=x onerror=alert(1)> a&#124;b &amp;amp; &lt;script>x&lt;/script>"
    assert "p < 0.05" in markdown(exp, [], [], data_label="p < 0.05")  # text that is not HTML stays


def test_the_arena_markdown_escapes_config_text():
    from rankrepro.report.arena import markdown

    rec = json.loads((pathlib.Path(__file__).resolve().parents[1] / "results" / "arena" / "comparison"
                      / "online.json").read_text())
    rec["title"] = rec["description"] = HOSTILE
    rec["notes"] = [HOSTILE]
    rec["learners"][0]["label"] = HOSTILE
    rec["experiments"][0]["dataset"] = "data|set"
    md = markdown(rec)
    assert _raw_html(md) == [], _raw_html(md)
    rows = [ln for ln in md.splitlines() if ln.startswith("| ")]
    assert len({len(_table_cells(r)) for r in rows[: len(rec["learners"]) + 1]}) == 1


# ---------------------------------------------------------------- item 9: clear refusals


def _mirror_with(tmp_path, make) -> tuple:
    from rankrepro.data.fetch import Paths
    from rankrepro.data.registry import DATASETS

    entry = next(e for e in DATASETS.values() if e.mirror_dir and e.files)
    rel = next(iter(entry.files))
    mirror = tmp_path / "mirror"
    f = mirror / entry.mirror_dir / rel
    f.parent.mkdir(parents=True)
    make(f)
    return entry, rel, mirror, Paths.under(tmp_path / "root"), f


def test_a_fifo_in_the_mirror_is_reported_as_not_a_regular_file(tmp_path):
    from rankrepro.data.fetch import DataUnavailable, fetch

    entry, rel, mirror, paths, f = _mirror_with(tmp_path, os.mkfifo)
    with pytest.raises(DataUnavailable) as err:
        fetch(entry.name, paths, mirror=mirror, allow_network=False, log=lambda m: None)
    assert f"{f} in the mirror: not a regular file (a FIFO" in str(err.value)


def test_a_huge_sparse_file_in_the_mirror_is_refused_before_it_is_copied(tmp_path, monkeypatch):
    import shutil

    from rankrepro.data import fetch as fetch_module

    def sparse(f):
        with open(f, "wb") as fh:
            fh.truncate(512 << 20)  # 512 MiB, no block written

    entry, rel, mirror, paths, f = _mirror_with(tmp_path, sparse)
    copied = []
    monkeypatch.setattr(shutil, "copyfile", lambda *a, **k: copied.append(a))
    with pytest.raises(fetch_module.DataUnavailable) as err:
        fetch_module.fetch(entry.name, paths, mirror=mirror, allow_network=False, log=lambda m: None)
    assert "536,870,912 bytes" in str(err.value) and "refused before copying" in str(err.value)
    assert copied == []
    left = [p for p in (tmp_path / "root").rglob("*") if p.is_file()]
    assert sum(p.stat().st_size for p in left) < 1 << 20  # nothing of it in data/raw or quarantine


def test_the_docs_say_a_config_can_run_code():
    doc = (pathlib.Path(__file__).resolve().parents[1] / "docs" / "own_learner.md").read_text()
    assert "**A config can run code.**" in doc and "import time" in doc


def test_a_list_longer_than_the_bound_is_refused_before_hydra_composes_it(config_copy):
    """100,000 values were composed (~100 s) before the cell bound refused them; the file's list
    and an override's values are now counted first."""
    from rankrepro.pipeline.config_errors import YAML_MAX_LIST

    assert YAML_MAX_LIST == MAX_CELLS
    f = _grid_experiment(config_copy, MAX_CELLS + 1, "toolong")
    try:
        with pytest.raises(ConfigError) as err:
            load_experiment("harrington2003/toolong", "smoke", config_dir=config_copy)
    finally:
        f.unlink()
    assert err.value.key == "algorithms.wh.grid.eta" and "a list of 10,001 values" in str(err.value)
    with pytest.raises(ConfigError) as err:
        load_experiment("harrington2003/table1", "smoke", config_dir=config_copy,
                        overrides=["algorithms.widrow_hoff.grid.eta=[" + ",".join(["0.1"] * 100_000) + "]"])
    assert err.value.key == "algorithms.widrow_hoff.grid.eta" and "100,000 values" in str(err.value)


def test_a_truncated_cell_is_named(tmp_path):
    from rankrepro.files import DamagedFile
    from rankrepro.report.artefact import load_cells

    good = next((pathlib.Path(__file__).resolve().parents[1] / "results" / "harrington2003" / "table1" / "cells")
                .glob("*.parquet"))
    bad = tmp_path / good.name
    bad.write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    with pytest.raises(DamagedFile) as err:
        load_cells([bad])
    assert str(bad) in str(err.value) and "parquet" in str(err.value) and "\n" not in str(err.value)
