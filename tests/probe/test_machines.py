"""Whole recorded machines, replayed: every GPU, driver and fact, and how each was found.

The trees and outputs are in tests/fixtures/probe/machines/<name>/ (sources in SOURCES.md there).
"""

from __future__ import annotations

from envcheck.machine.io import load_machine


def test_multi_gpu_nvidia_box(replay_machine):
    m, replay = replay_machine("nvidia-2x-a5000")
    assert [(g.vendor, g.name, g.arch, g.memory_mib, g.index) for g in m.gpus] == [
        ("nvidia", "NVIDIA RTX A5000", "sm_86", 24564, 0),
        ("nvidia", "NVIDIA RTX A5000", "sm_86", 24564, 1),
    ]
    assert [g.uuid for g in m.gpus] == ["GPU-12345678-aaaa-bbbb-cccc-0123456789ab",
                                        "GPU-12345678-aaaa-bbbb-cccc-0123456789cd"]
    assert all(g.serve and not g.integrated and g.mig is None for g in m.gpus)
    assert m.nvidia_driver == "590.44.01"
    assert m.how["nvidia_driver"].startswith("nvidia-smi --query-gpu")
    # no banner recorded for this box: the CUDA version comes from the XML, and how says so
    assert m.cuda_driver_max == "13.1"
    assert m.how["cuda_driver_max"].startswith("<cuda_version> of nvidia-smi -q -x")
    assert ("nvidia-smi", "-q", "-x") in replay.calls
    assert m.distro == "ubuntu22.04" and m.wsl is False
    assert "nvidia: nvidia-smi --query-gpu" in m.how["gpus"]
    assert "nvidia_driver" not in m.unknown and "cuda_driver_max" not in m.unknown


def test_mixed_nvidia_and_amd_box_lists_both(replay_machine):
    m, _ = replay_machine("mixed-3090-7900xtx")
    assert [(g.vendor, g.name, g.arch) for g in m.gpus] == [
        ("nvidia", "NVIDIA GeForce RTX 3090", "sm_86"),
        ("amd", "AMD Radeon RX 7900 XTX", "gfx1100"),
    ]
    amd = m.gpus[1]
    assert amd.memory_mib == 24560 and amd.serve and not amd.integrated
    assert "gfx_target_version 110000 → gfx1100" in amd.how
    # seven matrix GPUs are gfx1100; the VRAM size picks the 7900 XTX and the note says so
    assert "24576 MiB (VRAM 24560 MiB)" in amd.how
    # one wheel drives one vendor (#10): the plan is for the first GPU's vendor, the other stays unused
    assert m.served_gpus == m.gpus[:1] and m.unserved_gpus == m.gpus[1:]
    assert m.rocm == "6.4.1" and m.how["rocm"].startswith("/opt/rocm/.info/version")
    assert m.nvidia_driver == "590.44.01" and m.cuda_driver_max == "13.1"
    assert m.unknown == {}


def test_wsl2_nvidia_uses_the_windows_driver(replay_machine):
    m, replay = replay_machine("wsl2-nvidia-quadro")
    assert m.wsl is True and m.wsl_version == 2
    assert "5.4.91-microsoft-standard-WSL2" in m.how["wsl"] and "/dev/dxg present" in m.how["wsl"]
    assert [(g.name, g.arch, g.memory_mib, g.uuid) for g in m.gpus] == [("Quadro RTX 4000", "sm_75", 8192, None)]
    assert m.nvidia_driver == "527.27"  # the Windows driver, not the 525.60.07 of the WSL user-mode library
    assert "/usr/lib/wsl/lib/nvidia-smi --query-gpu (WSL2: the Windows driver)" in m.how["nvidia_driver"]
    assert m.cuda_driver_max == "12.0"
    assert m.how["cuda_driver_max"] == "'CUDA Version' in the /usr/lib/wsl/lib/nvidia-smi banner"
    smi = [c for c in replay.calls if c[0].endswith("nvidia-smi")]  # probes run in threads: rocminfo may come first
    assert smi[0][0].endswith("/root/usr/lib/wsl/lib/nvidia-smi")


def test_wsl2_radeon_7900xtx_via_rocminfo(replay_machine):
    m, replay = replay_machine("wsl2-radeon-7900xtx")
    assert m.wsl is True and m.wsl_version == 2
    assert [(g.vendor, g.name, g.arch, g.memory_mib, g.uuid) for g in m.gpus] == [
        ("amd", "AMD Radeon RX 7900 XTX", "gfx1100", 24560, "GPU-4fe81514950cd6cd")]
    assert m.gpus[0].how == "rocminfo (WSL): agent Name gfx1100"
    assert "KFD topology: /sys/class/kfd/kfd/topology/nodes: absent" in m.how["amd_gpus"]
    assert m.rocm == "6.4.1"
    assert m.amd_driver is None and "not visible from inside WSL" in m.unknown["amd_driver"]
    assert m.nvidia_driver is None and "nvidia-smi not found" in m.unknown["nvidia_driver"]
    assert ("rocminfo",) in replay.calls


def test_wsl2_radeon_that_rocminfo_cannot_see(replay_machine):
    from tests.probe.replay import MACHINES

    text = (MACHINES / "wsl2-radeon-7900xtx" / "rocminfo-cpu-only.txt").read_text()
    m, _ = replay_machine("wsl2-radeon-7900xtx", {("rocminfo",): text})
    assert m.gpus == []
    assert "rocminfo (WSL) lists no GPU agent (only the CPU)" in m.unknown["amd_gpus"]
    assert "amd_driver" not in m.unknown  # no AMD GPU seen, so no Windows driver to ask about


