"""Provenance: the git commit recorded with every output is '+dirty' when sources or configs
differ from it, not when only the pipeline's own outputs were rewritten."""
import subprocess

from rankrepro.provenance import git_commit, versions


def git(cwd, *args):
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def test_dirty_means_sources_changed_not_outputs(tmp_path):
    git(tmp_path, "init", "-q")
    git(tmp_path, "config", "user.email", "t@example.org")
    git(tmp_path, "config", "user.name", "t")
    for rel in ("src/a.py", "results/x/t.csv", "figures/x/f.png", "config/e.yaml"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("1\n")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-qm", "init")
    sha = git_commit(tmp_path)
    assert len(sha) == 40 and not sha.endswith("+dirty")
    (tmp_path / "results/x/t.csv").write_text("2\n")
    (tmp_path / "figures/x/f.png").write_text("2\n")
    assert git_commit(tmp_path) == sha  # a run rewriting its outputs
    (tmp_path / "config/e.yaml").write_text("2\n")
    assert git_commit(tmp_path) == sha + "+dirty"


def test_not_a_repository(tmp_path):
    assert git_commit(tmp_path) == "unknown"
    assert "numpy" in versions()
