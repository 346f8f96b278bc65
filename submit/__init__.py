"""Leaderboard adapters (GPU MODE, KernelBench scoring): package, pre-check, send."""
