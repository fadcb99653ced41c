"""The kept catalog is only a cache (issue 41, item 2): a file in the cache folder is used only
when this user's project sealed it (HMAC-SHA256 under a per-user secret, checked on the bytes
before anything in the file is parsed, built or imported).  A valid JSON catalog planted under
the right key (a hash anyone can compute from a checkout) changes nothing: the experiment loaded
is the one its YAML composes, and a ``_target_`` named in the planted file is never imported."""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import shutil
import stat
import sys
from pathlib import Path

import pytest

from rankrepro.config_files import list_experiments
from rankrepro.pipeline import cache
from rankrepro.pipeline import catalog as catalog_mod
from rankrepro.pipeline.catalog import catalog_key, load_catalog

NAME = "harrington2003/table1"


def _one_experiment(tmp: Path, config_dir: Path) -> Path:
    cfg = tmp / "config"
    shutil.copytree(config_dir, cfg)
    for f in (cfg / "experiment").rglob("*.yaml"):
        if not f.name.startswith("_") and f.relative_to(cfg / "experiment").as_posix() != f"{NAME}.yaml":
            f.unlink()
    for f in (cfg / "diagnoses").rglob("*.yaml"):  # a diagnoses file needs its experiment
        if f.relative_to(cfg / "diagnoses").as_posix() != f"{NAME}.yaml":
            f.unlink()
    assert list_experiments(cfg) == [NAME]
    return cfg


@pytest.fixture(scope="module")
def kept(tmp_path_factory):
    """A one-experiment config folder, its catalog composed from the YAML (no cache), and the
    file a cache folder kept of it (composed once for the tests of this file)."""
    tmp = tmp_path_factory.mktemp("kept_one")
    cfg = _one_experiment(tmp, Path(__file__).resolve().parents[1] / "config")
    plain = load_catalog("smoke", config_dir=cfg)
    load_catalog("smoke", config_dir=cfg, cache_dir=tmp / "cache")
    (f,) = (tmp / "cache").glob("catalog-smoke-*.json")
    return cfg, plain, f


def _fresh(tmp_path: Path, kept) -> tuple[Path, Path]:
    """A copy of the kept cache folder (its secret and its file): (folder, the file)."""
    cfg, plain, f = kept
    d = tmp_path / "cache"
    shutil.copytree(f.parent, d)
    return d, d / f.name


def _as_yaml(cat) -> dict[str, str]:
    return {n: e.to_yaml() for n, e in cat.items()}


def _plant(data: dict, how: str, module: str = "plantedmod") -> dict:
    exp = data["experiments"][NAME]["config"]
    if how == "published":
        exp["experiment"]["published"][0]["mean"] = 0.01
    elif how == "title":
        exp["experiment"]["title"] = "planted title"
    elif how == "target":
        exp["algorithms"]["prank"]["estimator"] = f"{module}.X"
    return data


def _planted_module(tmp_path: Path, monkeypatch) -> tuple[str, Path]:
    """A module on sys.path whose import writes a marker file (a unique name per test)."""
    marker = tmp_path / "imported"
    name = f"plantedmod_{os.getpid()}_{abs(hash(str(tmp_path))) % 10**8}"
    (tmp_path / "plants").mkdir()
    (tmp_path / "plants" / f"{name}.py").write_text(
        f"from pathlib import Path\nPath({str(marker)!r}).write_text('imported')\n"
        "class X:\n    def __init__(self, **kw):\n        pass\n")
    monkeypatch.syspath_prepend(str(tmp_path / "plants"))
    return name, marker


@pytest.mark.parametrize("mac", ["none", "other_secret"])
@pytest.mark.parametrize("how", ["published", "title", "target"])
def test_a_planted_catalog_is_not_used(tmp_path, kept, monkeypatch, capsys, how, mac):
    """A valid catalog planted under the key the workflow computes, with no MAC or with one
    under another secret (the planter's own): the experiment is the YAML's, the planted
    module is not imported, one warning names the file, and the file is then the genuine one."""
    cfg, plain, genuine = kept
    module, marker = _planted_module(tmp_path, monkeypatch)
    d = tmp_path / "cache"
    d.mkdir()
    key = catalog_key(cfg.resolve(), "smoke")  # anyone can compute it from the checkout
    data = json.loads(genuine.read_text())
    data.pop("mac", None)
    body = json.dumps(_plant(data, how, module), separators=(",", ":")).encode()
    if mac == "other_secret":
        forged = hmac.new(os.urandom(32), body, hashlib.sha256).hexdigest()
        body = body[:-1] + b',"mac":"' + forged.encode() + b'"}'
    f = d / f"catalog-smoke-{key}.json"
    f.write_bytes(body)
    capsys.readouterr()

    got = load_catalog("smoke", config_dir=cfg, cache_dir=d)

    assert _as_yaml(got) == _as_yaml(plain)
    assert got[NAME].cfg.experiment.title == plain[NAME].cfg.experiment.title != "planted title"
    assert got[NAME].cfg.experiment.published[0].mean == plain[NAME].cfg.experiment.published[0].mean != 0.01
    assert got[NAME].cfg.algorithms.prank.estimator == "prank"
    assert not marker.exists() and module not in sys.modules
    err = [line for line in capsys.readouterr().err.splitlines() if str(f) in line]
    assert len(err) == 1 and "ignored the kept catalog" in err[0] and "MAC" in err[0]
    assert json.loads(f.read_bytes()) != json.loads(body)  # replaced by the composed catalog...
    again = load_catalog("smoke", config_dir=cfg, cache_dir=d)  # ...which is then read back
    assert _as_yaml(again) == _as_yaml(plain)


