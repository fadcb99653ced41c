"""environment.yml (conda users) and pyproject.toml (pip) must list the same dependencies."""
import re
import tomllib

import yaml

from conftest import ROOT


def _name(spec: str) -> str:
    return re.split(r"[<>=!~ \[]", spec.strip(), maxsplit=1)[0].lower().replace("_", "-")


def _norm(spec: str) -> str:
    return spec.replace(" ", "").lower()


def test_environment_yml_matches_pyproject():
    py = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = {_name(s): _norm(s) for s in py["dependencies"] + py["optional-dependencies"]["test"]}
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    conda = {_name(s): _norm(s) for s in env["dependencies"] if isinstance(s, str) and _name(s) not in ("python", "pip")}
    assert conda == wanted, f"only in environment.yml: {set(conda.items()) - set(wanted.items())}; " \
                            f"only in pyproject.toml: {set(wanted.items()) - set(conda.items())}"
    pip_block = [d for d in env["dependencies"] if isinstance(d, dict)]
    assert pip_block and "-e ." in pip_block[0]["pip"], "environment.yml must install the package itself"


def test_python_versions_agree():
    py = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["requires-python"]
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    assert f"python{py}" in [d.replace(" ", "") for d in env["dependencies"] if isinstance(d, str)]


def _closure(requirements: list[str]) -> set[str]:
    """Every distribution a fresh `pip install -e .` brings in: the declared requirements and,
    recursively, theirs (markers evaluated here, extras only where asked for), read from the
    installed metadata."""
    from importlib import metadata

    from packaging.requirements import Requirement

    seen: set[str] = set()
    todo = [(Requirement(r), "") for r in requirements]
    while todo:
        req, extra = todo.pop()
        if req.marker is not None and not req.marker.evaluate({"extra": extra}):
            continue
        name = req.name.lower().replace("_", "-")
        key = f"{name}[{','.join(sorted(req.extras))}]"
        if key in seen:
            continue
        seen.add(key)
        try:
            sub = metadata.requires(name) or []
        except metadata.PackageNotFoundError:
            continue
        for r in sub:
            r = Requirement(r)
            for ex in [""] + sorted(req.extras):
                todo.append((r, ex))
    return {k.split("[")[0] for k in seen}


def test_snakemake_report_needs_nothing_undeclared():
    """`snakemake --report` (README: Snakemake's report) imports pygments, which Snakemake
    installs only with its 'reports' extra, and jinja2 (the report templates): a fresh
    environment made from the main dependencies (no test extras: pytest brings pygments too)
    must have both."""
    py = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    got = _closure(py["dependencies"])
    assert "snakemake" in got
    assert {"pygments", "jinja2"} <= got, f"missing from a fresh install: {sorted({'pygments', 'jinja2'} - got)}"
