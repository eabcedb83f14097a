"""A loaded build: its route table, files read from disk, name summaries, search index, and the
reloader that swaps in a new build."""
