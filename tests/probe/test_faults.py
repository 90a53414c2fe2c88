"""What a machine can do wrong — unreadable files, garbage output, non-zero exits, hanging tools —
becomes a stated unknown in the Machine, and ``envcheck probe`` still exits 0."""

from __future__ import annotations

import os
import shutil
import stat
import sys

import pytest

from envcheck.probe import probe_machine
from envcheck.runner import Replay, run
from tests.probe.replay import MACHINES, recorded

QUERY = ("nvidia-smi", "--query-gpu=index,name,uuid,compute_cap,memory.total,driver_version,mig.mode.current",
         "--format=csv,noheader,nounits")


def copy_root(name, tmp_path):
    root = tmp_path / "root"
    shutil.copytree(MACHINES / name / "root", root)
    return root


# -- unreadable files ---------------------------------------------------------------------------
def test_files_that_cannot_be_read_become_unknowns(tmp_path, probe_matrix):
    root = copy_root("mixed-3090-7900xtx", tmp_path)
    for rel in ("proc/version", "etc/os-release", "sys/class/kfd/kfd/topology/nodes/1/properties",
                "opt/rocm/.info/version"):
        (root / rel).unlink()
        (root / rel).mkdir()  # a directory where a file should be: open() fails with EISDIR
    m = probe_machine(probe_matrix, root=root, runner=Replay(), docker=False, nvml=False)
    assert m.unknown["wsl"] == "/proc/version: is a directory; /proc/sys/kernel/osrelease: absent"
    assert m.unknown["distro"].startswith("no os-release file (/etc/os-release: is a directory; "
                                          "/usr/lib/os-release: absent)")
    assert "/sys/class/kfd/kfd/topology/nodes/1/properties: is a directory" in m.unknown["amd_gpus"]
    assert m.unknown["rocm"] == "ROCm not found (/opt/rocm/.info/version: is a directory)"
    assert m.gpus == []


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root reads files whatever their mode")
def test_permission_denied_is_stated(tmp_path, probe_matrix):
    root = copy_root("mixed-3090-7900xtx", tmp_path)
    props = root / "sys/class/kfd/kfd/topology/nodes/1/properties"
    props.chmod(0)
    try:
        m = probe_machine(probe_matrix, root=root, runner=Replay(), docker=False, nvml=False)
    finally:
        props.chmod(stat.S_IRUSR | stat.S_IWUSR)
    assert "nodes/1/properties: permission denied" in m.unknown["amd_gpus"]


# -- garbage output -----------------------------------------------------------------------------
def test_nvidia_smi_printing_another_shape(replay_machine):
    # a real csv of another query (triton-inference-server/server#8070) where ours was expected
    other = ("compute_cap, compute_mode, driver_version, name, index\n"
             "7.0, Default, 570.86.15, NVIDIA TITAN V, 0\n")
    m, _ = replay_machine("nvidia-2x-a5000", {QUERY: other})
    assert m.gpus == [] and m.nvidia_driver is None
    assert "nvidia-smi --query-gpu printed nothing parsable (first line: 'compute_cap, compute_mode" \
        in m.unknown["nvidia_driver"]


def test_cuda_version_err_is_stated(replay_machine):
    banner = (MACHINES / "wsl2-nvidia-quadro" / "nvidia-smi-cuda-err.txt").read_text()
    m, _ = replay_machine("wsl2-nvidia-quadro", {("/usr/lib/wsl/lib/nvidia-smi",): banner})
    assert m.nvidia_driver == "527.27" and len(m.gpus) == 1
    assert m.cuda_driver_max is None
    assert m.unknown["cuda_driver_max"].startswith("/usr/lib/wsl/lib/nvidia-smi: it printed 'CUDA Version: ERR!'")


def test_rocminfo_printing_binary_junk(replay_machine):
    m, _ = replay_machine("wsl2-radeon-7900xtx", {("rocminfo",): "\x7fELF\x02\x01\x01\x00\ufffd\ufffd"})
    assert m.gpus == []
    assert "rocminfo printed no agents" in m.unknown["amd_gpus"]


