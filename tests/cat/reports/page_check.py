"""Checks that an HTML page stands alone: well formed, every image inline, nothing linked."""

from __future__ import annotations

import base64
from html.parser import HTMLParser

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
_PNG_URI = "data:image/png;base64,"
# Elements that never have an end tag in HTML.
_VOID = frozenset({"area", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source"})


class _Page(HTMLParser):
    """Collects every src/href and checks that the tags nest."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.open: list[str] = []
        self.problems: list[str] = []
        self.links: list[tuple[str, str, str]] = []  # (tag, attribute, value)
        self.tags: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        for name, value in attrs:
            if name in ("src", "href", "srcset", "data", "action") and value is not None:
                self.links.append((tag, name, value))
        if tag not in _VOID:
            self.open.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        if tag not in _VOID:
            self.open.pop()

    def handle_endtag(self, tag: str) -> None:
        if not self.open or self.open[-1] != tag:
            self.problems.append(f"</{tag}> closes {self.open[-1:] or 'nothing'}")
            return
        self.open.pop()


def inline_images(page: str) -> list[bytes]:
    """The page's images, decoded; fails unless the page is well formed (every tag
    closed in order), starts with a doctype, and every src/href is an inline PNG or an
    in-page anchor (no file, no URL)."""
    assert page.startswith("<!DOCTYPE html>")
    parser = _Page()
    parser.feed(page)
    parser.close()
    assert not parser.problems, parser.problems[:3]
    assert not parser.open, f"unclosed: {parser.open}"
    assert {"html", "head", "body", "title"} <= set(parser.tags)
    images = []
    for tag, attribute, value in parser.links:
        if value.startswith("#"):
            continue
        assert tag == "img" and attribute == "src", (tag, attribute, value[:60])
        assert value.startswith(_PNG_URI), value[:60]
        data = base64.b64decode(value[len(_PNG_URI) :], validate=True)
        assert data.startswith(PNG_MAGIC)
        images.append(data)
    return images
