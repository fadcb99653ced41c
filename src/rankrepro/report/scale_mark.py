"""The mark of a figure made at a scale other than the paper's (smoke, a test's tiny size):
its numbers only show that the pipeline runs, and the figure says so where it is seen, not
only in its file's folder or title.  Used by the artefacts' figures (:mod:`.figures`) and
the arena's critical-difference diagram (:mod:`.arena`)."""

from __future__ import annotations


def scale_note(scale: str) -> str | None:
    """The note a figure made at ``scale`` carries; None at paper scale."""
    return None if scale == "paper" else f"{scale} scale \u2014 not the paper's protocol"


def mark_scale(fig, scale: str) -> None:
    """Write :func:`scale_note` in red across the bottom of ``fig`` (nothing at paper scale),
    as a text artist with gid ``scale-note``.  Call it after the figure's layout: it raises
    the axes' bottom to leave the note room."""
    note = scale_note(scale)
    if note is None:
        return
    fig.text(0.5, 0.005, note, ha="center", va="bottom", fontsize=11, fontweight="bold", color="#b00000",
             gid="scale-note")
    fig.subplots_adjust(bottom=fig.subplotpars.bottom + 0.3 / fig.get_figheight())