def test_kfd_properties_full_of_garbage(tmp_path, probe_matrix):
    root = copy_root("mixed-3090-7900xtx", tmp_path)
    (root / "sys/class/kfd/kfd/topology/nodes/1/properties").write_bytes(b"\x00\xff garbage\nsimd_count lots\n")
    m = probe_machine(probe_matrix, root=root, runner=Replay(), docker=False, nvml=False)
    assert "nodes/1/properties: no 'simd_count' line" in m.unknown["amd_gpus"]


def test_old_driver_without_compute_cap_falls_back_to_the_name(replay_machine):
    # the message of drivers before compute_cap existed (v470.182.03, huggingface/candle#733); status 2 = bad argument
    refused = recorded(QUERY, 'Field "compute_cap" is not a valid field to query.\n\n', returncode=2)
    shorter = ("nvidia-smi", "--query-gpu=index,name,uuid,memory.total,driver_version,mig.mode.current",
               "--format=csv,noheader,nounits")
    m, replay = replay_machine("nvidia-2x-a5000", {
        QUERY: refused,
        shorter: "0, NVIDIA RTX A5000, GPU-12345678-aaaa-bbbb-cccc-0123456789ab, 24564, 590.44.01, [N/A]\n"})
    assert shorter in replay.calls
    assert [(g.name, g.arch) for g in m.gpus] == [("NVIDIA RTX A5000", "sm_86")]
    assert "arch from the name (NVIDIA RTX A5000, matrices/gpus-nvidia.toml)" in m.gpus[0].how
    assert "does not know the compute_cap field" in m.how["nvidia_gpus"]


# -- non-zero exit ------------------------------------------------------------------------------
def test_rocminfo_exiting_non_zero(replay_machine):
    # ROCm/legacy-rocm-build#3413 (WSL, unsupported GPU)
    failed = recorded(("rocminfo",), "ROCR: unsupported GPU\nhsa api call failure at: "
                      "./sources/wsl/tools/rocminfo/rocminfo.cc:1087\nCall returned "
                      "HSA_STATUS_ERROR_OUT_OF_RESOURCES: The runtime failed to allocate the necessary resources.\n",
                      returncode=1)
    m, _ = replay_machine("wsl2-radeon-7900xtx", {("rocminfo",): failed})
    assert m.gpus == []
    assert "rocminfo: rocminfo exited with status 1: ROCR: unsupported GPU" in m.unknown["amd_gpus"]


def test_docker_that_prints_no_json(replay_machine):
    m, _ = replay_machine("nvidia-2x-a5000", {("docker", "info", "--format", "{{json .}}"):
                                              recorded(("docker",), "template: :1: function \"json\" not defined\n",
                                                       returncode=1)}, docker=True)
    assert m.docker["reachable"] is False
    assert m.docker["error"].startswith("docker info printed no JSON ('template: :1: function \"json\" not defined'")


def test_a_step_that_crashes_is_reported_not_raised(tmp_path, probe_matrix):
    def broken_runner(argv, timeout=5.0, **_):
        raise RuntimeError("runner bug")

    m = probe_machine(probe_matrix, root=copy_root("nvidia-2x-a5000", tmp_path), runner=broken_runner,
                      docker=False, nvml=False)
    assert m.unknown["probe_nvidia"] == "the nvidia step failed: RuntimeError: runner bug"
    assert m.distro == "ubuntu22.04"  # the other steps still ran


