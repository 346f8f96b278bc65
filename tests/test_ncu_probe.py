"""scripts/ncu_probe.py without a GPU: what it asks ncu for, how it reads ncu's CSV, and the one line it
prints where ncu is missing."""

import importlib.util

from conftest import ROOT

spec = importlib.util.spec_from_file_location("ncu_probe", ROOT / "scripts" / "ncu_probe.py")
ncu_probe = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ncu_probe)

HEADER = ('"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size",'
          '"Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"\n')


def row(kid, kernel, section, metric, unit, value):
    return (f'"{kid}","7","python3","h","{kernel}","1","7","(384, 1, 1)","(132, 1, 1)","0","9.0","{section}",'
            f'"{metric}","{unit}","{value}"\n')


def test_reads_each_kernels_speed_of_light_from_ncu_csv():
    text = ("==PROF== Connected to process 7\n" + HEADER
            + row(0, "fmha_kernel", "GPU Speed Of Light Throughput", "Duration", "msecond", "8.61")
            + row(0, "fmha_kernel", "GPU Speed Of Light Throughput", "Compute (SM) Throughput", "%", "71.2")
            + row(0, "fmha_kernel", "Launch Statistics", "Registers Per Thread", "register/thread", "168")
            + row(1, "reduce_kernel", "GPU Speed Of Light Throughput", "DRAM Throughput", "%", "88.0")
            + "==PROF== Disconnected from process 7\n")
    kernels = ncu_probe.parse_details(text)
    assert [k["name"] for k in kernels] == ["fmha_kernel", "reduce_kernel"]
    assert kernels[0]["duration"] == "8.61 msecond" and kernels[0]["compute %"] == "71.2"
    assert kernels[0]["regs"] == "168 register/thread" and kernels[0]["grid"] == "(132, 1, 1)"
    assert kernels[1]["dram %"] == "88.0" and "duration" not in kernels[1]
    assert "fmha_kernel" in ncu_probe.table("fused", kernels)[0]


def test_no_table_from_output_without_ncu_csv():
    assert ncu_probe.parse_details("==ERROR== LibraryNotLoaded\n") == []


def test_ncu_leaves_the_clocks_alone_and_reads_only_the_profiled_call():
    cmd = ncu_probe.ncu_command("/x/ncu", ["attention_causal", "1x8x256x64", "float16", "fused"])
    assert cmd[:5] == ["/x/ncu", "--clock-control", "none", "--profile-from-start", "off"]
    assert cmd[-5:] == ["target", "attention_causal", "1x8x256x64", "float16", "fused"]


def test_missing_ncu_is_one_line_and_a_failure(monkeypatch, capsys, tmp_path):
    monkeypatch.setattr(ncu_probe, "find_ncu", lambda: None)
    rc = ncu_probe.main(["run", "attention_causal", "1x8x256x64", "float16", "fused", "--out", str(tmp_path)])
    out = capsys.readouterr().out.strip().splitlines()
    assert rc == 1 and len(out) == 1 and "ncu" in out[0]
