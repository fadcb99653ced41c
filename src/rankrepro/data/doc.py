"""docs/data.md's table of the data sets, generated from the registry
(:mod:`rankrepro.data.registry`): where a user gets each one, which ones ``make data`` can
download, and what the mirror folder must hold.  ``scripts/data_doc.py`` rewrites the block
between :data:`BEGIN` and :data:`END`; a test checks the page matches the registry."""

from __future__ import annotations

from .fetch import MIRROR_ENV, how_to_obtain
from .registry import DATASETS, DatasetEntry

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


def markdown() -> str:
    """The generated block (without its markers)."""
    rows = ["| data set | `make data` downloads it | mirror folder | where to get it | substitute when absent |",
            "|---|---|---|---|---|"]
    for e in DATASETS.values():
        stands = _substitute_for(e.name)
        name = f"`{e.name}`: {e.title}" + (f" (stands in for {', '.join(f'`{s}`' for s in stands)})" if stands else "")
        mirror = f"`{e.mirror_dir}/`" if e.mirror_dir else f"none: put the files in `data/raw/{e.name}/`"
        subs = ", ".join(f"`{s}`" for s in e.substitutes) or "none"
        rows.append(f"| {_cell(name)} | {_cell(_download(e))} | {mirror} | {_cell(how_to_obtain(e))} | {subs} |")
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
    intro = (f"Of the {len(DATASETS)} data sets, `make data` can download {n_dl} from their home pages "
             f"({', '.join(f'`{e.name}`' for e in DATASETS.values() if e.downloadable)}); every other one comes "
             f"from the mirror (`${MIRROR_ENV}`) or from files you put in `data/raw/<name>/` yourself.")
    return "\n".join([intro, "", *rows, "", *layout])


def fill(text: str) -> str:
    """``text`` with the block between the markers regenerated."""
    a, b = text.index(BEGIN) + len(BEGIN), text.index(END)
    return text[:a] + "\n\n" + markdown() + "\n\n" + text[b:]
