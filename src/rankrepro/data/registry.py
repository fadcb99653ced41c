"""The data-set registry: one entry per data set the papers use.

Each entry says where the data set lives (home page and file URLs, or the archive that
holds the files), which files are expected with their sha256, the licence in a sentence,
how to obtain it when it cannot be downloaded, its reader and preprocessing parameters,
and the substitute used when it is absent.  Hashes marked ``None`` are not pinned (no
trusted copy was available to pin them): such a file is accepted with a warning and its
hash is recorded in the manifest on first use.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Archive:
    url: str
    #: member path inside the archive -> file name in the data set folder
    members: dict[str, str]


@dataclass(frozen=True)
class DatasetEntry:
    name: str
    title: str
    home: str
    licence: str
    #: file name (relative to the data set folder) -> sha256, None when not pinned
    files: dict[str, str | None]
    #: kind of content, which picks the reader and preprocessing: ratings, judgments, letor, queries
    kind: str
    reader: str
    #: the files the reader needs (the rest are documentation kept for provenance)
    data_files: tuple[str, ...]
    #: folder of the same files in a local mirror (RANKREPRO_DATA_MIRROR)
    mirror_dir: str | None = None
    #: direct URLs of individual files
    urls: dict[str, str] = field(default_factory=dict)
    archive: Archive | None = None
    #: the data can only be had by request/licence: a message says how and where to put it
    obtain: str = ""
    #: data sets used in its place when it is absent, in order of preference
    substitutes: tuple[str, ...] = ()
    #: reader/preprocessing options
    params: dict[str, Any] = field(default_factory=dict)
    #: the official statistics, checked by the tests on the real files
    stats: dict[str, Any] = field(default_factory=dict)
    notes: str = ""

    @property
    def downloadable(self) -> bool:
        return bool(self.urls) or self.archive is not None


GROUPLENS = "https://files.grouplens.org/datasets/movielens/"
ML_TERMS = ("research use; cite Harper & Konstan (2015); no redistribution and no commercial use without "
            "permission from GroupLens")
LETOR_HOME = "https://www.microsoft.com/en-us/research/project/letor-learning-rank-information-retrieval/"

_ML100K = {
    "README": "4883b8cf340ed0059971b33f56ad3adc88a40792108ebca3d24aafc4c82e8b52",
    "u.data": "06416e597f82b7342361e41163890c81036900f418ad91315590814211dca490",
    "u.genre": "9757e0d3e6b298159a80dd48eaf938114690e911e39af97a76949ef1663610bb",
    "u.info": "5b0a40b2e47a729ee6203063f6dcf8790c2e63f5a18663e6ee318a72c5f3c27b",
    "u.item": "553841ebc7de3a0fd0d6b62a204ea30c1e651aacfb2814c7a6584ac52f2c5701",
    "u.occupation": "cd5fbec9afe345d993a62fc7817df1a4a9079c4feb267b3118763b8fd942137d",
    "u.user": "f120e114da2e8cf314fd28f99417c94ae9ddf1cb6db8ce0e4b5995d40e90e62c",
}

_ML1M_USERS = "1dc3a95300cb19f7c10e027daf29b8cdf1d908dab65b5edfb45950aa389a10a3"
_ML1M_MOVIES = "0140fc2356357c1a851d0f52e893a1e4d3696df632c4141cea8d5bc3d621f0b9"

_LETOR2 = {
    "Fold1/testset.txt": "583014931393e3774cf45204504c51bac447b0e4e62db9918f6dc486cce33f04",
    "Fold1/trainingset.txt": "31738e37893ad90b46285c806c535f09c7ca46f3d1b7cbfae55761621f9998be",
    "Fold1/validationset.txt": "cba7df42809b77f6f8fdc458757add81b54586fe2d0d9f0fe198b4d2911d5f70",
    "Fold2/testset.txt": "5c1c3b194d838a3802edef74b354c19f92452025f108589c855a64b41adef66d",
    "Fold2/trainingset.txt": "6cb871448a29be2d7542777706ea09fd955e8e998aae1f8e2b8201d3e08b837d",
    "Fold2/validationset.txt": "583014931393e3774cf45204504c51bac447b0e4e62db9918f6dc486cce33f04",
    "Fold3/testset.txt": "522bf6e8f54a6bbbcd6d65090655041bdeecc41e8bca87efc2f84f57c582a5ce",
    "Fold3/trainingset.txt": "6e8d68588ceb5daf0894c81d77fc3fb6559a469f7ef3470c0cb51f25998eab63",
    "Fold3/validationset.txt": "5c1c3b194d838a3802edef74b354c19f92452025f108589c855a64b41adef66d",
    "Fold4/testset.txt": "ee5ecdcf88dbbcc74e3cc5415913ac0f99c1fd8c61bc4db5aa62f99e71c4c127",
    "Fold4/trainingset.txt": "808f6ee9f00a818c69b57b152a10f191e0746d3a096d9bde7b93b669f99d088f",
    "Fold4/validationset.txt": "522bf6e8f54a6bbbcd6d65090655041bdeecc41e8bca87efc2f84f57c582a5ce",
    "Fold5/testset.txt": "cba7df42809b77f6f8fdc458757add81b54586fe2d0d9f0fe198b4d2911d5f70",
    "Fold5/trainingset.txt": "fe2d821cfb2b4ad0cbbb56108e8b07ed14dbcb217982fb5c019e469a28e7de21",
    "Fold5/validationset.txt": "ee5ecdcf88dbbcc74e3cc5415913ac0f99c1fd8c61bc4db5aa62f99e71c4c127",
}
_FOLD_FILES = tuple(f"Fold{k}/{s}set.txt" for k in range(1, 6) for s in ("training", "validation", "test"))

_MSLR_FILES = tuple(f"Fold{k}/{s}.txt" for k in range(1, 6) for s in ("train", "vali", "test"))

_MQ2008 = {
    "S1.txt": "f754c61c4a5e2a14b330af767f12d1e88bab336219ae4f6f91a774f8f68b078e",
    "S2.txt": "2104c4f23f0119e0b0726bd80d1170822f37f63639879b0cf8fb43a301517903",
    "S3.txt": "ec7a1b9db068aa6d5e8c4d42d5f7b2a727543b9c1f79c30bed746568fb87ed03",
    "S4.txt": "971ab752d71d7b019c1c512d7ba4a05b1198bdeeda57a10dd69c62f3ac47dbb9",
    "S5.txt": "ce33aa98a1cc42847008f2d4280c30a52b6c8491206893cbc97e412ccb97426b",
    "readme.txt": "dabd61e7b89137f15778d515c248982208aae1a8427463142dba8f91db288b53",
}
#: LETOR 4.0's fold recipe (readme.txt): training, validation, test parts of each fold
MQ2008_FOLDS = {
    1: (("S1", "S2", "S3"), ("S4",), ("S5",)),
    2: (("S2", "S3", "S4"), ("S5",), ("S1",)),
    3: (("S3", "S4", "S5"), ("S1",), ("S2",)),
    4: (("S4", "S5", "S1"), ("S2",), ("S3",)),
    5: (("S5", "S1", "S2"), ("S3",), ("S4",)),
}

_WITHDRAWN = ("EachMovie was withdrawn by its owner (DEC/Compaq SRC) in 2004 and cannot be downloaded. If you hold "
              "a copy, put Vote.txt, Movie.txt and Person.txt in data/raw/eachmovie/ and rerun: the files are read "
              "and hashed on first use.")

DATASETS: dict[str, DatasetEntry] = {e.name: e for e in [
    DatasetEntry(
        name="movielens-100k", title="MovieLens 100K", home="https://grouplens.org/datasets/movielens/100k/",
        licence=ML_TERMS, files=_ML100K, kind="ratings", reader="movielens_100k", data_files=("u.data",),
        mirror_dir="movielens-100k",
        archive=Archive(GROUPLENS + "ml-100k.zip", {f"ml-100k/{f}": f for f in _ML100K}),
        stats={"ratings": 100_000, "users": 943, "items": 1_682},
    ),
    DatasetEntry(
        name="movielens-1m", title="MovieLens 1M (official ratings.dat)",
        home="https://grouplens.org/datasets/movielens/1m/", licence=ML_TERMS,
        files={"ratings.dat": None, "users.dat": _ML1M_USERS, "movies.dat": _ML1M_MOVIES},
        kind="ratings", reader="movielens_1m", data_files=("ratings.dat",),
        archive=Archive(GROUPLENS + "ml-1m.zip", {"ml-1m/ratings.dat": "ratings.dat", "ml-1m/users.dat": "users.dat",
                                                  "ml-1m/movies.dat": "movies.dat"}),
        substitutes=("movielens-1m-bpmf",),
        stats={"ratings": 1_000_209, "users": 6_040, "items": 3_706},
        notes="ratings.dat is not pinned: no trusted copy was available to take its sha256 from.",
    ),
    DatasetEntry(
        name="movielens-1m-bpmf", title="MovieLens 1M, BPMF copy (moviedata.mat)",
        home="https://www.cs.toronto.edu/~rsalakhu/BPMF.html", licence=ML_TERMS,
        files={"moviedata.mat": "32dd77dbffa22f39789aed46c2fae8a54164fbb02a972c400ba3f4e78d662ebc",
               "users.dat": _ML1M_USERS, "movies.dat": _ML1M_MOVIES,
               "README": "2f8792c2c67512b453077d4e73d648eefe4ae6f7372bf96aecaac1561df6ba66"},
        kind="ratings", reader="movielens_bpmf", data_files=("moviedata.mat",), mirror_dir="movielens-1m-bpmf",
        stats={"ratings": 1_000_203, "users": 6_040, "items": 3_706},
        notes="The copy distributed with Salakhutdinov's BPMF demo: 1,000,203 of the official 1,000,209 ratings "
              "(6 missing), original ids, no timestamps (file order stands in for time).",
    ),
    DatasetEntry(
        name="eachmovie", title="EachMovie (DEC Systems Research Center, 1997)",
        home="http://www.research.digital.com/SRC/eachmovie/",
        licence="DEC/Compaq research licence; withdrawn in 2004",
        files={"Vote.txt": None, "Movie.txt": None, "Person.txt": None},
        kind="ratings", reader="eachmovie", data_files=("Vote.txt",), obtain=_WITHDRAWN,
        substitutes=("movielens-1m", "movielens-1m-bpmf"),
        stats={"people": 72_916, "movies": 1_628},
    ),
    DatasetEntry(
        name="cystic-fibrosis", title="Cystic Fibrosis collection (Shaw, Wood, Wood & Tibbo 1991)",
        home="http://www.sims.berkeley.edu/~hearst/irbook/cfc.html",
        licence="copyright 1989; research use",
        files={"cfquery": "8996ac4426002115e3c6ebcad545b51e7fefee01ab324015fcb376c2a166344e",
               "README": "231c793810514c3a493a2b1504aa2346de86595a31181c96cd8b5fd4ee3ac78b",
               "copyright": "43d543c1993a8e1c70e04488c01debd362011d079af17ddf52f177aa76ba3510"},
        kind="judgments", reader="cfquery", data_files=("cfquery",), mirror_dir="cystic-fibrosis",
        obtain="The collection's home page no longer serves it. Put cfquery (with README and copyright) in "
               "data/raw/cystic-fibrosis/, or point RANKREPRO_DATA_MIRROR at a folder holding cystic-fibrosis/.",
        stats={"queries": 100, "pairs": 4_819, "judges": 4},
        notes="The document files cf74..cf79 are not needed by the experiments and are not fetched.",
    ),
    DatasetEntry(
        name="ohsumed-queries", title="OHSUMED test collection: queries (Hersh et al. 1994)",
        home="https://trec.nist.gov/data/t9_filtering.html",
        licence="experimental use only; report results on the collection unchanged",
        files={"queries": "5e066b9514d6747516dd37a59b4490805652831cfa5fcd73458b933ed810e375",
               "readme.htm": "a53f6416a887cbcb4b1258eef2d413dbba6fc51a9f814270f71649ee366ae7e5"},
        kind="queries", reader="ohsumed_queries", data_files=("queries",), mirror_dir="ohsumed-queries",
        stats={"queries": 106},
    ),
    DatasetEntry(
        name="ohsumed-judged", title="OHSUMED test collection: all relevance judgments ('judged')",
        home="https://trec.nist.gov/data/t9_filtering.html",
        licence="experimental use only; report results on the collection unchanged",
        files={"judged": None}, kind="judgments", reader="ohsumed_judged", data_files=("judged",),
        obtain="The 'judged' file (item 11 of the OHSUMED readme) is part of ohsumed.rest.tar.Z, which could not be "
               "found. Put it in data/raw/ohsumed-judged/judged and rerun.",
        stats={"pairs": 16_140, "queries": 106},
        notes="The readme does not print the column layout; the reader assumes "
              "'query doc_i medline_ui relevance1 [relevance2 [relevance3]]' with d/p/n and '-' for not judged.",
    ),
    DatasetEntry(
        name="letor2-ohsumed", title="LETOR 2.0 OHSUMED (25 features), mirror layout",
        home=LETOR_HOME, licence="Microsoft Research LETOR; research use",
        files=_LETOR2, kind="letor", reader="letor2_tsv", data_files=_FOLD_FILES, mirror_dir="letor2-ohsumed",
        params={"n_features": 25, "max_label": 2, "layout": "folds"},
        stats={"pairs": 16_140, "queries": 106, "labels": {0: 11_303, 1: 2_585, 2: 2_252}},
        notes="Re-serialised by the public copy as qid<TAB>qid_docid<TAB>25 values<TAB>label; values unchanged. "
              "Files in the official LETOR 2.0 format can be placed as letor2-ohsumed-official.",
    ),
    DatasetEntry(
        name="letor2-ohsumed-official", title="LETOR 2.0 OHSUMED (25 features), official format",
        home=LETOR_HOME, licence="Microsoft Research LETOR; research use",
        files={f: None for f in _FOLD_FILES}, kind="letor", reader="letor", data_files=_FOLD_FILES,
        obtain="Download LETOR 2.0 from the LETOR home page, unpack OHSUMED into data/raw/letor2-ohsumed-official/ "
               "(Fold1..Fold5/trainingset.txt, validationset.txt, testset.txt).",
        substitutes=("letor2-ohsumed",), params={"n_features": 25, "max_label": 2, "layout": "folds"},
        stats={"pairs": 16_140, "queries": 106},
    ),
    DatasetEntry(
        name="letor4-mq2008", title="LETOR 4.0 MQ2008 (46 features, supervised, query-level normalised)",
        home=LETOR_HOME, licence="Microsoft Research LETOR; research use",
        files=_MQ2008, kind="letor", reader="letor", data_files=("S1.txt", "S2.txt", "S3.txt", "S4.txt", "S5.txt"),
        mirror_dir="letor4-mq2008", params={"n_features": 46, "max_label": 2, "layout": "parts"},
        stats={"rows": 15_211, "queries": 784, "labels": {0: 12_279, 1: 2_001, 2: 931}},
    ),
    *[DatasetEntry(
        name=f"letor3-{td}", title=f"LETOR 3.0 {td.upper()} (.Gov, 64 features)", home=LETOR_HOME,
        licence="Microsoft Research LETOR; research use", files={f: None for f in _FOLD_FILES},
        kind="letor", reader="letor", data_files=_FOLD_FILES, substitutes=("letor4-mq2008",),
        obtain=f"Download LETOR 3.0 from the LETOR home page and unpack {td.upper()} into data/raw/letor3-{td}/ "
               "(Fold1..Fold5/trainingset.txt, validationset.txt, testset.txt).",
        params={"n_features": 64, "max_label": 1, "layout": "folds"},
    ) for td in ("td2003", "td2004")],
    *[DatasetEntry(
        name=f"yahoo-ltr-set{k}", title=f"Yahoo! Learning to Rank Challenge, set {k}",
        home="https://webscope.sandbox.yahoo.com/", licence="Yahoo! Webscope licence (dataset C14); no redistribution",
        files={f"set{k}.{s}.txt": None for s in ("train", "valid", "test")}, kind="letor", reader="letor",
        data_files=tuple(f"set{k}.{s}.txt" for s in ("train", "valid", "test")), substitutes=("letor4-mq2008",),
        obtain=f"Request dataset C14 from Yahoo! Webscope (licence required), then put set{k}.train.txt, "
               f"set{k}.valid.txt and set{k}.test.txt in data/raw/yahoo-ltr-set{k}/.",
        params={"n_features": 700, "max_label": 4, "layout": "yahoo"},
    ) for k in (1, 2)],
    DatasetEntry(
        name="coactive-user-study", title="Click logs of the user study of Shivaswamy & Joachims (2012), Sec. 3.2",
        home="https://www.cs.cornell.edu/people/tj/", licence="not public",
        files={"clicks": None}, kind="ratings", reader="movielens_100k", data_files=("clicks",),
        obtain="The click logs behind Fig. 1 of Shivaswamy & Joachims (2012) were collected in a user study and "
               "were never published; the figure cannot be reproduced.",
    ),
    DatasetEntry(
        name="mslr-web10k", title="MSLR-WEB10K", home="https://www.microsoft.com/en-us/research/project/mslr/",
        licence="Microsoft Research; research use", files={f: None for f in _MSLR_FILES}, kind="letor",
        reader="letor", data_files=_MSLR_FILES,
        obtain="Download MSLR-WEB10K from its home page and unpack it into data/raw/mslr-web10k/.",
        params={"n_features": 136, "max_label": 4, "layout": "folds"},
    ),
]}


def get(name: str) -> DatasetEntry:
    try:
        return DATASETS[name]
    except KeyError:
        raise KeyError(f"unknown data set '{name}' (known: {', '.join(sorted(DATASETS))})") from None


def substitute_label(used: str, original: str, description: str | None = None) -> str:
    """What a substitute artefact ran on, named by the data actually used (the registry's
    title), then the data set it stands in for; ``description`` (the config's, which describes
    the paper's data and protocol) last, when given."""

    def title(k):
        return f"{DATASETS[k].title} ({k})" if k in DATASETS else str(k)

    return (f"SUBSTITUTE {title(used)} in place of {title(original)}"
            + (f"; the paper's data and protocol: {description}" if description else ""))
