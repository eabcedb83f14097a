"""petgen: compile the Kosenamen knowledge base into a static JSON API and site."""

import os

# NumPy's OpenBLAS starts a thread per core when it is imported, and nothing here multiplies matrices: one thread
# saves a third of NumPy's import time and, in the build's workers and the runtime's, a thread that spins for
# nothing. Set before any module of petgen (or of the runtime, which imports this package first) imports NumPy.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

__version__ = "0.1.0"