def test_a_genuine_catalog_is_used(tmp_path, kept, monkeypatch, capsys):
    """A file this user's project sealed is read back: nothing is composed, no warning."""
    cfg, plain, _ = kept
    d, f = _fresh(tmp_path, kept)
    calls = []
    real = catalog_mod.load_experiment
    monkeypatch.setattr(catalog_mod, "load_experiment", lambda *a, **k: calls.append(a) or real(*a, **k))
    capsys.readouterr()
    got = load_catalog("smoke", config_dir=cfg, cache_dir=d)
    assert calls == [] and _as_yaml(got) == _as_yaml(plain)
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("damage", ["flipped_mac", "body", "truncated", "no_mac", "other_key"])
def test_an_entry_whose_mac_fails_is_ignored_with_one_warning(tmp_path, kept, monkeypatch, capsys, damage):
    cfg, plain, _ = kept
    d, f = _fresh(tmp_path, kept)
    whole = f.read_bytes()
    if damage == "flipped_mac":
        i = len(whole) - 3  # a hex digit of the MAC
        bad = whole[:i] + (b"0" if whole[i:i + 1] != b"0" else b"1") + whole[i + 1:]
    elif damage == "body":  # one character of the content, the MAC kept
        bad = whole.replace(b'"n_trials":', b'"n_trials": ', 1)
    elif damage == "truncated":
        bad = whole[:1000]
    elif damage == "no_mac":
        data = json.loads(whole)
        del data["mac"]
        bad = json.dumps(data, separators=(",", ":")).encode()
    else:  # a genuine file of another key, renamed to this one: the MAC binds the name
        key = f.name[len("catalog-smoke-"):-len(".json")]
        body = cache.unseal(whole, cache.secret(d), "smoke", key)
        bad = cache.seal(body, cache.secret(d), "smoke", "0" * 20)
    assert bad != whole
    f.write_bytes(bad)
    calls = []
    real = catalog_mod.load_experiment
    monkeypatch.setattr(catalog_mod, "load_experiment", lambda *a, **k: calls.append(a) or real(*a, **k))
    capsys.readouterr()
    got = load_catalog("smoke", config_dir=cfg, cache_dir=d)
    assert [c[0] for c in calls] == [NAME] and _as_yaml(got) == _as_yaml(plain)  # composed from the YAML
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and str(f) in lines[0] and "ignored the kept catalog" in lines[0]
    assert f.read_bytes() == whole  # replaced by the composed, sealed catalog


def test_the_secret_is_private_and_made_on_first_use(tmp_path):
    d = tmp_path / "new" / "cache"
    key = cache.secret(d)
    f = d / cache.SECRET
    assert len(key) == cache.SECRET_BYTES and f.read_bytes() == key
    assert stat.S_IMODE(f.stat().st_mode) == 0o600
    assert stat.S_IMODE(d.stat().st_mode) & 0o077 == 0  # 0700 (less under a stricter umask)
    assert cache.secret(d) == key  # the same one next time
    assert [p.name for p in d.iterdir()] == [cache.SECRET]  # no temporary file left