# -- hanging tools (real processes, killed by the runner) ---------------------------------------
def tools_on_path(tmp_path, monkeypatch, command: str):
    """nvidia-smi, rocminfo, amd-smi and docker on PATH, each a shell script that execs ``command``."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("nvidia-smi", "rocminfo", "amd-smi", "docker"):
        script = bin_dir / tool
        script.write_text(f"#!/bin/sh\nexec {command}\n")
        script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    return bin_dir


@pytest.fixture
def hanging_tools(tmp_path, monkeypatch):
    """nvidia-smi, rocminfo, amd-smi and docker on PATH that never answer (each sleeps 60 s)."""
    return tools_on_path(tmp_path, monkeypatch, "sleep 60")


@pytest.mark.subprocess
@pytest.mark.skipif(sys.platform == "win32", reason="shell scripts as stand-ins for hung tools")
def test_hanging_tools_time_out(hanging_tools, tmp_path, probe_matrix):
    root = copy_root("nvidia-2x-a5000", tmp_path)
    m = probe_machine(probe_matrix, root=root, runner=run, timeout=0.5, docker=True, nvml=False)
    assert "nvidia-smi --query-gpu: nvidia-smi timed out after 0.5 s" in m.unknown["nvidia_driver"]
    assert "rocminfo: rocminfo timed out after 0.5 s" in m.unknown["amd_gpus"]
    assert "amd-smi: amd-smi timed out after 0.5 s" in m.unknown["amd_gpus"]
    assert m.docker == {"reachable": False, "error": "no Docker engine reachable: docker timed out after 0.5 s"}


@pytest.mark.subprocess
@pytest.mark.skipif(sys.platform == "win32", reason="shell scripts as stand-ins for hung tools")
def test_probe_cli_exits_0_when_tools_hang(hanging_tools, cli):
    res = cli(["probe", "--json", "--timeout", "0.5"])
    assert res.code == 0, res.err
    m = res.json()
    assert "nvidia-smi timed out after 0.5 s" in m["unknown"]["nvidia_driver"]
    assert m["docker"]["error"] == "no Docker engine reachable: docker timed out after 0.5 s"


# -- tools that print without end (real processes, stopped by the runner's output cap) ----------
@pytest.fixture
def flooding_tools(tmp_path, monkeypatch):
    """nvidia-smi, rocminfo, amd-smi and docker on PATH that print the same line forever (``yes``)."""
    return tools_on_path(tmp_path, monkeypatch, "yes 'GPU 0: NVIDIA GeForce RTX 4090 (UUID: GPU-1234)'")


@pytest.mark.subprocess
@pytest.mark.skipif(sys.platform == "win32", reason="shell scripts as stand-ins for flooding tools")
def test_tools_that_print_without_end_are_stopped(flooding_tools, tmp_path, probe_matrix):
    import resource

    root = copy_root("nvidia-2x-a5000", tmp_path)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    m = probe_machine(probe_matrix, root=root, runner=run, timeout=60, docker=True, nvml=False)
    assert "nvidia-smi printed more than 8 MiB on stdout; it was killed" in m.unknown["nvidia_driver"]
    assert "rocminfo printed more than 8 MiB on stdout; it was killed" in m.unknown["amd_gpus"]
    assert "docker printed more than 8 MiB on stdout" in m.docker["error"]
    grown_mib = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024  # ru_maxrss is KiB on Linux
    assert grown_mib < 500, f"probe grew by {grown_mib:.0f} MiB"


@pytest.mark.subprocess
def test_run_caps_output_and_says_so():
    res = run([sys.executable, "-c", "import sys\nwhile True: sys.stdout.write('x' * 65536)"], timeout=60,
              max_output=1024 * 1024)
    assert res.error == f"{os.path.basename(sys.executable)} printed more than 1 MiB on stdout; it was killed"
    assert len(res.stdout) == 1024 * 1024 and res.returncode is None


@pytest.mark.subprocess
def test_run_still_times_out_a_slow_printer():
    res = run([sys.executable, "-c", "import time\nwhile True: print('x', flush=True); time.sleep(0.01)"], timeout=1)
    assert res.error and res.error.endswith("timed out after 1 s")
    assert res.stdout.startswith("x\n")


def test_a_generic_radeon_marketing_name_is_named_from_the_arch(replay_machine):
    """Ryzen APUs report "AMD Radeon(TM) Graphics" (the "(TM)" spelling too): no model in it, so the
    GPU is named from its gfx target, as for a blank name (the check knew only "AMD Radeon Graphics")."""
    text = (MACHINES / "wsl2-radeon-7900xtx" / "rocminfo.txt").read_text()
    generic = text.replace("AMD Radeon RX 7900 XTX             ", "AMD Radeon(TM) Graphics")
    m, _ = replay_machine("wsl2-radeon-7900xtx", {("rocminfo",): generic})
    assert [g.arch for g in m.gpus] == ["gfx1100"]
    assert m.gpus[0].name != "AMD Radeon(TM) Graphics", m.gpus[0]
