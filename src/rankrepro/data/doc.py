"""docs/data.md's table of the data sets, generated from the registry
(:mod:`rankrepro.data.registry`): where a user gets each one, which ones ``make data`` can
download, and what the mirror folder must hold.  ``scripts/data_doc.py`` rewrites the block
between :data:`BEGIN` and :data:`END`; a test checks the page matches the registry."""

from __future__ import annotations

from pathlib import Path

from .fetch import MIRROR_ENV, how_to_obtain
from .registry import DATASETS, DatasetEntry

#: the configs the table's last column is read from (rankrepro.data.uses): the checkout's own
CONFIG_DIR = Path(__file__).resolve().parents[3] / "config"
BEGIN = "<!-- data sets: generated from src/rankrepro/data/registry.py by scripts/data_doc.py, do not edit -->"
END = "<!-- end data sets -->"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _download(e: DatasetEntry) -> str:
    if not e.downloadable:
        return "no"
    url = e.archive.url if e.archive else next(iter(e.urls.values()))
    return f"yes, from {url}"


def _substitute_for(name: str) -> list[str]:
    return [e.name for e in DATASETS.values() if name in e.substitutes]


def _switches(e: DatasetEntry, uses: dict[str, list[str]]) -> str:
    """What the data set's presence changes: the artefacts configured on it, which run on a
    substitute or not at all while it is absent."""
    arts = uses.get(e.name, [])
    if not arts:
        return "none"
    now = "on a substitute" if e.substitutes else "not run"
    return ", ".join(f"`{a}`" for a in arts) + f" (without it: {now})"


def markdown() -> str:
    """The generated block (without its markers)."""
    from .uses import artefacts_by_source

    uses = artefacts_by_source(CONFIG_DIR)
    rows = ["| data set | `make data` downloads it | mirror folder | where to get it | substitute when absent "
            "| artefacts that run on it when it is here |",
            "|---|---|---|---|---|---|"]
    for e in DATASETS.values():
        stands = _substitute_for(e.name)
        name = f"`{e.name}`: {e.title}" + (f" (stands in for {', '.join(f'`{s}`' for s in stands)})" if stands else "")
        mirror = (f"`{e.mirror_dir}/`" if e.mirror_dir else
                  f"none shared: put the files in `data/raw/{e.name}/` (a mirror of your own: `{e.name}/`)")
        subs = ", ".join(f"`{s}`" for s in e.substitutes) or "none"
        rows.append(f"| {_cell(name)} | {_cell(_download(e))} | {mirror} | {_cell(how_to_obtain(e))} | {subs} "
                    f"| {_cell(_switches(e, uses))} |")
    n_dl = sum(e.downloadable for e in DATASETS.values())
    layout = [f"`${MIRROR_ENV}` names a folder with one sub-folder per data set, holding at least these files "
              "(each one's sha256 is checked against the registry when it is copied to `data/raw/`; "
              "*not pinned* files are hashed on first use). A data set is taken from the mirror only when every "
              "file listed is there:", "", "```", f"${MIRROR_ENV}/"]
    for e in DATASETS.values():
        if e.mirror_dir:
            layout.append(f"  {e.mirror_dir}/")
            layout += [f"    {f}" + ("" if h else "    (not pinned)") for f, h in e.files.items()]
    layout.append("```")
    layout += ["", "A data set with no folder above (withdrawn, licensed or unpublished: the shared mirror has no "
               "copy) is read from a mirror of your own at `<name>/`, holding the files the registry lists for it, "
               "just as from `data/raw/<name>/`. Files the registry does not pin are hashed when first fetched "
               "(`data/raw/<name>/MANIFEST.json`; the data set is then *unpinned*, never *verified*) and refused "
               "if they change afterwards; files put in `data/raw/<name>/` by hand show as *placed* until the "
               "first run fetches them. `make data-status` lists, for every original that is not here, the "
               "artefacts it would turn from a substitute (or from not run) into original data, and where its "
               "files go. `scripts/make_fixtures.py` writes small fixtures of these originals' official formats "
               "(from their documentation, not the data), which `make test-fixtures` takes end to end through "
               "the workflow: every artefact the last column names, the papers' and the arena's, with every "
               "arena family's comparison built on them."]
    intro = (f"Of the {len(DATASETS)} data sets, `make data` can download {n_dl} from their home pages "
             f"({', '.join(f'`{e.name}`' for e in DATASETS.values() if e.downloadable)}); every other one comes "
             f"from the mirror (`${MIRROR_ENV}`) or from files you put in `data/raw/<name>/` yourself.")
    return "\n".join([intro, "", *rows, "", *layout])


def fill(text: str) -> str:
    """``text`` with the block between the markers regenerated."""
    a, b = text.index(BEGIN) + len(BEGIN), text.index(END)
    return text[:a] + "\n\n" + markdown() + "\n\n" + text[b:]
