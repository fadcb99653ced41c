"""Figures embedded in the self-contained pages (the report, the articles) as data URIs.

The PNG files under figures/ stay as the plotting rules wrote them; the copy a page embeds is
re-encoded with a palette of at most 256 colours (median cut, no dithering: the figures are
line art on white) and PNG's optimiser, about a third of the bytes (the report was 4.9 MB with
the files as they are).  The same input and Pillow version give the same bytes, so a page
rebuilt from the same figures is the same file.
"""

from __future__ import annotations

import base64
import io
import os
from pathlib import Path


def png_data_uri(path: str | os.PathLike) -> str:
    """``data:image/png;base64,...`` of the figure ``path``, palette-encoded."""
    from PIL import Image

    with Image.open(path) as im:
        pal = im.convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    out = io.BytesIO()
    pal.save(out, format="PNG", optimize=True)
    return "data:image/png;base64," + base64.b64encode(out.getvalue()).decode()