def test_open_module_loaded_but_nvidia_smi_fails(replay_machine):
    m, _ = replay_machine("nvidia-open-proc-only")
    assert m.gpus == []
    assert m.nvidia_driver == "565.57.01"
    assert m.how["nvidia_driver"].startswith("/proc/driver/nvidia/version (")
    assert "nvidia-smi exited with status 9: NVIDIA-SMI has failed" in m.how["nvidia_driver"]
    assert "does not state the CUDA version" in m.unknown["cuda_driver_max"]
    assert "pass them with --gpu" in m.unknown["nvidia_gpus"]


def test_kfd_without_gfx_target_version_is_stated(replay_machine):
    m, _ = replay_machine("amd-apu-raven-fiji")
    assert m.gpus == []
    why = m.unknown["amd_gpus"]
    assert "KFD node 0 is a GPU but has no gfx_target_version line" in why
    assert "KFD node 1 is a GPU but has no gfx_target_version line" in why
    assert "rocminfo: rocminfo not found" in why


def test_amd_smi_when_there_is_no_kfd_and_no_rocminfo(replay_machine):
    m, replay = replay_machine("amd-smi-mi350x")
    assert [(g.name, g.arch, g.index) for g in m.gpus] == [("AMD Instinct MI350X", "gfx950", 0)]
    assert m.how["amd_gpus"].endswith("amd-smi static --asic")
    assert ("rocminfo",) in replay.calls and ("amd-smi", "static", "--asic") in replay.calls


def test_apu_node_is_integrated_and_not_served(replay_machine, tmp_path):
    """An APU node (CPU cores + SIMDs) with a gfx_target_version: listed, integrated, not served."""
    import shutil

    from envcheck.probe import probe_machine
    from envcheck.runner import Replay
    from tests.probe.replay import MACHINES

    root = tmp_path / "root"
    shutil.copytree(MACHINES / "mixed-3090-7900xtx" / "root", root)
    node0 = root / "sys/class/kfd/kfd/topology/nodes/0/properties"
    # the Raven APU node of ROCm/amdgpu#66, as a current kernel writes it (gfx_target_version 90002 = gfx902)
    apu = (MACHINES / "amd-apu-raven-fiji/root/sys/class/kfd/kfd/topology/nodes/0/properties").read_text()
    node0.write_text(apu + "gfx_target_version 90002\n")
    m = probe_machine(None, root=root, runner=Replay(), docker=False, nvml=False)
    amd = [g for g in m.gpus if g.vendor == "amd"]
    assert [(g.index, g.arch, g.integrated, g.serve) for g in amd] == [(0, "gfx902", True, False), (1, "gfx1100", False, True)]
    assert "an APU (integrated)" in amd[0].how
    assert "integrated, not served: AMD GPU (gfx902)" in m.how["gpus"]
    assert [g.arch for g in m.served_gpus] == ["gfx1100"]


def test_probed_machine_round_trips_through_a_machine_file(replay_machine, tmp_path):
    from envcheck.app.probe import write_machine

    m, _ = replay_machine("mixed-3090-7900xtx")
    path = write_machine(tmp_path / "node.toml", m, force=False)
    back = load_machine(path)
    assert back.to_dict() == m.to_dict()
    assert [(g.vendor, g.arch) for g in back.served_gpus] == [("nvidia", "sm_86")]  # one vendor per wheel (#10)
    assert [(g.vendor, g.arch) for g in back.unserved_gpus] == [("amd", "gfx1100")]


def test_text_report_of_a_probed_machine(replay_machine):
    from envcheck.cli.probe import render_text

    m, _ = replay_machine("mixed-3090-7900xtx")
    text = render_text(m)
    assert text.startswith("This machine: Linux ")
    assert "GPUs (2):" in text
    assert "  nvidia NVIDIA GeForce RTX 3090 (sm_86), 24576 MiB\n" in text
    assert "  amd    AMD Radeon RX 7900 XTX (gfx1100), 24560 MiB\n" in text
    assert "found by: KFD node 1: gfx_target_version 110000" in text
    assert "Unknown (and why):" not in text  # nothing unknown on this box
    wsl, _ = replay_machine("wsl2-radeon-7900xtx")
    assert "  amd_driver: the Windows Adrenalin driver's version is not visible from inside WSL" in render_text(wsl)


def test_plan_reads_what_probe_wrote(replay_machine, tmp_path, cli):
    from envcheck.app.probe import write_machine

    wsl, _ = replay_machine("wsl2-radeon-7900xtx")
    path = write_machine(tmp_path / "wsl.toml", wsl, force=False)
    # AMD's WSL wheels need the Windows driver, which WSL hides: the person adds it, and the Python
    res = cli(["plan", "--json", "--machine", str(path), "--python", "3.12", "--driver", "25.3.1"])
    assert res.code == 0, res.err
    plan = res.json()
    assert plan["chosen"]["variant"].startswith("rocm")
    assert plan["machine"]["gpus"][0]["arch"] == "gfx1100" and plan["machine"]["wsl"] is True
    mixed, _ = replay_machine("mixed-3090-7900xtx")
    path = write_machine(tmp_path / "mixed.toml", mixed, force=False)
    res = cli(["plan", "--json", "--machine", str(path)])
    # one build drives one vendor (#10): the RTX 3090 (listed first) gets a CUDA build, the 7900 XTX is noted unused
    assert res.code == 0 and res.json()["chosen"]["variant"].startswith("cu")
    assert any("AMD Radeon RX 7900 XTX" in a and "unused" in a for a in res.json()["assumptions"])
