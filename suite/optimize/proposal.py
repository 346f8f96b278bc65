"""What every proposer hands the loop, and what the loop tells it back."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Proposal:
    """A candidate source, or (source None) a proposer failure with its ledger status."""

    description: str
    source: str | None = None
    config: dict | None = None  # flat tunables, for the search strategy's configuration table
    status: str | None = None  # crashed | timed-out when no source came back


@dataclass
class Context:
    """What a proposer may look at: the problem, the current best and what went wrong lately."""

    problem_source: str
    best_source: str
    best_numbers: str = "not timed yet"
    failures: list[str] = field(default_factory=list)  # newest last
    gpu: str = "cpu"
    machine_code: str = ""  # the best kernel's registers, residency, widths (suite/optimize/machine_code.py)
