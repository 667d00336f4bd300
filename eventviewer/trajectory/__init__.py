"""Pure-Python logic for OpenHands trajectories: no Django imports here.

- ``tree``: parent resolution, validation, HEAD, root-to-leaf paths, the skeleton.
- ``projection``: consecutive ActionEvents of one LLM response become one turn.
- ``pairing``: which actions are pending, which observations are mismatched.
- ``diagram``: the compressed branch diagram as DOT and SVG.
"""
