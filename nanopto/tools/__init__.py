"""Tools around the passes for people exploring rules: e-graph pictures, the HTML before/after
page, syntax highlighting, user rules files.

Nothing here is needed to run a pass; the CLI and notebooks import these modules on demand.
"""
