"""Fixture-format data a user supplies by hand, accepted wrongly before (issue 58, item 5): each
is now refused by preprocessing with one line naming the file and line (a ReaderError)."""
from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import make_fixtures  # noqa: E402

from rankrepro.data.fetch import Paths  # noqa: E402
from rankrepro.data.ir_readers import read_letor2_tsv  # noqa: E402
from rankrepro.data.preprocess import build  # noqa: E402
from rankrepro.data.readers import ReaderError  # noqa: E402


@pytest.fixture(scope="module")
def fixtures(tmp_path_factory):
    out = tmp_path_factory.mktemp("fixtures")
    make_fixtures.make(out, ["yahoo-ltr-set1", "letor3-td2003"])
    return out


def _cut(d: Path) -> None:
    p = d / "set1.train.txt"
    b = p.read_bytes()
    p.write_bytes(b[:len(b) - 7])  # mid-line: the last line loses its end and a value's last digits


def _valid_query_is_a_training_query(d: Path) -> None:
    q = (d / "set1.train.txt").read_text().split()[1]
    lines = (d / "set1.valid.txt").read_text().splitlines(True)
    qv = lines[0].split()[1]
    (d / "set1.valid.txt").write_text("".join(x.replace(qv + " ", q + " ", 1) if x.split()[1] == qv else x
                                              for x in lines))


def _fold3_is_fold1(d: Path) -> None:  # each fold consistent in itself; Fold3's test set is Fold1's
    for f in ("trainingset.txt", "validationset.txt", "testset.txt"):
        shutil.copy(d / "Fold1" / f, d / "Fold3" / f)


def _fold3_test_is_fold1_test(d: Path) -> None:
    shutil.copy(d / "Fold1/testset.txt", d / "Fold3/testset.txt")


def _63_features(d: Path) -> None:
    p = d / "Fold1/trainingset.txt"
    lines = p.read_text().splitlines(True)
    lines[3] = re.sub(r" 64:\S+", "", lines[3])
    p.write_text("".join(lines))


CASES = [
    ("yahoo-ltr-set1", _cut, r"set1\.train\.txt:\d+: the file ends inside this line"),
    ("yahoo-ltr-set1", _valid_query_is_a_training_query, r"set1\.valid\.txt:1: qid \d+ is also in .*set1\.train\.txt"),
    ("letor3-td2003", _fold3_is_fold1, r"Fold3/(validation|test)set\.txt:1: qid \d+ is also in .*Fold1/\1set\.txt .*sets of two folds"),
    ("letor3-td2003", _fold3_test_is_fold1_test, r"Fold3/testset\.txt:1: qid \d+ is also in"),
    ("letor3-td2003", _63_features, r"Fold1/trainingset\.txt:4: 63 of the 64 features listed"),
]


@pytest.mark.parametrize("name,damage,message", CASES, ids=[c[1].__name__ for c in CASES])
def test_a_damaged_fixture_is_refused_naming_file_and_line(fixtures, tmp_path, name, damage, message):
    paths = Paths.under(tmp_path)
    shutil.copytree(fixtures / name, paths.raw / name)
    build(name, paths, progress=lambda m: None)  # as made, it is read
    damage(paths.raw / name)
    with pytest.raises(ReaderError) as err:
        build(name, paths, progress=lambda m: None)
    assert re.search(message, str(err.value)), str(err.value)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("label", [3, 300])
def test_a_letor2_label_outside_the_grades_is_refused(tmp_path, label):
    p = tmp_path / "testset.txt"
    p.write_text("1\t1_d1\t" + " ".join(["0.5"] * 25) + "\t2\n")
    assert read_letor2_tsv(p).y.tolist() == [2]
    p.write_text("1\t1_d1\t" + " ".join(["0.5"] * 25) + f"\t{label}\n")
    with pytest.raises(ReaderError, match=rf"testset\.txt:1: label {label} outside 0\.\.2"):
        read_letor2_tsv(p)
