"""Benchmarks of the crawler; see bench/README.md."""
