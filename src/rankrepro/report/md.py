"""Text from the configs in the Markdown outputs (``results/<paper>/<artefact>.md``, the arena's
comparisons, the articles), escaped as the HTML report escapes it: a label, title, note or
diagnosis is shown as written, never read as raw HTML (an ``<img onerror=...>``, a ``<script>``),
and a ``|`` in it cannot shift a table's columns.  Free text is *inline* text: it cannot make
a block of its own (a blank line and ``## ...`` would be a heading and a fake verdict line, so
line breaks become spaces, and a leading ``#``, ``>``, list or rule marker is escaped), nor a
link or an image (``![x](/abs/secret.png)``: its brackets are escaped where they would make one).
Only what Markdown would read differently is touched: ``<`` where it could open a tag, ``&``
where it could start an entity, brackets right before ``(``, ``[`` or ``:``, and, in table cells,
``|``; "p < 0.05", "A & B" or "[0, 1]" stay as they are."""

from __future__ import annotations

import re
from typing import Any

_TAG = re.compile(r"<(?=[A-Za-z/!?])")  # CommonMark raw HTML starts with one of these
_ENTITY = re.compile(r"&(?=#?[A-Za-z0-9]+;)")
_BREAKS = re.compile(r"\s*[\r\n]+\s*")
_LINKISH = re.compile(r"\][(\[:]")  # [text](url), [text][ref], [ref]: url (no space between, as CommonMark has it)
#: what opens a block at the start of a line: a heading, a quote, a list item, a rule
_BLOCK = re.compile(r"^(?:#{1,6}(?=\s|$)|>|[+*-](?=\s|$)|\d{1,9}(?=[.)](?:\s|$))|(?=([-*_=])(?:\s*\1){2,}\s*$))")


def _inline(value: Any) -> str:
    s = _BREAKS.sub(" ", _TAG.sub("&lt;", _ENTITY.sub("&amp;", str(value))))
    if _LINKISH.search(s):
        s = s.replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]")
    return s


def md_text(value: Any) -> str:
    """Config text for running Markdown (a heading, a paragraph, a list item): one line of
    inline text."""
    s = _inline(value)
    m = _BLOCK.match(s)
    if not m:
        return s
    # a number's marker is its "." or ")": escaped after the digits; any other, the first character
    return s[:m.end()] + "\\" + s[m.end():] if s[:1].isdigit() else "\\" + s


def md_cell(value: Any) -> str:
    """Config text for a Markdown table cell: also no ``|`` (written ``&#124;``, which GFM shows
    as a bar without splitting the cell) and no line break (a row is one line)."""
    return _inline(value).replace("|", "&#124;")
