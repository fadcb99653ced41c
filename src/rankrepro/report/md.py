"""Text from the configs in the Markdown outputs (``results/<paper>/<artefact>.md``, the arena's
comparisons), escaped as the HTML report escapes it: a label, title, note or diagnosis is
shown as written, never read as raw HTML (an ``<img onerror=...>``, a ``<script>``), and a
``|`` in it cannot shift a table's columns.  Only what Markdown would read differently is
touched: ``<`` where it could open a tag, ``&`` where it could start an entity, and, in table
cells, ``|`` and line breaks; "p < 0.05" or "A & B" stay as they are."""

from __future__ import annotations

import re
from typing import Any

_TAG = re.compile(r"<(?=[A-Za-z/!?])")  # CommonMark raw HTML starts with one of these
_ENTITY = re.compile(r"&(?=#?[A-Za-z0-9]+;)")


def md_text(value: Any) -> str:
    """Config text for running Markdown (a heading, a paragraph, a list item)."""
    return _TAG.sub("&lt;", _ENTITY.sub("&amp;", str(value)))


def md_cell(value: Any) -> str:
    """Config text for a Markdown table cell: also no ``|`` (written ``&#124;``, which GFM shows
    as a bar without splitting the cell) and no line break (a row is one line)."""
    return re.sub(r"\s*[\r\n]+\s*", " ", md_text(value)).replace("|", "&#124;")
