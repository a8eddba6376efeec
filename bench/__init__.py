"""Benchmarks: each module prints `name=value` figures; `python -m bench` runs them all (see __main__)."""
