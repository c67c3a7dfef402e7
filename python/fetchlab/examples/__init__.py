"""Example policies for ``external:`` (run them with ``python3 -m fetchlab.examples.<name>``)."""
