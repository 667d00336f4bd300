"""Running ``dot`` and making its SVG safe to inline: an allowlist of elements and
attributes, links only to this site."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from urllib.parse import unquote

import graphviz
from defusedxml.ElementTree import fromstring

SVG_NS = "http://www.w3.org/2000/svg"
XLINK_NS = "http://www.w3.org/1999/xlink"
MAX_NESTING = 64

ALLOWED_ELEMENTS = frozenset(
    {
        "svg",
        "g",
        "title",
        "a",
        "polygon",
        "polyline",
        "path",
        "ellipse",
        "circle",
        "rect",
        "text",
        "tspan",
        "defs",
        "line",
    }
)  # local names in the SVG namespace
ALLOWED_ATTRIBUTES = frozenset(
    {
        "class", "id", "transform", "viewBox", "width", "height", "preserveAspectRatio",
        "fill", "fill-opacity", "stroke", "stroke-width", "stroke-dasharray", "stroke-opacity",
        "stroke-linecap", "stroke-linejoin", "opacity",
        "font-family", "font-size", "font-weight", "font-style", "text-anchor", "text-decoration",
        "points", "d", "x", "y", "x1", "y1", "x2", "y2", "cx", "cy", "r", "rx", "ry",
        "href", "xlink:href", "xlink:title",
    }
)  # fmt: skip
_SAFE_HREF = re.compile(r"(?:/(?![/\\])|\?)[^\s\\<>\"'`\x00-\x1f\x7f]*")
_UNSAFE_VALUE = re.compile(r"javascript:|url\(|expression\(", re.IGNORECASE)
_PROLOG = re.compile(r"<\?xml[^>]*\?>|<!DOCTYPE[^>\[]*>", re.IGNORECASE)


def sanitize_svg(svg: str, *, htmx_target: str | None = None) -> str:
    """Inline-ready SVG: no prolog, doctype or comments; only allowlisted elements and
    attributes; links only to this site (others become plain groups). Raises ValueError
    on a document with a DTD of its own (entities) or that is not SVG."""
    # dot's plain DOCTYPE goes with the prolog; defusedxml refuses any other.
    root = fromstring(_PROLOG.sub("", svg), forbid_dtd=True)
    if root.tag != f"{{{SVG_NS}}}svg":
        raise ValueError("not an SVG document")
    stack = [(root, 0)]
    while stack:
        element, depth = stack.pop()
        # Plain local names, written under the default namespace declared on the root below:
        # no ns0: prefixes and no global namespace registry.
        element.tag = element.tag.removeprefix(f"{{{SVG_NS}}}")
        for child in list(element):
            tag = child.tag if isinstance(child.tag, str) else ""
            if depth < MAX_NESTING and tag.startswith(f"{{{SVG_NS}}}") and tag.split("}")[1] in ALLOWED_ELEMENTS:
                stack.append((child, depth + 1))
            else:
                element.remove(child)
        _clean_attributes(element)
        if element.tag == "a":
            _clean_link(element, htmx_target)
    root.set("xmlns", SVG_NS)
    root.set("xmlns:xlink", XLINK_NS)
    return ET.tostring(root, encoding="unicode")


def _clean_attributes(element: ET.Element) -> None:
    kept = {}
    for key, value in element.attrib.items():
        name = key.replace(f"{{{XLINK_NS}}}", "xlink:")
        if name in ALLOWED_ATTRIBUTES and not _UNSAFE_VALUE.search(value):
            kept[name] = value
    element.attrib.clear()
    element.attrib.update(kept)


def _clean_link(element: ET.Element, htmx_target: str | None) -> None:
    hrefs = [href for key in ("href", "xlink:href") if (href := element.get(key)) is not None]
    if not hrefs or not all(_SAFE_HREF.fullmatch(h) for h in hrefs):
        element.tag = "g"
        for key in ("href", "xlink:href", "xlink:title"):
            element.attrib.pop(key, None)
        return
    title = element.get("xlink:title")
    # Its children are cleaned after it: their tags still carry the namespace.
    if title and element.find(f"{{{SVG_NS}}}title") is None:
        # Browsers show a <title> child as the tooltip, not xlink:title.
        tip = ET.Element("title")
        tip.text = title
        element.insert(0, tip)
    _, hash_mark, fragment = hrefs[0].partition("#")
    if hash_mark and fragment.startswith("event-"):
        # An event on the branch shown: app.js focuses it in place when it is loaded.
        element.set("data-anchor", unquote(fragment.removeprefix("event-")))
    elif htmx_target is not None:
        element.set("hx-get", hrefs[0])
        element.set("hx-target", htmx_target)
        element.set("hx-swap", "outerHTML")
        element.set("hx-push-url", "true")


def render_svg(dot_source: str, *, htmx_target: str | None = None) -> str:
    """Lay out ``dot_source`` with Graphviz's ``dot`` and return sanitized inline SVG."""
    raw = graphviz.pipe("dot", "svg", dot_source.encode("utf-8"))
    return sanitize_svg(raw.decode("utf-8"), htmx_target=htmx_target)
