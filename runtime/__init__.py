"""The runtime: a small Starlette app over a built dist/ (see ARCHITECTURE.md)."""

import petgen.contract  # noqa: F401 - first: the petgen package sets NumPy's thread count before anything imports it
