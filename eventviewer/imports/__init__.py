"""The import layer: finding conversations in what a user hands us (``sources``) and
storing them all-or-nothing (``importer``)."""
