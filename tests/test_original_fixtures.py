"""The original data sets that cannot be had here, proven without having them: a fixture of each
official format (scripts/make_fixtures.py, written from the formats' documentation) taken where a
user would put the real files, then end to end through the workflow.

Fast (in `make test`): each fixture has the shape its protocols depend on, counted here from the
text with plain string operations (not with the project's readers); files put in
``data/raw/<name>/`` by hand, or found in a mirror folder named after the data set, are usable,
hashed when first fetched (they are not pinned by the registry), and a file changed afterwards is
refused.

Slow (marked ``fixtures``, `make test-fixtures`, several minutes): in a scratch copy of the
workflow at smoke scale, every artefact that uses a fixture's data set runs on it and its record
says original data, with verdicts against the published values (not references), and the
substitute untouched; the arena's experiments on those data sets too (original data, nothing
published to judge), and every arena family's comparison is built from them (its other members'
data from the data mirror); from a mirror folder as well; with the fixture removed, the artefact is back
on its substitute; the repository's committed records are never written.
"""
import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path

import pytest
import yaml

from conftest import data_mirror, scratch_workflow

ROOT = Path(__file__).resolve().parents[1]
SNAKEMAKE = Path(sys.executable).parent / "snakemake"
sys.path.insert(0, str(ROOT / "scripts"))
import make_fixtures  # noqa: E402

from rankrepro.data.registry import DATASETS  # noqa: E402

#: the artefacts of each fixture's data set (config/experiment/<paper>/<artefact>.yaml), with the
#: shared files their defaults name
ARTEFACTS = {
    "eachmovie": ["harrington2003/table2_eachmovie", "crammer_singer2005/fig7_min100",
                  "crammer_singer2005/fig7_min200", "yu2006/tables"],
    "letor3-td2003": ["elsas2008/table4_td2003"],
    "letor3-td2004": ["elsas2008/table4_td2004"],
    "yahoo-ltr-set1": ["shivaswamy2012/fig2", "shivaswamy2012/fig3"],
    "ohsumed-judged": ["harrington2003/table2_ohsumed"],
}
COMMON = ["harrington2003/_table2_common", "crammer_singer2005/_fig7_common", "elsas2008/_table4_common"]
#: the arena's experiments on a fixture's data set (config/experiment/arena/, each taking its data set
#: from the paper experiment its defaults name): on the original the day a user supplies it, as the papers'
ARENA = {
    "eachmovie": ["arena/online_eachmovie", "arena/online_min100", "arena/online_min200", "arena/collab_gp_n100",
                  "arena/collab_gp_n200", "arena/collab_gp_n300", "arena/collab_gp_n400"],
    "letor3-td2003": ["arena/letor_mq2008"],
}
#: the other members of those experiments' families (config/arena/<family>.yaml), on data sets that
#: can be had here (from the data mirror), with the paper experiments their defaults name: with them
#: every family's comparison is built; without the data mirror those families are left out
ARENA_OTHERS = {"arena/online_synthetic": ("harrington2003/table1", None),
                "arena/online_cystic_fibrosis": ("harrington2003/table2_cystic_fibrosis", "cystic-fibrosis"),
                "arena/letor_ohsumed": ("elsas2008/table4_ohsumed", "letor2-ohsumed")}
ARENA_COMMON = ["arena/_online", "arena/_collab_gp", "arena/_letor"]
#: artefacts whose paper prints numbers the record compares (the figures' are judged by claims)
TABLES = {"harrington2003/table2_eachmovie", "yu2006/tables", "elsas2008/table4_td2003", "elsas2008/table4_td2004",
          "harrington2003/table2_ohsumed"}


@pytest.fixture(scope="module")
def fixtures(tmp_path_factory):
    out = tmp_path_factory.mktemp("fixtures")
    make_fixtures.make(out)
    return out


def _lines(p: Path):
    return [line.rstrip("\n") for line in p.read_text(encoding="latin-1").splitlines() if line.strip()]


