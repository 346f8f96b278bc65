"""Probe shapes for dispatch buckets the tuning set misses: inside the bucket, never a held-out shape,
only where the tuning set's values reach, the same every time."""

from harness.workloads import shape_key
from suite.optimize import dispatch
from suite.optimize.probe_shapes import edge_probes, probe_shapes

BUCKETS = {"dim": [4096, 8192], "batch_size": [64, 1024, 8192]}
TUNING = [{"batch_size": 7, "dim": 4096}, {"batch_size": 16, "dim": 8192}, {"batch_size": 127, "dim": 8192},
          {"batch_size": 32768, "dim": 3584}, {"batch_size": 16384, "dim": 768}, {"batch_size": 2048, "dim": 4096}]
HELDOUT = [{"batch_size": 16384, "dim": 8192}, {"batch_size": 32768, "dim": 8192}, {"batch_size": 4096, "dim": 8192}]


def test_each_missed_bucket_gets_a_shape_inside_it_that_is_not_held_out():
    probes = probe_shapes(BUCKETS, TUNING, HELDOUT)
    tuned = {dispatch.bucket_of(s, BUCKETS) for s in TUNING}
    assert set(probes) == {"dim<=4096,batch_size<=1024", "dim<=8192,batch_size<=8192", "dim<=8192,batch_size>8192"}
    assert not set(probes) & tuned
    held = {shape_key(s) for s in HELDOUT}
    for bucket, shape in probes.items():
        assert dispatch.bucket_of(shape, BUCKETS) == bucket and shape_key(shape) not in held
    # the tuning set's 16384 and 32768 rows are held out at 8192 columns: a synthetic count between them
    assert probes["dim<=8192,batch_size>8192"] == {"batch_size": 24576, "dim": 8192}
    assert probes["dim<=8192,batch_size<=8192"] == {"batch_size": 2048, "dim": 8192}  # a tuning-set count
    assert probes["dim<=4096,batch_size<=1024"] == {"batch_size": 127, "dim": 4096}


def test_no_probe_beyond_the_tuning_sets_values_or_the_byte_cap():
    # rows of more than 8192 columns: no tuning shape has one, so that range gets no made-up width
    assert not [b for b in probe_shapes(BUCKETS, TUNING, HELDOUT) if b.startswith("dim>8192")]
    small = probe_shapes(BUCKETS, TUNING, HELDOUT, fits=lambda s: s["batch_size"] * s["dim"] <= 2048 * 8192)
    assert "dim<=8192,batch_size>8192" not in small and "dim<=8192,batch_size<=8192" in small


def test_the_same_sets_give_the_same_probes():
    assert probe_shapes(BUCKETS, TUNING, HELDOUT) == probe_shapes(BUCKETS, list(reversed(TUNING)), HELDOUT)
    assert probe_shapes(BUCKETS, [], HELDOUT) == {}


def test_every_bucket_the_real_workloads_reach_gets_a_tuning_or_probe_shape():
    """For each family in solutions/: the held-out shapes land only in buckets the search times (at a
    tuning shape or a probe), so none is judged on a table entry copied from elsewhere."""
    from pathlib import Path

    from harness.loader import load_problem
    from suite.optimize.table_command import probes_for

    root = Path(__file__).resolve().parents[1]
    for family in sorted(root.glob("solutions/*/triton_family.py")):
        meta = load_problem(root / "problems" / f"{family.parent.name}.py").meta
        buckets = dispatch.read_buckets(family.read_text())
        tuning, heldout = meta.sweep("tuning"), meta.sweep("heldout")
        probes, edges = probes_for(meta, buckets, tuning)
        timed = {dispatch.bucket_of(s, buckets) for s in tuning} | set(probes)
        assert {dispatch.bucket_of(s, buckets) for s in heldout} <= timed, family
        made = list(probes.values()) + list(edges.values())
        assert not {shape_key(s) for s in made} & {shape_key(s) for s in heldout}, family
        assert all(dispatch.bucket_of(shape, buckets) == bucket for bucket, shape in edges.items()), family


def test_a_bucket_tuned_only_in_the_low_part_of_a_range_gets_an_edge_probe():
    """dim<=4096,batch_size<=64 holds only 7 rows: a shape toward 64 rows joins it (the edge itself first, then
    nearer values), never a held-out one; a bucket whose tuning shapes reach past half its edges gets none."""
    edges = edge_probes(BUCKETS, TUNING, HELDOUT)
    assert edges["dim<=4096,batch_size<=64"] == {"batch_size": 64, "dim": 4096}
    held = HELDOUT + [{"batch_size": 64, "dim": 4096}]
    assert edge_probes(BUCKETS, TUNING, held)["dim<=4096,batch_size<=64"] == {"batch_size": 21, "dim": 4096}
    assert edges["dim<=4096,batch_size<=8192"] == {"batch_size": 8192, "dim": 4096}  # 2048 of up to 8192 rows
    assert edges["dim<=8192,batch_size<=64"] == {"batch_size": 64, "dim": 8192}  # 16 of up to 64
    assert "dim<=4096,batch_size>8192" not in edges  # no upper edge: nothing to reach toward
    for bucket, shape in edges.items():
        assert dispatch.bucket_of(shape, BUCKETS) == bucket and shape_key(shape) not in {shape_key(s) for s in HELDOUT}
    assert edge_probes(BUCKETS, list(reversed(TUNING)), HELDOUT) == edges


def test_a_bucket_timed_only_at_its_probe_gets_an_edge_probe_too():
    """dim<=8192,batch_size<=8192 has no tuning shape: its probe has 2048 of up to 8192 rows, so a shape at the
    edge joins it (never a held-out one: with 8192 rows held out too, the midpoint 4096 is also held out, and
    none is made); without the probes passed, nothing is made for it."""
    probes = probe_shapes(BUCKETS, TUNING, HELDOUT)
    edges = edge_probes(BUCKETS, TUNING, HELDOUT, probes=probes)
    assert edges["dim<=8192,batch_size<=8192"] == {"batch_size": 8192, "dim": 8192}
    assert "dim<=8192,batch_size<=8192" not in edge_probes(BUCKETS, TUNING, HELDOUT)
    held = HELDOUT + [{"batch_size": 8192, "dim": 8192}]
    assert "dim<=8192,batch_size<=8192" not in edge_probes(BUCKETS, TUNING, held, probes=probes)
    assert {b: s for b, s in edges.items() if b not in probes} == edge_probes(BUCKETS, TUNING, HELDOUT)
