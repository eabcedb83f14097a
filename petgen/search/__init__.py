"""The search engine, imported by both sides: text analysis and the index (build), the query side
(runtime, and the build's checks)."""
