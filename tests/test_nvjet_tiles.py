"""scripts/nvjet_tiles.py reads cuBLAS's kernel names from the probe's TSV as tiles, and its width rule names the
token sides cuBLAS took at 520, 600 and 650 rows on the H100 (rounds/20261208-0008-h100-mid-tiles-cublas-kernels)."""

import importlib.util

from conftest import ROOT


def script():
    spec = importlib.util.spec_from_file_location("ksuite_nvjet_tiles", ROOT / "scripts" / "nvjet_tiles.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_name_reads_as_its_tile_cluster_and_raster_and_other_kernels_as_none():
    nvjet = script()
    tile = nvjet.parse("Memset (Device);nvjet_sm90_tst_128x176_64x5_4x1_v_bz_NNT")
    assert tile == {"first": 128, "second": 176, "k": 64, "stages": 5, "cluster": (4, 1), "raster": "v"}
    assert nvjet.parse("Memset (Device);sm90_xmma_gemm_f16f16_f16f32") is None


def test_the_width_rule_names_cublas_token_sides_at_the_mid_rows():
    nvjet = script()
    assert [nvjet.fitted_width(rows) for rows in (520, 600, 650)] == [176, 152, 168]
    assert nvjet.fitted_width(176) == 176 and nvjet.fitted_width(177) == 96  # two tiles of 89 rows, rounded to 96


def test_a_row_shows_both_readings_and_the_rules_verdict(tmp_path):
    nvjet = script()
    line = nvjet.describe("600x14336x4096", "nvjet_sm90_tst_128x152_64x6_2x1_v_bz_NNT", 132, 176)
    assert "NxM: 128 tiles, rows 0.99, waves 0.97" in line and "MxN: 135 tiles" in line and line.endswith("(same)")
    bad = tmp_path / "other.tsv"
    bad.write_text("a\tb\n1\t2\n")
    assert nvjet.main([str(bad)]) == 2
