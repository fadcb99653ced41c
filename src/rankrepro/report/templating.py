"""The one Jinja engine of the report (``templates/*.html``, ``*.svg``: autoescaped) and of
docs/results.md (``docs/results.md.j2``: Markdown, not escaped).  A missing variable is an
error, never an empty string; a number is formatted with ``| fmt(".3f")`` (Python's format
spec), which refuses NaN and infinities."""

from __future__ import annotations

import math
from pathlib import Path

import jinja2

TEMPLATES = Path(__file__).parent / "templates"


def fmt(value, spec: str) -> str:
    if isinstance(value, jinja2.Undefined):
        str(value)  # a missing variable: StrictUndefined raises, naming it
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"value {value} cannot be written as a number (format {spec!r})")
    return format(value, spec)


def environment(folder: str | Path = TEMPLATES) -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(folder)), undefined=jinja2.StrictUndefined,
                             autoescape=jinja2.select_autoescape(("html", "svg")), trim_blocks=True,
                             lstrip_blocks=True, keep_trailing_newline=True)
    env.filters["fmt"] = fmt
    return env
