"""axe-core (tests/browser/vendor/axe.min.js) on every kind of page, light and dark: no
serious or critical violation."""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import open_page_types

pytestmark = pytest.mark.browser

AXE = Path(__file__).resolve().parent / "vendor" / "axe.min.js"

RUN_AXE = """async () => {
  const result = await axe.run(document, {resultTypes: ["violations"]});
  return result.violations
    .filter(v => v.impact === "serious" || v.impact === "critical")
    .map(v => `${v.id} (${v.impact}): ${v.help}; ` + v.nodes.slice(0, 3).map(n => n.target.join(" ")).join(" | "));
}"""


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_no_page_has_a_serious_accessibility_problem(new_context, page_types, scheme, browser):
    problems = []
    pages = open_page_types(new_context, page_types, color_scheme=scheme, viewport={"width": 1400, "height": 900})
    for page_type, page in pages:
        if page.evaluate("typeof axe") == "undefined":
            page.evaluate(AXE.read_text())  # through DevTools: the page's CSP allows no inline script
        problems += [f"{page_type.name}: {v}" for v in page.evaluate(RUN_AXE)]
    assert not problems, "\n".join(problems)
