"""`--strategy search`: coordinate descent over a solution's TUNABLES, with random restarts.

Each pass changes one tunable at a time around the current best (which moves as soon as a candidate is
kept, and the pass starts again around it); a pass with no keep is followed by a random point of the
space, then a new pass around whatever is best. Cheaper than a grid (sum, not product, of the value
counts per pass) and it escapes a local optimum the grid would also find, by the restarts. Needs no
network. Every configuration is tried at most once. A pass goes in rings: the nearest value on either side
of every tunable first, then the next of each, and so on, so that a search capped at a dozen experiments a bucket
tries each tunable's likeliest steps rather than every value of the first two (rmsnorm's search of
2026-12-04 spent its 12 a bucket on num_warps and BLOCK_M, their far values at 0.44-0.83x, and never reached
ONE_PASS or BLOCK_N). A file's TUNABLE_SEEDS (whole configurations, such as
the launch torch.compile's autotuner picks) are proposed before the first pass: a change of three
tunables at once is out of one-coordinate reach. A file's TUNABLE_OVERRIDES (a switch -> the tunables it
decides while on) make a step that changes one of those turn the switch off as well, and its switches (the
family's forms) come first in every ring of a pass.
"""

from __future__ import annotations

import math
import random

from suite.optimize import tunables
from suite.optimize.proposal import Context, Proposal


def describe(old: dict, new: dict) -> str:
    changes = [f"{k} {old[k]}->{new[k]}" for k in new if old.get(k) != new[k]]
    return "search: " + (", ".join(changes) or "starting configuration")


