"""The runtime: a small Starlette app over a built dist/ (see ARCHITECTURE.md)."""

import petgen  # noqa: F401 - first: it sets NumPy's thread count before anything imports NumPy
