"""The runtime: a small Starlette app over a built dist/ (see ARCHITECTURE.md)."""