@pytest.mark.parametrize("how", ["readable_by_others", "short", "link", "absent", "foreign"])
def test_a_secret_not_to_trust_is_replaced_and_old_entries_miss(tmp_path, kept, capsys, how):
    cfg, plain, _ = kept
    d, f = _fresh(tmp_path, kept)
    s = d / cache.SECRET
    old = s.read_bytes()
    if how == "readable_by_others":  # anyone who read it could seal a planted file
        s.chmod(0o644)
    elif how == "short":
        s.write_bytes(old[:8])
    elif how == "link":  # a secret this user's project did not make
        s.unlink()
        (tmp_path / "elsewhere").write_bytes(old)
        (tmp_path / "elsewhere").chmod(0o600)
        s.symlink_to(tmp_path / "elsewhere")
    elif how == "foreign":  # another user's file (chown needs root)
        if os.getuid() != 0:
            pytest.skip("making a file another user's needs root")
        os.chown(s, 12345, -1)
    else:
        s.unlink()
    capsys.readouterr()
    got = load_catalog("smoke", config_dir=cfg, cache_dir=d)
    assert _as_yaml(got) == _as_yaml(plain)
    err = capsys.readouterr().err  # the old entry missed, and said why: the secret, not the catalog
    said = "a new secret was made" if how == "absent" else "was replaced by a new one"
    assert said in err and "edited, planted" not in err, err
    assert len(err.strip().splitlines()) == 1, err
    assert not s.is_symlink() and stat.S_IMODE(s.stat().st_mode) == 0o600 and s.read_bytes() != old
    assert len(s.read_bytes()) == cache.SECRET_BYTES


def test_a_failed_write_leaves_no_temporary_file(tmp_path, kept, monkeypatch):
    """A full disk at the rename: the catalog is still returned, and the project's temporary
    file (.catalog-*.tmp) is removed."""
    import errno

    cfg, plain, _ = kept
    d = tmp_path / "cache"
    cache.secret(d)

    def full(*a, **k):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(cache.os, "replace", full)
    got = load_catalog("smoke", config_dir=cfg, cache_dir=d)
    monkeypatch.undo()
    assert _as_yaml(got) == _as_yaml(plain)
    assert sorted(p.name for p in d.iterdir()) == [cache.SECRET]


def test_pruning_removes_only_files_this_project_sealed(tmp_path, kept, monkeypatch):
    """Old catalogs are pruned (KEEP per scale), but only those sealed under this secret: a
    file the project did not write is never removed (only replaced when it bears the name of
    the catalog being kept)."""
    cfg, plain, _ = kept
    d = tmp_path / "cache"
    key = cache.secret(d)
    ours = d / f"catalog-smoke-{'a' * 20}.json"
    ours.write_bytes(cache.seal(b'{"old":1}', key, "smoke", "a" * 20))
    foreign = d / f"catalog-smoke-{'b' * 20}.json"
    foreign.write_bytes(b'{"not":"ours"}')
    for p in (ours, foreign):
        os.utime(p, (1, 1))
    monkeypatch.setattr(cache, "KEEP", 1)
    load_catalog("smoke", config_dir=cfg, cache_dir=d)
    assert not ours.exists() and foreign.read_bytes() == b'{"not":"ours"}'
    assert (d / f"catalog-smoke-{catalog_key(cfg.resolve(), 'smoke')}.json").is_file()


def test_seal_and_unseal_against_hmac():
    """The MAC is HMAC-SHA256 (the standard library's, computed here independently) of the
    catalog's bytes, bound to the format, scale and key; the sealed file is still JSON."""
    key, body = os.urandom(32), b'{"a":[1,2],"b":"x"}'
    sealed = cache.seal(body, key, "smoke", "k" * 20)
    want = hmac.new(key, f"{cache.FORMAT}\0smoke\0{'k' * 20}\0".encode() + body, hashlib.sha256).hexdigest()
    assert json.loads(sealed) == {"a": [1, 2], "b": "x", "mac": want}
    assert cache.unseal(sealed, key, "smoke", "k" * 20) == body
    for args in ((os.urandom(32), "smoke", "k" * 20), (key, "paper", "k" * 20), (key, "smoke", "j" * 20)):
        with pytest.raises(cache.InvalidCache, match="MAC"):
            cache.unseal(sealed, *args)


def test_a_fifo_in_the_cache_folder_is_not_waited_on(tmp_path, kept, capsys):
    """A FIFO under the kept catalog's name (or the secret's) would block a plain read: it is
    ignored like any file that does not verify, never waited on, and a FIFO is never pruned."""
    cfg, plain, _ = kept
    d = tmp_path / "cache"
    d.mkdir()
    key = catalog_key(cfg.resolve(), "smoke")
    os.mkfifo(d / f"catalog-smoke-{key}.json")
    os.mkfifo(d / f"catalog-smoke-{'c' * 20}.json")
    os.mkfifo(d / cache.SECRET)
    got = load_catalog("smoke", config_dir=cfg, cache_dir=d)
    assert _as_yaml(got) == _as_yaml(plain)
    assert stat.S_ISFIFO((d / f"catalog-smoke-{'c' * 20}.json").stat().st_mode)
    assert len(cache.secret(d)) == cache.SECRET_BYTES
