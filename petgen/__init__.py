"""petgen: compile the Kosenamen knowledge base into a static JSON API and site."""

__version__ = "0.1.0"