# -------------------------------------------------------------------------------------
# the fixtures' shape, counted from their text
# -------------------------------------------------------------------------------------
def test_each_fixture_holds_exactly_the_registry_files(fixtures):
    for name in make_fixtures.FIXTURES:
        got = sorted(str(p.relative_to(fixtures / name)) for p in (fixtures / name).rglob("*") if p.is_file())
        assert got == sorted(DATASETS[name].files), name


def test_every_artefact_on_a_fixtures_data_set_is_taken_end_to_end():
    """The papers' and the arena's artefacts listed above are all those the configs put on the
    fixtures' data sets (rankrepro.data.uses, itself checked against the composed catalog), and the
    arena's other members run on data sets that can be had."""
    from rankrepro.data.uses import artefacts_by_source

    uses = artefacts_by_source(ROOT / "config")
    for name in make_fixtures.FIXTURES:
        assert sorted([*ARTEFACTS.get(name, []), *ARENA.get(name, [])]) == uses.get(name, []), name
    for exp, (paper, src) in ARENA_OTHERS.items():
        assert src is None or (exp in uses[src] and paper in uses[src] and not DATASETS[src].substitutes), exp
    assert {m for members in _families(ROOT / "config").values() for m in members} \
        == {a for arts in ARENA.values() for a in arts} | set(ARENA_OTHERS)


