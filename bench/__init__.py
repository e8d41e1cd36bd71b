"""Benchmarks: each Synapse path against the bare-Temporal shape it stands on, in the same run.

`python -m bench` (or `make bench`) starts one dev server, runs every benchmark with Synapse and
bare samples alternating after a warm-up, and prints one table of medians, p99 and ratios.
`terminal` compares no Temporal path: a free terminal command in its bubblewrap sandbox against the
same command typed into the same shell without one. Nothing here runs in `make test`, and nothing
here asserts on timings.
"""
