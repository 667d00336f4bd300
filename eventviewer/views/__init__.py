"""Pages, one module per resource: conversations (list, branch, diagram, HEAD), events,
share links (creating them and what a reviewer sees), imports, and the error pages."""
