"""scripts/power_probe.py: nvidia-smi's samples read back, and each phase's row holds the card's state while that
phase ran, not the whole probe's."""

from datetime import datetime

from conftest import load_script


def load():
    return load_script("power_probe")


def test_samples_parse_and_a_phase_averages_only_its_own():
    module = load()
    lines = ["2026/12/07 06:40:00.000, 1980 MHz, 690.12 W, 61",
             "2026/12/07 06:40:00.050, 1755 MHz, 699.80 W, 66",
             "2026/12/07 06:40:00.100, 1725 MHz, 700.10 W, 68",
             "[N/A], [N/A], [N/A], [N/A]"]  # a line that does not parse is skipped
    samples = module.parse_samples(lines)
    assert [s[1] for s in samples] == [1980.0, 1755.0, 1725.0]
    t0 = datetime(2026, 12, 7, 6, 40).timestamp()
    row = module.phase_line("8192x3072x8192", "block 1", "torch", 596.4, 240, t0 + 0.04, t0 + 0.11, samples)
    assert row.split("\t") == ["8192x3072x8192", "block 1", "torch", "596.4", "240", "1740", "700", "66-68"]
    empty = module.phase_line("s", "paired", "torch", 1.0, 5, t0 + 5, t0 + 6, samples)
    assert empty.split("\t")[-3:] == ["-", "-", "-"]
