"""Numba's cache of ``algorithms/_compiled`` is keyed on that file alone, but its kernels inline the
row helpers of ``algorithms/_rows``: an edit of ``_rows`` that leaves ``_compiled.py`` as it was
would run kernels compiled before the edit.  ``_compiled.ROWS_SHA256`` names the ``_rows.py`` they
go with, so such an edit fails here until ``_compiled.py`` changes too."""

import hashlib
from pathlib import Path

from rankrepro.algorithms import _compiled


def test_the_compiled_kernels_name_the_row_helpers_they_inline():
    rows = Path(_compiled.__file__).with_name("_rows.py")
    digest = hashlib.sha256(rows.read_bytes()).hexdigest()[:16]
    assert _compiled.ROWS_SHA256 == digest, (
        f"algorithms/_rows.py changed (sha256 {digest}...) but algorithms/_compiled.py still names "
        f"{_compiled.ROWS_SHA256}: set ROWS_SHA256 = \"{digest}\" so numba's cache of the kernels is rebuilt")
