"""Figures inside the page: a PNG as a ``data:`` URI, so that one HTML file is the whole
report (mailed, attached to a ticket, opened from a file share: nothing beside it).

PNG rather than SVG: matplotlib's SVG with text as paths was at most 20% smaller than the
base64 PNG on the report's figures (larger on two of four), and its ids (glyphs, clip
paths) repeat across figures inlined in one page; SVG with text as text depends on the
reader's fonts, and the ranking's labels are fitted to matplotlib's. The Agg PNG has no
date in it, so the same result gives the same page byte for byte.
"""

from __future__ import annotations

import base64
import html
import io

from matplotlib.figure import Figure

__all__ = ["figure_html", "png_data_uri"]


def png_data_uri(fig: Figure, dpi: float | None = None) -> str:
    """``data:image/png;base64,...`` of ``fig`` at ``dpi`` (default: the figure's own,
    which its layout was fitted to); the figure is cleared afterwards (its artists hold
    the data plotted, which a long session need not keep)."""
    buffer = io.BytesIO()
    fig.savefig(buffer, dpi="figure" if dpi is None else dpi, format="png")
    fig.clear()
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def figure_html(uri: str, alt: str, caption: str) -> str:
    """A ``<figure>`` of an inline image with its escaped alt text and caption."""
    e = html.escape
    return (
        f'<figure><img src="{e(uri)}" alt="{e(alt)}"><figcaption>{e(caption)}</figcaption></figure>'
    )
