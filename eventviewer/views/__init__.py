"""Pages, one module per resource: conversations (list, branch, diagram, HEAD), events,
share links (creating them and what a reviewer sees), imports, and the error pages; with
two helpers of the conversation page: the branch list and the problem reasons."""
