"""Files stay in the checkout (issue 41, item 7).

The data folders (``data/raw/<name>``, ``data/processed/<name>``) the project writes and
reads, and the inputs the report embeds (records, figure PNGs), must resolve inside the
checkout (for a ``rankrepro run --out`` report: inside that folder): a symbolic link that
leads elsewhere (``data/processed/<name> -> /somewhere``, a PNG -> ``/etc/passwd``) is
refused, naming the path and where it leads, before a byte is read or written through it.

Apart from the data builders' and protocols' modules on purpose: nothing here is in a
cell's code fingerprint (:mod:`rankrepro.pipeline.codeprint`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable


class OutsideCheckout(ValueError):
    """A path that resolves (through a symbolic link) outside the folder it must stay in."""

    def __init__(self, path: str | os.PathLike, real: str | os.PathLike, root: str | os.PathLike, what: str):
        self.path, self.real, self.root = str(path), str(real), str(root)
        super().__init__(f"{path}: {what} resolves to {real}, outside {root} (a symbolic link leading out of "
                         "the checkout?); refused: nothing is read or written through it (replace the link by the "
                         "folder or file itself)")


def _under(real: str, root: str) -> bool:
    return real == root or real.startswith(root.rstrip(os.sep) + os.sep)


def resolves_inside(path: str | os.PathLike, roots: Iterable[str | os.PathLike]) -> bool:
    """Whether ``path`` (its symbolic links followed, as far as it exists) lies in one of ``roots``."""
    real = os.path.realpath(path)
    return any(_under(real, os.path.realpath(r)) for r in roots)


def refuse_outside(path: str | os.PathLike, roots: str | os.PathLike | Iterable[str | os.PathLike],
                   what: str) -> Path:
    """``path``, or :class:`OutsideCheckout` naming it when it resolves outside every one of
    ``roots`` (one folder or several)."""
    roots = [roots] if isinstance(roots, (str, os.PathLike)) else list(roots)
    if not resolves_inside(path, roots):
        where = os.path.realpath(roots[0]) if len(roots) == 1 else " and ".join(os.path.realpath(r) for r in roots)
        raise OutsideCheckout(path, os.path.realpath(path), where, what)
    return Path(path)


def data_root(raw: str | os.PathLike) -> Path:
    """The checkout that holds a ``data/raw`` folder (``<root>/data/raw``): the folder its
    data sets must stay in (taken without following links: ``data`` itself linked elsewhere is
    refused too)."""
    return Path(os.path.abspath(raw)).parent.parent


def data_folders_inside(paths, name: str, processed: bool = True) -> None:
    """Refuse (:class:`OutsideCheckout`) ``data/raw/<name>`` (and ``data/processed/<name>``)
    when they resolve outside the checkout (``paths``: a :class:`rankrepro.data.fetch.Paths`)."""
    root = data_root(paths.raw)
    refuse_outside(paths.raw / name, root, f"the raw data folder of {name}")
    if processed:
        refuse_outside(paths.processed / name, root, f"the processed data folder of {name}")


class LinkedFile(OutsideCheckout):
    """A data file that is a symbolic link (``data/raw/<name>/<file> -> /etc/passwd``): the
    project's data files are the files themselves, copied or placed by hand, never links (a link
    would let a hand-placed data set read, hash and publish a file from elsewhere)."""

    def __init__(self, path: str | os.PathLike, what: str = "a data file"):
        self.path, self.real, self.root = str(path), os.path.realpath(path), ""
        ValueError.__init__(self, linked_file_problem(path, what) or f"{path}: {what} is a symbolic link; refused")


def linked_file_problem(path: str | os.PathLike, what: str = "a data file") -> str | None:
    """One line naming ``path`` when it is a symbolic link (else None): refused, nothing read
    through it and the link left as it is."""
    p = Path(path)
    if not p.is_symlink():
        return None
    try:
        target = os.readlink(p)
    except OSError:
        target = "?"
    return (f"{p}: {what} is a symbolic link (-> {target}); refused: nothing is read or hashed through it "
            "(replace the link by the file itself)")
