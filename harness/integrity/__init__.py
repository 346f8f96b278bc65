"""Integrity (anti-cheat): the ways a candidate can pass without doing the work honestly, and how each is caught.

static_check.py reads the source before it runs; probe.py watches one call (dispatch_check.py: its kernel
launches and torch ops; provenance.py: where its output's bytes came from); checks.py holds the per-call
checks the correctness stages and timing apply (aliasing, mutated inputs, implausible speed).
"""