def test_the_coactive_user_study_has_no_fixture_and_says_why(tmp_path):
    with pytest.raises(ValueError, match="never published"):
        make_fixtures.make(tmp_path, ["coactive-user-study"])
    r = subprocess.run([sys.executable, str(ROOT / "scripts/make_fixtures.py"), "--list"], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0 and "coactive-user-study: no fixture" in r.stdout


def _script(*args):
    return subprocess.run([sys.executable, str(ROOT / "scripts/make_fixtures.py"), *map(str, args)],
                          capture_output=True, text=True, timeout=120)


def test_an_existing_file_is_never_overwritten(tmp_path):
    """Before: `make_fixtures.py OUT eachmovie` silently replaced a Vote.txt already in OUT/eachmovie/
    (the real data a user had put there, say)."""
    (tmp_path / "eachmovie").mkdir()
    vote = tmp_path / "eachmovie" / "Vote.txt"
    vote.write_text("the real votes\n")
    r = _script(tmp_path, "eachmovie")
    assert r.returncode == 2 and r.stderr.strip().splitlines() == [
        f"make_fixtures.py: error: {vote} exists; refused, nothing written (make_fixtures.py never overwrites a "
        "file: give a new or empty OUT, or remove it)"], r.stderr
    assert vote.read_text() == "the real votes\n"
    assert sorted(p.name for p in (tmp_path / "eachmovie").iterdir()) == ["Vote.txt"]  # nothing else written


def test_an_unknown_name_is_one_line_naming_the_fixtures(tmp_path):
    r = _script(tmp_path, "nosuch")
    assert r.returncode == 2 and r.stderr.strip().splitlines() == [
        f"make_fixtures.py: error: no fixture for nosuch (fixtures: {', '.join(make_fixtures.FIXTURES)})"], r.stderr
    # checked before anything is written: a good name before it writes nothing either
    r = _script(tmp_path, "ohsumed-judged", "nosuch")
    assert r.returncode == 2 and not any(tmp_path.iterdir())


def test_the_same_seed_makes_the_same_files(fixtures, tmp_path):
    make_fixtures.make(tmp_path, ["ohsumed-judged"])
    assert (tmp_path / "ohsumed-judged/judged").read_bytes() == (fixtures / "ohsumed-judged/judged").read_bytes()


def test_eachmovie_votes_have_the_protocols_shape(fixtures):
    rows = [line.split("\t") for line in _lines(fixtures / "eachmovie/Vote.txt")]
    assert all(len(r) == 5 for r in rows)
    assert {r[2] for r in rows} <= {"0", "0.2", "0.4", "0.6", "0.8", "1"}
    assert {r[2] for r in rows} == {"0", "0.2", "0.4", "0.6", "0.8", "1"}  # every score of the scale occurs
    per = Counter(r[0] for r in rows)
    # Harrington's Table 2: people with more than 300 ratings, a target's first 300 (>= 2 needed)
    assert sum(c > 300 for c in per.values()) >= 20
    # Crammer & Singer's partitions: viewers with >= 200 and >= 100 ratings
    assert sum(c >= 200 for c in per.values()) >= 20 and sum(c >= 100 for c in per.values()) >= 100
    # Yu et al.: movies rated >= 50 times, then users with >= 20 ratings among them: more than the 100 tasks
    per_movie = Counter(r[1] for r in rows)
    popular = {m for m, c in per_movie.items() if c >= 50}
    kept = Counter(r[0] for r in rows if r[1] in popular)
    assert len(popular) >= 100 and sum(c >= 20 for c in kept.values()) > 100
    # each person's votes contiguous and in time order ("first" rated = first in the file)
    seen, last = set(), None
    for r in rows:
        if r[0] != last:
            assert r[0] not in seen
            seen.add(r[0])
            last, t = r[0], ""
        assert r[4] >= t
        t = r[4]
    assert len({(r[0], r[1]) for r in rows}) == len(rows)
    people = {line.split("\t")[0] for line in _lines(fixtures / "eachmovie/Person.txt")}
    movies = {line.split("\t")[0] for line in _lines(fixtures / "eachmovie/Movie.txt")}
    assert set(per) <= people and set(per_movie) <= movies


def _svmlight(p: Path):
    out = []
    for line in _lines(p):
        body, _, comment = line.partition("#")
        tok = body.split()
        out.append((int(tok[0]), int(tok[1].removeprefix("qid:")), [int(t.split(":")[0]) for t in tok[2:]],
                    [float(t.split(":")[1]) for t in tok[2:]], comment))
    return out


def test_yahoo_set1_has_700_feature_ids_grades_0_to_4_and_distinct_queries(fixtures):
    qids = {}
    grades = Counter()
    for part in ("train", "valid", "test"):
        rows = _svmlight(fixtures / f"yahoo-ltr-set1/set1.{part}.txt")
        for y, q, ids, vals, _ in rows:
            assert 0 <= y <= 4 and ids == sorted(ids) and 1 <= min(ids) and max(ids) <= 700
            assert all(0 <= v <= 1 for v in vals)
            grades[y] += 1
        qids[part] = {r[1] for r in rows}
    assert set(grades) == {0, 1, 2, 3, 4} and grades[0] > grades[4]
    assert not (qids["train"] & qids["valid"]) and not (qids["train"] & qids["test"]) and not (qids["valid"] & qids["test"])
    assert sum(map(len, qids.values())) >= 100


@pytest.mark.parametrize("name", ["letor3-td2003", "letor3-td2004"])
def test_gov_folds_rotate_five_subsets_with_64_features_and_a_relevant_document_per_query(fixtures, name):
    test_sets = []
    for k in range(1, 6):
        parts = {}
        for part in ("trainingset", "validationset", "testset"):
            rows = _svmlight(fixtures / name / f"Fold{k}/{part}.txt")
            assert all(y in (0, 1) and ids == list(range(1, 65)) and "docid = " in c for y, _, ids, _, c in rows)
            rel = defaultdict(int)
            for y, q, *_ in rows:
                rel[q] += y
            assert all(v >= 1 for v in rel.values()), (k, part)
            parts[part] = set(rel)
        assert not (parts["trainingset"] & parts["validationset"]) and not (parts["trainingset"] & parts["testset"])
        assert not (parts["validationset"] & parts["testset"])
        test_sets.append(parts["testset"])
        if k == 1:
            everyone = set().union(*parts.values())
        assert set().union(*parts.values()) == everyone
    # each query is a test query in exactly one fold
    assert sorted(q for s in test_sets for q in s) == sorted(everyone)


def test_ohsumed_judged_is_sorted_and_judged_twice_often_enough_for_the_protocol(fixtures):
    rows = [line.split() for line in _lines(fixtures / "ohsumed-judged/judged")]
    assert all(len(r) == 6 and all(j in ("d", "p", "n", "-") for j in r[3:]) for r in rows)
    keys = [(int(r[0]), int(r[1])) for r in rows]
    assert keys == sorted(keys) and len(set(keys)) == len(keys)
    twice = sum(sum(j != "-" for j in r[3:]) >= 2 for r in rows)
    assert twice > 0.1 * len(rows)  # the readme: over 10% judged in duplicate
    exp = yaml.safe_load((ROOT / "config/experiment/harrington2003/table2_ohsumed.yaml").read_text())["experiment"]
    assert twice >= exp["n_train"] + exp["n_test"]  # the paper's sizes: a different pair every round


@pytest.mark.parametrize("name", list(make_fixtures.FIXTURES))
def test_the_registry_reader_reads_each_fixture(fixtures, name, tmp_path):
    from rankrepro.data.fetch import Paths
    from rankrepro.data.preprocess import build

    paths = Paths.under(tmp_path)
    shutil.copytree(fixtures / name, paths.raw / name)
    arrays = build(name, paths, progress=lambda m: None)
    if name == "eachmovie":
        assert arrays["user"].size == len(_lines(fixtures / name / "Vote.txt")) and len(arrays["scale"]) == 6
    elif name == "ohsumed-judged":
        assert arrays["scores"].shape == (len(_lines(fixtures / name / "judged")), 3)
    else:
        assert arrays["X"].shape[1] == DATASETS[name].params["n_features"]
        assert arrays["y"].max() == DATASETS[name].params["max_label"]


# -------------------------------------------------------------------------------------
# unpinned files: usable from data/raw or a mirror folder, hashed on first use, refused once changed
# -------------------------------------------------------------------------------------
def _sha(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


@pytest.fixture
def here(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("RANKREPRO_DATA_MIRROR", raising=False)
    monkeypatch.setenv("RANKREPRO_OFFLINE", "1")
    return tmp_path


def test_files_put_in_data_raw_are_used_hashed_on_first_use_and_refused_once_changed(fixtures, here):
    from rankrepro.data.fetch import ChecksumError, availability, fetch
    from rankrepro.data.preprocess import preprocess
    from rankrepro.data.status import data_status

    shutil.copytree(fixtures / "eachmovie", here / "data/raw/eachmovie")
    assert availability("eachmovie", probe=False).state == "placed"
    s = data_status("eachmovie", probe=False)
    assert s.runnable and s.used == "eachmovie" and s.substitute_for is None
    man = json.loads(fetch("eachmovie", allow_network=False, log=lambda m: None).read_text())
    for rel in DATASETS["eachmovie"].files:
        assert man["files"][rel]["sha256"] == _sha(here / "data/raw/eachmovie" / rel)
        assert man["files"][rel]["pinned"] is False
    a = availability("eachmovie", probe=False)
    assert a.state == "unpinned" and "not verified" in a.reason  # never called verified
    preprocess("eachmovie", progress=lambda m: None)
    # a score changed afterwards (same size): noticed, refused by name, never silently used
    vote = here / "data/raw/eachmovie/Vote.txt"
    text = vote.read_text()
    i = text.index("\t", text.index("\t") + 1) + 1  # the first line's score
    vote.write_text(text[:i] + ("1" if text[i] != "1" else "0") + text[i + 1:])
    a = availability("eachmovie", probe=False)
    assert a.state == "changed" and "Vote.txt" in a.reason
    with pytest.raises(ChecksumError, match="Vote.txt"):
        preprocess("eachmovie", progress=lambda m: None)
    s = data_status("eachmovie", probe=False)
    assert not s.runnable and "changed after it was verified" in s.reason  # no substitute here either


def test_a_mirror_folder_named_after_the_data_set_is_read_and_recorded(fixtures, here, monkeypatch):
    from rankrepro.data.fetch import availability, fetch

    mirror = here / "mirror"
    shutil.copytree(fixtures / "letor3-td2003", mirror / "letor3-td2003")
    assert availability("letor3-td2003", probe=False).state == "absent"
    monkeypatch.setenv("RANKREPRO_DATA_MIRROR", str(mirror))
    assert availability("letor3-td2003", probe=False).state == "mirror"
    with pytest.warns(UserWarning):
        man = json.loads(fetch("letor3-td2003", allow_network=False, log=lambda m: None).read_text())
    for rel, rec in man["files"].items():
        assert rec["source"].startswith("mirror ") and rec["sha256"] == _sha(mirror / "letor3-td2003" / rel)
    # the mirror's copy changed afterwards does not change what was fetched; the raw copy changed is refused
    raw = here / "data/raw/letor3-td2003/Fold2/testset.txt"
    raw.write_text(raw.read_text().replace("qid:", "qid:1", 1))
    a = availability("letor3-td2003", probe=False)
    assert a.state == "changed" and "Fold2/testset.txt" in a.reason


def test_a_data_set_partly_put_in_data_raw_is_not_used(fixtures, here):
    from rankrepro.data.fetch import availability

    (here / "data/raw/yahoo-ltr-set1").mkdir(parents=True)
    shutil.copy(fixtures / "yahoo-ltr-set1/set1.train.txt", here / "data/raw/yahoo-ltr-set1/")
    assert availability("yahoo-ltr-set1", probe=False).state == "absent"


# -------------------------------------------------------------------------------------
# end to end through the workflow (slow: `make test-fixtures`)
# -------------------------------------------------------------------------------------
def _families(config: Path) -> dict[str, list[str]]:
    """config/arena/<family>.yaml -> its member experiments (read with yaml alone)."""
    return {f.stem: yaml.safe_load(f.read_text())["experiments"] for f in sorted((config / "arena").glob("*.yaml"))}


def _workflow(w: Path, artefacts) -> Path:
    scratch_workflow(w)
    for rel in [*artefacts, *COMMON]:
        (w / "config/experiment" / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / "config/experiment" / f"{rel}.yaml", w / "config/experiment" / f"{rel}.yaml")
    # an arena family is compared only with all its members: one that lacks some here is left out
    for family, members in _families(w / "config").items():
        if not all((w / "config/experiment" / f"{m}.yaml").is_file() for m in members):
            (w / "config/arena" / f"{family}.yaml").unlink()
    return w


def _snakemake(w: Path, mirror: Path | None):
    env = {k: v for k, v in os.environ.items() if k != "RANKREPRO_DATA_MIRROR"}
    env["RANKREPRO_OFFLINE"] = "1"
    if mirror is not None:
        env["RANKREPRO_DATA_MIRROR"] = str(mirror)
    r = subprocess.run([str(SNAKEMAKE), "--cores", "2", "--config", "scale=smoke", "batch_cells=paper"], cwd=w,
                       env=env, capture_output=True, text=True, timeout=1800)
    # the whole output kept beside the scratch workflow (numbered: a test may run it twice)
    n = len(list(w.glob("snakemake-*.log")))
    (w / f"snakemake-{n}.log").write_text(r.stdout + "\n--- stderr ---\n" + r.stderr)
    assert r.returncode == 0, f"{w}/snakemake-{n}.log:\n" + r.stderr[-4000:]
    return r


def _record(w: Path, rel: str) -> dict:
    return json.loads((w / "runs/smoke/results" / f"{rel}.json").read_text())


def _committed():
    return {p: _sha(p) for p in sorted((ROOT / "results").rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def committed_before():
    return _committed()


def _others_mirror(tmp_path_factory) -> Path | None:
    """A mirror folder with only the data sets of the arena families' other members (none of the
    fixtures' substitutes), linked from the data mirror; None without it."""
    shared = data_mirror()
    sources = [src for _, src in ARENA_OTHERS.values() if src]
    if shared is None or not all((shared / s).is_dir() for s in sources):
        return None
    mirror = tmp_path_factory.mktemp("others_mirror")
    for s in sources:
        (mirror / s).symlink_to(shared / s)
    return mirror


@pytest.fixture(scope="module")
def raw_run(fixtures, tmp_path_factory, committed_before):
    """Every fixture in data/raw/<name>/: every artefact of their data sets at smoke scale, the
    papers' and the arena's; with the data mirror, the other members of the arena's families
    too (their data sets from a mirror folder holding only those), so every family is compared.
    No substitute of a fixture is anywhere the workflow looks."""
    mirror = _others_mirror(tmp_path_factory)
    others = [rel for exp, (paper, _) in ARENA_OTHERS.items() for rel in (exp, paper)] if mirror else []
    w = _workflow(tmp_path_factory.mktemp("raw"), [*(a for arts in ARTEFACTS.values() for a in arts),
                                                   *(a for arts in ARENA.values() for a in arts),
                                                   *ARENA_COMMON, *others])
    for name in ARTEFACTS:
        shutil.copytree(fixtures / name, w / "data/raw" / name)
    r = _snakemake(w, mirror)
    return w, r


def _assert_original(rec: dict, name: str, rel: str):
    assert rec["status"] == "ran", rel
    ds = rec["dataset"]
    assert ds["original"] is True and ds["substitute_for"] is None, (rel, ds)
    assert ds["source"] == ds["used"] == name and not ds["label"].startswith("SUBSTITUTE"), (rel, ds)
    verdicts = [row["verdict"] for row in rec["table"] if row.get("published_mean") is not None]
    assert "reference" not in verdicts, rel
    if rel in TABLES:
        assert verdicts and set(verdicts) <= {"consistent", "differs"}, (rel, Counter(verdicts))
    claims = [c["verdict"] for c in rec.get("claims") or []]
    assert claims and "reference" not in claims, rel


@pytest.mark.fixtures
@pytest.mark.parametrize("name,rel", [(n, a) for n, arts in ARTEFACTS.items() for a in arts])
def test_each_artefact_runs_on_its_original_from_data_raw(raw_run, name, rel):
    w, _ = raw_run
    rec = _record(w, rel)
    _assert_original(rec, name, rel)
    # the sources the record names are the fixture's own files, every data file of it
    assert set(rec["dataset"]["sources"]) == set(DATASETS[name].data_files)
    for f, h in rec["dataset"]["sources"].items():
        assert h == _sha(w / "data/raw" / name / f)


def _assert_arena_original(rec: dict, name: str, rel: str, w: Path):
    """An arena experiment's record on the fixture: original data, the fixture's own files; the
    arena publishes nothing and claims nothing, so no row has a published value to judge."""
    assert rec["status"] == "ran", rel
    ds = rec["dataset"]
    assert ds["original"] is True and ds["substitute_for"] is None, (rel, ds)
    assert ds["source"] == ds["used"] == name and not ds["label"].startswith("SUBSTITUTE"), (rel, ds)
    assert set(ds["sources"]) == set(DATASETS[name].data_files), rel
    for f, h in ds["sources"].items():
        assert h == _sha(w / "data/raw" / name / f), (rel, f)
    assert rec["table"] and all(row["published_mean"] is None and row["verdict"] is None for row in rec["table"]), rel
    assert not rec.get("claims"), rel


@pytest.mark.fixtures
@pytest.mark.parametrize("name,rel", [(n, a) for n, arts in ARENA.items() for a in arts])
def test_each_arena_experiment_runs_on_its_original_from_data_raw(raw_run, name, rel):
    w, _ = raw_run
    _assert_arena_original(_record(w, rel), name, rel, w)


@pytest.mark.fixtures
@pytest.mark.parametrize("family", sorted(_families(ROOT / "config")))
def test_each_arena_family_with_a_fixture_is_compared_from_the_originals_records(raw_run, family):
    """The family's comparison is built in the run, over all its members, and each learner's value on
    a fixture's experiment is the mean of that experiment's own record (its cell on the original)."""
    w, _ = raw_run
    members = _families(ROOT / "config")[family]
    on_fixture = [m for m in members if any(m in arts for arts in ARENA.values())]
    assert on_fixture, family  # every family has a member on an original that cannot be had here
    if not (w / "config/arena" / f"{family}.yaml").is_file():
        pytest.skip(f"the family's other members need the data mirror (conftest.NO_MIRROR): {members}")
    comp = json.loads((w / "runs/smoke/results/arena/comparison" / f"{family}.json").read_text())
    assert comp["status"] == "compared" and [e["name"] for e in comp["experiments"]] == members, family
    assert (w / "runs/smoke/figures/arena/comparison" / f"cd_{family}.png").is_file()
    metric = yaml.safe_load((ROOT / "config/arena" / f"{family}.yaml").read_text())["metric"]
    checked = 0
    for m in on_fixture:
        rows = _record(w, m)["table"]
        for learner in comp["learners"]:
            v = learner["values"][m]
            means = [r["mean"] for r in rows if r["cell"] == v["cell"] and r["metric"] == metric]
            assert any(abs(x - v["mean"]) <= 1e-12 * max(1.0, abs(x)) for x in means), (family, m, learner["key"])
            checked += 1
    assert checked >= 2 * len(on_fixture)


def _report(w: Path) -> str:
    return (w / "runs/smoke/results/report/index.html").read_text()


@pytest.mark.fixtures
def test_the_report_labels_nothing_as_substitute(raw_run):
    w, _ = raw_run
    html = _report(w)
    assert "table2_eachmovie" in html and "SUBSTITUTE" not in html


@pytest.mark.fixtures
def test_from_a_mirror_folder_then_back_on_the_substitute_when_removed(fixtures, tmp_path_factory, committed_before):
    """The fixtures in a mirror folder (beside the substitutes' folders, when the data mirror is
    here): the records are original and the substitute untouched; the fixture removed, the same
    artefacts run again on the substitute, labelled as such, with references instead of verdicts;
    the arena's experiments on the same data sets likewise (original, then the substitute)."""
    shared = data_mirror()
    names = ["eachmovie", "letor3-td2003"]
    arts = ["harrington2003/table2_eachmovie", "elsas2008/table4_td2003"]
    arena = ["arena/online_eachmovie", "arena/letor_mq2008"]
    w = _workflow(tmp_path_factory.mktemp("mirror"), [*arts, *arena, *ARENA_COMMON])
    mirror = tmp_path_factory.mktemp("mirror_folder")
    for n in names:
        shutil.copytree(fixtures / n, mirror / n)
    subs = {"movielens-1m-bpmf", "letor4-mq2008"}
    if shared is not None:
        for s in subs:
            if (shared / s).is_dir():
                (mirror / s).symlink_to(shared / s)
    _snakemake(w, mirror)
    for n, rel in zip(names, arts):
        rec = _record(w, rel)
        _assert_original(rec, n, rel)
        man = json.loads((w / "data/raw" / n / "MANIFEST.json").read_text())
        assert all(f["source"].startswith(f"mirror {mirror / n}") for f in man["files"].values())
        # the record's sources are the fixture's files, although the substitute was there too
        # (the workflow fetches every data set it can have; an artefact runs on its own first)
        assert rec["dataset"]["sources"] == {f: _sha(mirror / n / f) for f in DATASETS[n].data_files}
    for n, rel in zip(names, arena):
        rec = _record(w, rel)
        _assert_arena_original(rec, n, rel, w)
        assert rec["dataset"]["sources"] == {f: _sha(mirror / n / f) for f in DATASETS[n].data_files}
    assert "SUBSTITUTE" not in _report(w)
    if shared is None or not all((mirror / s).exists() for s in subs):
        pytest.skip("the substitutes' part needs the data mirror (conftest.NO_MIRROR)")
    # the fixture removed (from the mirror and from where the workflow had put it): the substitutes again
    for n in names:
        shutil.rmtree(mirror / n)
        shutil.rmtree(w / "data/raw" / n)
        shutil.rmtree(w / "data/processed" / n)
    _snakemake(w, mirror)
    for n, rel in zip(names, arts):
        rec = _record(w, rel)
        ds = rec["dataset"]
        assert ds["original"] is False and ds["substitute_for"] == n and ds["used"] in subs, (rel, ds)
        verdicts = {row["verdict"] for row in rec["table"] if row.get("published_mean") is not None}
        assert verdicts == {"reference"}, (rel, verdicts)
    for n, rel in zip(names, arena):
        ds = _record(w, rel)["dataset"]
        assert ds["original"] is False and ds["substitute_for"] == n and ds["used"] in subs, (rel, ds)
        assert ds["label"].startswith("SUBSTITUTE") and set(ds["sources"]) == set(DATASETS[ds["used"]].data_files)
    assert "SUBSTITUTE" in _report(w)
    assert _committed() == committed_before


@pytest.mark.fixtures
def test_the_committed_records_are_never_written(raw_run, committed_before):
    """Nothing of the above wrote to the repository's results/ (the runs write under their
    scratch copies' runs/smoke/): every committed file is byte-identical."""
    assert _committed() == committed_before
