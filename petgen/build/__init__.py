"""Stage 3, the build itself: the pipeline, the build cache and the dist writer (hashed files,
manifest, atomic swap)."""
