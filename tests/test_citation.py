"""Citation and releases (issue 43, item 4): CITATION.cff is valid Citation File Format 1.2.0
(its published JSON schema; `cffconvert --validate` where cffconvert is installed), and one
version number is the one everything names: rankrepro.__version__, pyproject.toml (as setuptools
reads it), `rankrepro --version`, CITATION.cff, CHANGELOG.md's newest release, a run's provenance,
and the README's "How to cite", which names the version of the committed records."""
import copy
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib

import pytest
import yaml

from conftest import ROOT

CFF = ROOT / "CITATION.cff"
SCHEMA = ROOT / "tests" / "data" / "citation-file-format" / "schema-1.2.0.json"
SEMVER = r"(?:0|[1-9]\d*)\.(?:0|[1-9]\d*)\.(?:0|[1-9]\d*)"


def _cff() -> dict:
    return yaml.safe_load(CFF.read_text())


def _errors(doc: dict) -> list[str]:
    import jsonschema

    schema = json.loads(SCHEMA.read_text())
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    v = cls(schema, format_checker=cls.FORMAT_CHECKER)
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in v.iter_errors(doc)]


def test_the_schema_is_the_published_one():
    import hashlib

    assert hashlib.sha256(SCHEMA.read_bytes()).hexdigest() == \
        "0b8d22140da702d766df318dcff3a91af2f39521298dcf36d76315fd99cc169b"
    assert json.loads(SCHEMA.read_text())["$id"] == "https://citation-file-format.github.io/1.2.0/schema.json"


def test_citation_cff_is_valid_cff_1_2_0():
    doc = _cff()
    assert doc["cff-version"] == "1.2.0"
    assert _errors(doc) == []
    # the schema check can fail: what the format requires, and nothing it does not know
    for broken in ({k: v for k, v in doc.items() if k != "authors"}, {**doc, "cff-version": "1.1.0"},
                   {**doc, "verison": "0.1.0"}, {**doc, "date-released": "26 November 2026"}):
        assert _errors(broken), broken.keys()
    refs = copy.deepcopy(doc)
    refs["references"][0].pop("authors")
    assert _errors(refs)


def _cffconvert() -> str | None:
    return os.environ.get("CFFCONVERT") or shutil.which("cffconvert")


@pytest.mark.skipif(_cffconvert() is None,
                    reason="cffconvert not installed (it cannot share an environment with Snakemake 9: "
                           "cffconvert 2.0.0 pins jsonschema<4); `pipx install cffconvert` or set CFFCONVERT")
def test_cffconvert_validates_it(tmp_path):
    exe = _cffconvert()
    r = subprocess.run([exe, "--validate", "-i", str(CFF)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    bad = tmp_path / "CITATION.cff"
    bad.write_text(CFF.read_text().replace("cff-version: 1.2.0", "cff-version: 1.2.0\nverison: 1"))
    r = subprocess.run([exe, "--validate", "-i", str(bad)], capture_output=True, text=True, timeout=120)
    assert r.returncode != 0


def _version() -> str:
    import rankrepro

    assert re.fullmatch(SEMVER, rankrepro.__version__), rankrepro.__version__
    return rankrepro.__version__


def test_pyproject_reads_the_one_version():
    from setuptools.config.pyprojecttoml import read_configuration

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" not in project["project"] and "version" in project["project"]["dynamic"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "rankrepro.__version__"}
    assert read_configuration(ROOT / "pyproject.toml")["project"]["version"] == _version()


def test_the_command_prints_it():
    r = subprocess.run([sys.executable, "-m", "rankrepro.cli", "--version"], cwd=ROOT, capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0 and r.stdout == f"rankrepro {_version()}\n"


def test_a_runs_provenance_names_it():
    from rankrepro.provenance import versions

    assert versions()["rankrepro"] == _version()


def _releases() -> list[tuple[str, str]]:
    return re.findall(rf"^## \[({SEMVER})\] - (\d{{4}}-\d{{2}}-\d{{2}})$", (ROOT / "CHANGELOG.md").read_text(),
                      re.M)


def test_changelog_is_keep_a_changelog_with_semantic_versions():
    text = (ROOT / "CHANGELOG.md").read_text()
    heads = re.findall(r"^## (.*)$", text, re.M)
    assert heads[0] == "[Unreleased]"
    rel = _releases()
    assert len(rel) == len(heads) - 1, f"a release heading not '## [x.y.z] - YYYY-MM-DD': {heads}"
    keys = [tuple(map(int, v.split("."))) for v, _ in rel]
    assert keys == sorted(keys, reverse=True) and len(set(keys)) == len(keys)
    assert [d for _, d in rel] == sorted((d for _, d in rel), reverse=True)
    for sub in re.findall(r"^### (.*)$", text, re.M):
        assert sub in ("Added", "Changed", "Deprecated", "Removed", "Fixed", "Security"), sub
    # the newest release is the version, released on the date CITATION.cff gives
    assert rel[0] == (_version(), str(_cff()["date-released"]))
    assert str(_cff()["version"]) == _version()


def test_readme_says_how_to_cite_and_which_version_made_the_committed_results():
    text = (ROOT / "README.md").read_text()
    section = text.split("## How to cite", 1)[1].split("\n## ", 1)[0]
    assert "CITATION.cff" in section and "CHANGELOG.md" in section
    named = set(re.findall(rf"\*\*rankrepro ({SEMVER})\*\*", section))
    assert len(named) == 1, section
    recorded = {}
    for p in (ROOT / "results").rglob("*.json"):
        rec = json.loads(p.read_text())
        v = rec.get("versions", {}).get("rankrepro") if isinstance(rec, dict) else None
        if v is not None:
            recorded.setdefault(v, []).append(str(p.relative_to(ROOT)))
    assert len(sum(recorded.values(), [])) >= 20, "the committed records name no version"
    assert set(recorded) == named, {v: ps[:3] for v, ps in recorded.items()}
