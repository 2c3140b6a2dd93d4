"""Benchmarks: each compares our tools against the real alternative in the same run."""
