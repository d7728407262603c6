"""The kit's version (in a module of its own, so the grading report can name it without importing the package face)."""

__version__ = "0.1.0"
