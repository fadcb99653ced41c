"""The examples in the docstrings run, and give what they say (doctest)."""
import doctest
import importlib
import pkgutil

import pytest

import rankrepro


def _modules_with_examples():
    out = []
    for m in pkgutil.walk_packages(rankrepro.__path__, "rankrepro."):
        spec = importlib.util.find_spec(m.name)
        if spec and spec.origin and spec.origin.endswith(".py") and ">>>" in open(spec.origin).read():
            out.append(m.name)
    return out


MODULES = _modules_with_examples()


def test_there_are_examples():
    assert "rankrepro.algorithms.base" in MODULES and len(MODULES) >= 5


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    res = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert res.failed == 0, f"{res.failed} of {res.attempted} examples of {name} failed (run python -m doctest -v)"
