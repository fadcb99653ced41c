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
