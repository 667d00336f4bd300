"""The SVG sanitizer parses with defusedxml: no entity expansion, no external entity."""

from __future__ import annotations

import pytest

from eventviewer.trajectory.diagram import sanitize_svg

LAUGHS = (
    '<!DOCTYPE svg [<!ENTITY a "lol"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">'
    '<!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">]>'
    '<svg xmlns="http://www.w3.org/2000/svg"><text>&c;</text></svg>'
)
EXTERNAL = (
    '<!DOCTYPE svg [<!ENTITY x SYSTEM "file:///etc/hostname">]>'
    '<svg xmlns="http://www.w3.org/2000/svg"><text>&x;</text></svg>'
)
PARAMETER = (
    '<!DOCTYPE svg [<!ENTITY % p SYSTEM "http://127.0.0.1:9/x.dtd"> %p;]>'
    '<svg xmlns="http://www.w3.org/2000/svg"><text>x</text></svg>'
)


@pytest.mark.parametrize("svg", [LAUGHS, EXTERNAL, PARAMETER], ids=["expansion", "external", "parameter"])
def test_a_document_with_its_own_dtd_is_refused(svg):
    with pytest.raises(ValueError):
        sanitize_svg(svg)


def test_dots_own_doctype_and_prolog_are_dropped_not_refused():
    svg = sanitize_svg(
        '<?xml version="1.0" encoding="UTF-8" standalone="no"?>\n'
        '<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN"\n "http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd">\n'
        '<svg xmlns="http://www.w3.org/2000/svg" width="8pt"><text>1 &amp; 2</text></svg>'
    )
    assert svg.startswith("<svg ") and "DOCTYPE" not in svg and "<text>1 &amp; 2</text>" in svg
