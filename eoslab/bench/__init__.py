"""Benchmarks: commands that print figures, each beside its peer or target from the same run."""
