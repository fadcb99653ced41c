"""Small fixtures of the original data sets that cannot be had here, in their official
formats, generated from each format's documentation (never from the data: no value, id,
text or statistic below was taken from a copy of any of these data sets).

    python scripts/make_fixtures.py OUT                     # every fixture, into OUT/<name>/
    python scripts/make_fixtures.py OUT eachmovie letor3-td2003 --seed 7
    python scripts/make_fixtures.py --list                  # what each fixture follows

Each fixture is written as a user would receive the data set: ``OUT/<registry name>/`` holds
exactly the files the registry (``src/rankrepro/data/registry.py``) lists for it, so the
folder can be copied to ``data/raw/<name>/`` or be a mirror folder
(``$RANKREPRO_DATA_MIRROR/<name>/``).  They are not the data: their numbers are drawn from a
small latent model, so an artefact run on them is judged against the paper only to show
that the pipeline takes the real files end to end (tests/test_original_fixtures.py), never to
say anything about the paper.

The statistical shape the protocols depend on is kept (and checked by the tests):

* ``eachmovie`` (EachMovie README: ``Vote.txt`` = Person_ID, Movie_ID, Score in {0, 0.2, ..., 1},
  Weight, Modified date-time, tab-separated; ``Person.txt`` = ID, Age, Gender, Home_ZIP;
  ``Movie.txt`` = ID, Name, Type, PR_URL, IMDB_URL, Theater_Status, Theater_Release,
  Video_Status, Video_Release): people with more than 300 ratings (Harrington's Table 2 filter),
  at least 200 and 100 ratings (Crammer & Singer's two partitions), movies rated at least 50
  times and more than 100 people with at least 20 ratings among them (Yu et al.'s filter and
  100 tasks); each person's votes in time order.
* ``yahoo-ltr-set1`` (Chapelle & Chang 2011, the Webscope C14 readme): SVMlight lines
  ``grade qid:Q fid:value ...``, grades 0..4, feature ids within 1..700 (the ids of the union of
  both sets; set 1 uses a subset of them), values in [0, 1], sparse (a missing feature is 0),
  ``set1.train.txt``, ``set1.valid.txt``, ``set1.test.txt``, query ids distinct across the
  three files.
* ``letor3-td2003``, ``letor3-td2004`` (LETOR 3.0 readme, Gov QueryLevelNorm): ``label qid:Q
  1:v ... 64:v #docid = ... inc = ... prob = ...``, 64 features, binary labels, five folds
  (``FoldK/trainingset.txt``, ``validationset.txt``, ``testset.txt``: the query subsets
  S1..S5 rotated, three for training, one for validation, one for test), every query with at
  least one relevant document.
* ``ohsumed-judged`` (OHSUMED readme, item 11): one line per judged query-document pair,
  sorted by query then document number, relevance1..3 as d/p/n.  The readme does not print the
  column layout; the fixture follows the layout the registry states and the reader assumes
  (``query doc_i medline_ui relevance1 [relevance2 [relevance3]]``, ``-`` for a judgment not
  made), with over 10% of pairs judged more than once (the readme: "over 10% of the
  query-document pairs were judged in duplicate").

Not specifiable: ``coactive-user-study`` (Shivaswamy & Joachims 2012, Sec. 3.2 / Fig. 1).  Its
click logs were never published and no format was ever documented (the paper describes the
study, not a file); the registry's single file ``clicks`` is a placeholder.  A fixture would
have to invent both the format and the protocol's reading of it, and a test passing on it would
prove nothing about the real logs, so none is made (``--list`` says so).
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

import numpy as np

NOT_SPECIFIABLE = {
    "coactive-user-study": (
        "the click logs of Shivaswamy & Joachims (2012), Sec. 3.2, were never published and no format is "
        "documented (the paper describes the study, not a file): a fixture would invent both the format and "
        "its reading, and prove nothing about the real logs"),
}


# -------------------------------------------------------------------------------------
# EachMovie
# -------------------------------------------------------------------------------------
def eachmovie(out: Path, rng: np.random.Generator, n_people: int = 300, n_movies: int = 420) -> dict:
    """Scores from a rank-3 latent model quantised to {0, 0.2, ..., 1}; per-person rating
    counts in three bands (>300, 100..300, 20..100); popular movies rated more often."""
    dim = 3
    U = rng.normal(size=(n_people, dim))
    V = rng.normal(size=(n_movies, dim))
    bias_m = rng.normal(0, 0.5, n_movies)
    person_ids = np.sort(rng.choice(np.arange(1, 80_000), n_people, replace=False))
    movie_ids = np.sort(rng.choice(np.arange(1, 1_700), n_movies, replace=False))
    # rating counts: 40 heavy raters (> 300), 110 between 100 and 300, the rest 20..100
    counts = np.concatenate([rng.integers(305, 380, 40), rng.integers(100, 300, 110),
                             rng.integers(20, 100, n_people - 150)])
    rng.shuffle(counts)
    popularity = rng.gamma(2.0, 1.0, n_movies) + 0.6
    popularity /= popularity.sum()
    t0 = np.datetime64("1996-02-01T00:00:00")
    lines = []
    for p in range(n_people):
        movies = rng.choice(n_movies, size=int(counts[p]), replace=False, p=popularity)
        latent = U[p] @ V[movies].T / np.sqrt(dim) + bias_m[movies] + rng.normal(0, 0.4, movies.size)
        score = np.clip(np.round((latent + 1.5) / 3 * 5), 0, 5) / 5 + 0.0  # 0, 0.2, ..., 1 (+ 0.0: never "-0")
        # each person's votes in time order (the file's order within a person)
        start = rng.integers(0, 300 * 86_400)
        times = np.sort(start + rng.integers(0, 200 * 86_400, movies.size))
        weight = np.where(rng.random(movies.size) < 0.95, 1.0, 0.5)
        for m, s, w, t in zip(movies, score, weight, times):
            stamp = str(t0 + np.timedelta64(int(t), "s")).replace("T", " ")
            lines.append(f"{person_ids[p]}\t{movie_ids[m]}\t{s:g}\t{w:g}\t{stamp}\n")
    d = out / "eachmovie"
    d.mkdir(parents=True, exist_ok=True)
    (d / "Vote.txt").write_text("".join(lines))
    genders = np.array(["M", "F"])
    (d / "Person.txt").write_text("".join(
        f"{pid}\t{rng.integers(15, 70)}\t{genders[rng.integers(0, 2)]}\t{rng.integers(10000, 99999)}\n"
        for pid in person_ids))
    (d / "Movie.txt").write_text("".join(
        f"{mid}\tFixture movie {mid} (1995)\t{'Action' if mid % 2 else 'Drama'}\t\t"
        f"http://example.invalid/title/{mid}\t0\t1995-06-01\t1\t1996-01-01\n" for mid in movie_ids))
    return {"files": ["Vote.txt", "Person.txt", "Movie.txt"], "votes": len(lines)}


# -------------------------------------------------------------------------------------
# LETOR-format sets
# -------------------------------------------------------------------------------------
def _letor_line(label: int, qid: int, feats: dict[int, float], comment: str = "") -> str:
    body = " ".join(f"{k}:{v:.6f}" for k, v in sorted(feats.items()))
    return f"{label} qid:{qid} {body}" + (f" #{comment}" if comment else "") + "\n"


def _gov(out: Path, name: str, rng: np.random.Generator, n_queries: int = 25, docs: tuple[int, int] = (30, 45)) -> dict:
    """64 features in [0, 1] (QueryLevelNorm), binary labels, 1-4 relevant documents per
    query (relevant documents higher on a random half of the features), five folds rotating
    the query subsets S1..S5."""
    nf = 64
    qids = np.sort(rng.choice(np.arange(1, 1000), n_queries, replace=False))
    informative = rng.choice(nf, nf // 2, replace=False)
    blocks = {}
    for q in qids:
        n = int(rng.integers(*docs))
        y = np.zeros(n, dtype=int)
        y[rng.choice(n, int(rng.integers(1, 5)), replace=False)] = 1
        X = rng.random((n, nf)) * 0.7
        X[np.ix_(y == 1, informative)] += rng.random((int(y.sum()), informative.size)) * 0.6
        # query-level normalisation, as in the QueryLevelNorm files: each feature to [0, 1] within the query
        lo, hi = X.min(axis=0), X.max(axis=0)
        X = np.where(hi > lo, (X - lo) / np.where(hi > lo, hi - lo, 1), 0.0)
        docids = [f"G{rng.integers(0, 50):02d}-{rng.integers(0, 100):02d}-{rng.integers(0, 10**7):07d}"
                  for _ in range(n)]
        while len(set(docids)) < n:
            docids = [f"{d}{i}" for i, d in enumerate(docids)]
        blocks[int(q)] = "".join(
            _letor_line(int(y[i]), int(q), {k + 1: float(X[i, k]) for k in range(nf)},
                        f"docid = {docids[i]} inc = {rng.random():.6g} prob = {rng.random():.6g}") for i in range(n))
    subsets = np.array_split(rng.permutation(qids), 5)
    d = out / name
    files = []
    for k in range(5):
        parts = {"trainingset": [subsets[(k + j) % 5] for j in range(3)], "validationset": [subsets[(k + 3) % 5]],
                 "testset": [subsets[(k + 4) % 5]]}
        (d / f"Fold{k + 1}").mkdir(parents=True, exist_ok=True)
        for part, qs in parts.items():
            rel = f"Fold{k + 1}/{part}.txt"
            (d / rel).write_text("".join(blocks[int(q)] for q in np.sort(np.concatenate(qs))))
            files.append(rel)
    return {"files": files, "queries": n_queries}


def letor3_td2003(out: Path, rng: np.random.Generator) -> dict:
    return _gov(out, "letor3-td2003", rng)


def letor3_td2004(out: Path, rng: np.random.Generator) -> dict:
    return _gov(out, "letor3-td2004", rng)


def yahoo_ltr_set1(out: Path, rng: np.random.Generator, sizes=(90, 20, 40), docs=(8, 20)) -> dict:
    """Grades 0..4 from a sparse linear utility plus noise (low grades most common); each
    document has a random subset of a fixed set of 400 of the 700 feature ids, values in [0, 1]."""
    nf, used = 700, np.sort(rng.choice(np.arange(1, 701), 400, replace=False))
    w = np.zeros(nf + 1)
    w[used] = rng.normal(size=used.size) * (rng.random(used.size) < 0.2)
    qid = 0
    d = out / "yahoo-ltr-set1"
    d.mkdir(parents=True, exist_ok=True)
    files = []
    for part, nq in zip(("train", "valid", "test"), sizes):
        lines = []
        for _ in range(nq):
            qid += int(rng.integers(1, 4))
            for _ in range(int(rng.integers(*docs))):
                present = used[rng.random(used.size) < 0.35]
                vals = rng.random(present.size)
                u = float(w[present] @ vals) / 2.5 + rng.normal(0, 0.4)
                grade = int(np.digitize(u, (0.0, 0.9, 1.8, 2.8)))  # 0 and 1 most common, 4 rare
                lines.append(_letor_line(grade, qid, dict(zip(present.tolist(), vals.tolist()))))
        rel = f"set1.{part}.txt"
        (d / rel).write_text("".join(lines))
        files.append(rel)
    return {"files": files, "queries": qid}


# -------------------------------------------------------------------------------------
# OHSUMED judged
# -------------------------------------------------------------------------------------
def ohsumed_judged(out: Path, rng: np.random.Generator, n_queries: int = 70, docs=(40, 60)) -> dict:
    """One line per pair, sorted by query then document; relevance1 for the originally
    retrieved pairs, relevance3 alone for those only SMART retrieved, and about half of the
    pairs judged again (relevance2 and/or relevance3) so that the protocol's pairs with at
    least two judgments are plenty.  Judges agree through a shared latent relevance."""
    letters = np.array(["n", "p", "d"])
    lines, multi = [], 0
    for q in range(1, n_queries + 1):
        n = int(rng.integers(*docs))
        doc = np.sort(rng.choice(np.arange(1, 348_567), n, replace=False))
        latent = rng.normal(-0.6, 1.0, n)
        for i in range(n):
            def judge():
                return letters[int(np.clip(np.round(latent[i] + rng.normal(0, 0.5)), 0, 2))]
            smart_only = rng.random() < 0.2
            r = ["-", "-", "-"]
            if smart_only:
                r[2] = judge()
            else:
                r[0] = judge()
            if not smart_only and rng.random() < 0.5:  # judged again: relevance2, sometimes relevance3 as well
                r[1] = judge()
                if rng.random() < 0.3:
                    r[2] = judge()
            multi += sum(x != "-" for x in r) >= 2
            ui = 87_000_000 + int(doc[i]) * 13 % 4_999_999
            lines.append(f"{q}\t{doc[i]}\t{ui}\t" + "\t".join(r) + "\n")
    d = out / "ohsumed-judged"
    d.mkdir(parents=True, exist_ok=True)
    (d / "judged").write_text("".join(lines))
    return {"files": ["judged"], "pairs": len(lines), "judged_twice": int(multi)}


FIXTURES = {
    "eachmovie": eachmovie,
    "yahoo-ltr-set1": yahoo_ltr_set1,
    "letor3-td2003": letor3_td2003,
    "letor3-td2004": letor3_td2004,
    "ohsumed-judged": ohsumed_judged,
}


def make(out: str | Path, names=None, seed: int = 0) -> dict[str, dict]:
    """Write the fixtures ``names`` (default: all) under ``out``; what was written, per name.
    Every name is checked and every fixture made (in a scratch folder) before a file is written
    under ``out``, and an existing file is never overwritten: ``FileExistsError`` naming it, and
    nothing written."""
    out = Path(out)
    names = list(names or FIXTURES)
    for name in names:
        if name in NOT_SPECIFIABLE:
            raise ValueError(f"no fixture for {name}: {NOT_SPECIFIABLE[name]}")
        if name not in FIXTURES:
            raise ValueError(f"no fixture for {name} (fixtures: {', '.join(FIXTURES)})")
    done = {}
    with tempfile.TemporaryDirectory() as scratch:
        for name in names:
            # a seed of its own per data set: one fixture does not change when another is added
            rng = np.random.default_rng([seed, sum(name.encode())])
            done[name] = FIXTURES[name](Path(scratch), rng)
        files = sorted(p.relative_to(scratch) for p in Path(scratch).rglob("*") if p.is_file())
        for rel in files:
            if os.path.lexists(out / rel):
                raise FileExistsError(f"{out / rel} exists; refused, nothing written (make_fixtures.py never "
                                      "overwrites a file: give a new or empty OUT, or remove it)")
        for rel in files:
            (out / rel).parent.mkdir(parents=True, exist_ok=True)
            with open(out / rel, "xb") as f:  # exclusive: a file that appeared meanwhile is not overwritten
                f.write((Path(scratch) / rel).read_bytes())
    return done


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", nargs="?", help="folder to write <name>/ into")
    ap.add_argument("names", nargs="*", help=f"data sets (default: all of {', '.join(FIXTURES)})")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--list", action="store_true", help="what each fixture follows, and what cannot be specified")
    args = ap.parse_args(argv)
    if args.list or not args.out:
        for name, f in FIXTURES.items():
            print(f"{name}: {(f.__doc__ or '').split(chr(10))[0].strip()}")
        for name, why in NOT_SPECIFIABLE.items():
            print(f"{name}: no fixture: {why}")
        return 0 if args.list else 2
    try:
        made = make(args.out, args.names, args.seed)
    except (ValueError, OSError) as e:  # an unknown name, an existing file, a full disk: one line
        print(f"make_fixtures.py: error: {e}", file=sys.stderr)
        return 2
    for name, info in made.items():
        print(f"{Path(args.out) / name}: " + ", ".join(f"{k} {v}" for k, v in info.items() if k != "files"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