class SearchProposer:
    name = "search"

    def __init__(self, base_source: str, seed: int = 0, restarts: int = 3):
        self.base_source = base_source
        self.space = tunables.space(base_source)
        self.best = tunables.flatten(tunables.read(base_source))
        self.overrides = tunables.overrides(base_source)
        self.rng = random.Random(seed)
        self.restarts_left = restarts
        self.tried = {self._freeze(self.best)}
        # the file's seeds first (whole configurations, e.g. torch.compile's pick), each over the current best
        self.seed_pairs = self._seeded([tunables.flatten(seed) for seed in tunables.seeds(base_source)])
        self.seeds = [config for _, config in self.seed_pairs]
        self.queue: list[dict] = list(self.seeds)
        self.pass_started = False  # the first pass starts after the seeds

    def _seeded(self, seeds: list[dict]) -> list[tuple[dict, dict]]:
        """(a seed's changes, the configuration they make over the current best) for each seed that makes an
        untried configuration of the space's tunables, each configuration once."""
        pairs: list[tuple[dict, dict]] = []
        for changes in seeds:
            config = self._unmasked({**self.best, **changes}, *changes)
            if (self._freeze(config) not in self.tried and config not in [c for _, c in pairs]
                    and set(config) == set(self.best)):
                pairs.append((changes, config))
        return pairs

    @staticmethod
    def _freeze(config: dict) -> tuple:
        return tuple(sorted(config.items()))

    def _neighbours(self, key: str) -> list[list[dict]]:
        """Untried single changes of `key` in rings by distance: ring 0 the nearest value on either side (in
        powers of two; the larger first), ring 1 the next, and so on; a value that is no size (a switch, a
        name, SPLIT_K's 0) is in ring 0. For a tile size, each change again with num_warps scaled alike, one
        ring further out (a tile grown at fixed warps holds more per thread and may spill: one coordinate at
        a time never reaches the larger tile with more warps)."""
        current = self.best[key]
        values = [v for v in self.space[key] if v != current]

        def positive(v) -> bool:
            return isinstance(v, int) and not isinstance(v, bool) and v > 0

        def distance(v) -> float | None:  # None: not a size (a switch, a name, SPLIT_K's 0): ring 0
            return round(abs(math.log2(v / current)), 6) if positive(v) and positive(current) else None

        values = (sorted((v for v in values if distance(v) is not None), key=lambda v: (distance(v), -v))
                  + [v for v in values if distance(v) is None])
        levels = sorted({d for v in values if (d := distance(v)) is not None})
        rings: list[list[dict]] = [[] for _ in range(len(levels) + 1)]
        seen: list[dict] = []
        for v in values:
            ring = 0 if distance(v) is None else levels.index(distance(v))
            for c, at in (({**self.best, key: v}, ring), (self._paired(key, v), ring + 1)):
                if c is None:
                    continue
                c = self._unmasked(c, *(k for k in c if c[k] != self.best[k]))
                if self._freeze(c) not in self.tried and c not in seen:
                    seen.append(c)
                    rings[at].append(c)
        return rings

    def _pass(self) -> list[dict]:
        """One pass around the current best, ring by ring: every tunable's ring 0, then every ring 1, ...; in
        each ring the form switches (TUNABLE_OVERRIDES' keys) first: a switch changes the kernel's form, the
        largest step a bucket has, and a capped search must not spend its cap before reaching it (rotary's
        CHUNKS, the form written for head_dim 96, was never tried in four searches of 2026-12-01 to -05)."""
        keys = sorted(self.space, key=lambda k: k not in self.overrides)  # stable: the declared order otherwise
        per_key = [self._neighbours(key) for key in keys]
        out: list[dict] = []
        for ring in range(max((len(r) for r in per_key), default=0)):
            for rings in per_key:
                out.extend(c for c in (rings[ring] if ring < len(rings) else []) if c not in out)
        return out

    def _unmasked(self, config: dict, *keys: str) -> dict:
        """config with every switch that decides one of `keys` while on (TUNABLE_OVERRIDES) turned off, unless
        the switch is one of `keys` itself (a seed that names it says what it wants)."""
        for switch, decided in self.overrides.items():
            if switch not in keys and set(keys) & set(decided) and config.get(switch) and switch in self.space:
                config = {**config, switch: next((v for v in self.space[switch] if not v), False)}
        return config

    def _paired(self, key: str, value) -> dict | None:
        """`key` set to `value` and the sibling num_warps scaled by the same factor, if it is a choice.
        Tile sizes are the BLOCK_* tunables other than a reduction depth (BLOCK_K)."""
        prefix, _, name = key.rpartition(".")
        warps_key = f"{prefix}.num_warps" if prefix else "num_warps"
        if not name.startswith("BLOCK") or name.endswith("_K") or warps_key not in self.space:
            return None
        current, warps = self.best[key], self.best[warps_key]
        if not all(isinstance(v, int) and v > 0 for v in (current, value, warps)):
            return None
        scaled = warps * value / current
        if scaled == warps or scaled not in self.space[warps_key]:
            return None
        return {**self.best, key: value, warps_key: int(scaled)}

    def _random_point(self) -> dict | None:
        for _ in range(200):
            c = {k: self.rng.choice(vals) for k, vals in self.space.items()}
            if self._freeze(c) not in self.tried:
                return c
        return None

    def _refill(self) -> None:
        if self.queue:
            return
        if not self.pass_started:  # the seeds are done: the first pass
            self.pass_started = True
            self.queue = self._pass()
        while not self.queue and self.restarts_left > 0:  # a pass without a keep: a random point
            self.restarts_left -= 1
            point = self._random_point()
            if point is None:
                return
            self.queue = [point]

    def propose(self, context: Context) -> Proposal | None:
        self._refill()
        if not self.queue:
            return None
        config = self.queue.pop(0)
        self.tried.add(self._freeze(config))
        source = tunables.replace(self.base_source, tunables.unflatten(config))
        return Proposal(describe(self.best, config), source, config)

    def feedback(self, proposal: Proposal, kept: bool) -> None:
        if kept and proposal.config is not None:
            # the rest of the pass would differ from the new best in two places: a new pass around it, after
            # the seeds not yet tried, made again over the new best (made over the start, a seed that does not
            # name the kept change would undo it: rmsnorm's 16-warp seeds turned HINTS back on in the H100's
            # search of 2026-12-06, right after HINTS off was kept)
            remaining = [changes for changes, config in self.seed_pairs if config in self.queue]
            self.best = dict(proposal.config)
            self.seed_pairs = self._seeded(remaining)
            self.seeds = [config for _, config in self.seed_pairs]
            self.pass_started = True
            self.queue = self.seeds + [c for c in self._pass() if c not in self.seeds]
