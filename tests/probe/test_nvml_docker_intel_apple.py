"""NVML (the real ctypes reader where it fails here; a stand-in with NVML's C API carrying a real
machine's values where it cannot), Docker (recorded `docker info` JSON), Intel GPUs (sysfs tree) and Apple Silicon (sysctl)."""

from __future__ import annotations

import os

from envcheck.probe import probe_machine
from envcheck.probe.apple import probe_apple
from envcheck.probe.context import ProbeContext
from envcheck.probe.docker import INFO_ARGV, probe_docker
from envcheck.runner import Replay
from tests.probe.replay import FIXTURES, machine_replay, recorded


# -- NVML ---------------------------------------------------------------------------------------
def test_real_nvml_without_a_driver_falls_back_to_nvidia_smi(probe_matrix):
    """The real NVML reader (ctypes) on this machine, which has no libnvidia-ml: its error is kept in how."""
    root, replay = machine_replay("nvidia-2x-a5000")
    m = probe_machine(probe_matrix, root=root, runner=replay, docker=False, nvml=True)
    assert len(m.gpus) == 2 and m.nvidia_driver == "590.44.01"
    assert "(NVML: libnvidia-ml.so.1 not found (no NVIDIA driver visible))" in m.how["nvidia_driver"]


class DualA5000Nvml:
    """NVML's C API (as :func:`envcheck.verify.collector.read_nvml` calls it through ctypes),
    answering with the values of the dual RTX A5000 machine recorded in
    influxdata/telegraf:plugins/inputs/nvidia_smi/testdata/dual_a5000-v13.xml@58ff61d01b
    (driver 590.44.01, CUDA 13.1, 24564 MiB, MIG not supported). This machine has no GPU for NVML.
    Out-parameters arrive as ``ctypes.byref`` objects (``._obj`` is the variable) or buffers."""

    NOT_SUPPORTED, GPU_IS_LOST = 3, 15
    uuids = ["GPU-12345678-aaaa-bbbb-cccc-0123456789ab", "GPU-12345678-aaaa-bbbb-cccc-0123456789cd"]

    def __init__(self):
        self.shutdown = False

    def nvmlInit_v2(self):
        return 0

    def nvmlShutdown(self):
        self.shutdown = True
        return 0

    def nvmlErrorString(self, code):
        return {self.NOT_SUPPORTED: b"Not Supported", self.GPU_IS_LOST: b"GPU is lost"}.get(code, b"Unknown Error")

    def nvmlSystemGetDriverVersion(self, buf, size):
        buf.value = b"590.44.01"
        return 0

    def nvmlSystemGetCudaDriverVersion_v2(self, out):
        out._obj.value = 13010
        return 0

    def nvmlDeviceGetCount_v2(self, out):
        out._obj.value = 2
        return 0

    def nvmlDeviceGetHandleByIndex_v2(self, i, out):
        out._obj.value = i + 1  # a handle is an opaque non-null pointer
        return 0

    def nvmlDeviceGetName(self, handle, buf, size):
        buf.value = b"NVIDIA RTX A5000"
        return 0

    def nvmlDeviceGetUUID(self, handle, buf, size):
        buf.value = self.uuids[handle.value - 1].encode()
        return 0

    def nvmlDeviceGetCudaComputeCapability(self, handle, major, minor):
        major._obj.value, minor._obj.value = 8, 6
        return 0

    def nvmlDeviceGetMemoryInfo(self, handle, out):
        out._obj.total = 24564 * 1024 * 1024
        return 0

    def nvmlDeviceGetMigMode(self, handle, current, pending):
        return self.NOT_SUPPORTED


def test_nvml_answers_first(probe_matrix, tmp_path):
    nv = DualA5000Nvml()
    replay = Replay()
    m = probe_machine(probe_matrix, root=tmp_path, runner=replay, docker=False, nvml=nv)
    assert [(g.name, g.arch, g.memory_mib, g.index, g.uuid, g.mig) for g in m.gpus] == [
        ("NVIDIA RTX A5000", "sm_86", 24564, 0, nv.uuids[0], None),
        ("NVIDIA RTX A5000", "sm_86", 24564, 1, nv.uuids[1], None)]
    assert m.nvidia_driver == "590.44.01" and m.cuda_driver_max == "13.1"
    assert m.how["cuda_driver_max"] == "NVML (libnvidia-ml) nvmlSystemGetCudaDriverVersion_v2"
    assert not any(call[0] == "nvidia-smi" for call in replay.calls)  # no need to run the tool
    assert nv.shutdown


def test_one_nvml_reader_for_probe_and_verify():
    """probe and verify's collector read NVML with the same function (the collector's, stdlib only)."""
    from envcheck.verify.collector import read_nvml

    nv = DualA5000Nvml()
    assert read_nvml(nv) == {"version": "590.44.01", "cuda_max": "13.1", "gpus": [
        {"index": i, "name": "NVIDIA RTX A5000", "capability": [8, 6], "uuid": nv.uuids[i], "memory_mib": 24564}
        for i in (0, 1)]}
    assert nv.shutdown
    import envcheck.probe.nvidia as probe_nvidia

    from pathlib import Path

    assert "pynvml" not in Path(probe_nvidia.__file__).read_text(encoding="utf-8")


def test_nvml_failing_mid_way_falls_back(probe_matrix):
    class Broken(DualA5000Nvml):
        def nvmlDeviceGetCount_v2(self, out):
            return self.GPU_IS_LOST

    root, replay = machine_replay("nvidia-2x-a5000")
    m = probe_machine(probe_matrix, root=root, runner=replay, docker=False, nvml=Broken())
    assert len(m.gpus) == 2 and m.how["nvidia_gpus"].startswith("nvidia-smi --query-gpu")
    assert "NVML failed while reading devices: nvmlDeviceGetCount failed: GPU is lost" in m.how["nvidia_gpus"]


# -- Docker (recorded on this machine: tests/fixtures/probe/docker/SOURCES.md) ----------------------
def _docker(name, returncode=0, stderr=""):
    stdout = (FIXTURES / "docker" / name).read_text()
    ctx = ProbeContext(runner=Replay({tuple(INFO_ARGV): recorded(INFO_ARGV, stdout, returncode, stderr)}))
    return probe_docker(ctx).fields["docker"]


def test_docker_with_the_nvidia_runtime():
    assert _docker("info-nvidia.json") == {
        "reachable": True, "version": "20.10.24+dfsg1",
        "runtimes": ["io.containerd.runc.v2", "io.containerd.runtime.v1.linux", "nvidia", "runc"],
        "default_runtime": "runc", "nvidia_runtime": True}


def test_docker_without_the_nvidia_runtime():
    d = _docker("info-plain.json")
    assert d["reachable"] is True and d["nvidia_runtime"] is False and "nvidia" not in d["runtimes"]


def test_docker_engine_down():
    err = (FIXTURES / "docker" / "info-down.stderr").read_text()
    d = _docker("info-down.json", returncode=1, stderr=err)
    assert d == {"reachable": False, "error": "no Docker engine reachable: Cannot connect to the Docker daemon at "
                                              "unix:///var/run/docker.sock. Is the docker daemon running?"}


def test_docker_cli_missing():
    d = probe_docker(ProbeContext(runner=Replay())).fields["docker"]
    assert d == {"reachable": False, "error": "the docker CLI is not installed (docker not found)"}


# -- Intel (sysfs PCI attributes, Documentation/ABI/testing/sysfs-bus-pci) ----------------------------
def _drm_card(root, card, slot, device, driver):
    pci = root / "sys/devices/pci0000:00" / slot
    pci.mkdir(parents=True)
    (pci / "vendor").write_text("0x8086\n")
    (pci / "device").write_text(device + "\n")
    drv = root / "sys/bus/pci/drivers" / driver
    drv.mkdir(parents=True, exist_ok=True)
    os.symlink(drv, pci / "driver")
    (root / "sys/class/drm" / card).mkdir(parents=True)
    os.symlink(pci, root / "sys/class/drm" / card / "device")


def test_intel_igpu_listed_but_not_served_and_arc_served(tmp_path):
    # 0x46a6 = Alder Lake-P Iris Xe (integrated, 00:02.0); 0x56a0 = Arc A770 (discrete) — ids from pci.ids
    _drm_card(tmp_path, "card0", "0000:00:02.0", "0x46a6", "i915")
    _drm_card(tmp_path, "card1", "0000:03:00.0", "0x56a0", "i915")
    (tmp_path / "sys/class/drm/card0-eDP-1").mkdir()  # connectors are not GPUs
    m = probe_machine(None, root=tmp_path, runner=Replay(), docker=False, nvml=False)
    assert [(g.vendor, g.name, g.integrated, g.serve, g.index) for g in m.gpus] == [
        ("intel", "Intel GPU [8086:46a6]", True, False, 0),
        ("intel", "Intel GPU [8086:56a0]", False, True, 1)]
    assert "PCI 0000:00:02.0, driver i915); on PCI bus 00 → integrated" in m.gpus[0].how
    assert [g.name for g in m.served_gpus] == ["Intel GPU [8086:56a0]"]


# -- Apple Silicon ------------------------------------------------------------------------------
def test_apple_silicon_from_sysctl(probe_matrix):
    replay = Replay({("sysctl", "-n", "machdep.cpu.brand_string"): "Apple M2 Pro\n"})
    f = probe_apple(ProbeContext(runner=replay, matrix=probe_matrix))
    assert [(g.vendor, g.name, g.arch, g.integrated, g.serve) for g in f.gpus] == [
        ("apple", "Apple M2 Pro", "apple-m2", True, True)]


def test_intel_mac_brand_string_is_not_apple_silicon(probe_matrix):
    replay = Replay({("sysctl", "-n", "machdep.cpu.brand_string"): "Intel(R) Core(TM) i9-9880H CPU @ 2.30GHz\n"})
    f = probe_apple(ProbeContext(runner=replay, matrix=probe_matrix))
    assert f.gpus == [] and "not an Apple chip" in f.unknown["apple_gpus"]


# -- Jetson -------------------------------------------------------------------------------------
def test_jetson_from_the_device_tree(tmp_path, probe_matrix):
    dt = tmp_path / "proc/device-tree"
    dt.mkdir(parents=True)
    # the compatible list of a Jetson AGX Orin 64GB, NVIDIA/jetson-gpio#125 (NUL-separated on disk)
    (dt / "compatible").write_bytes(b"nvidia,p3737-0000+p3701-0005\x00nvidia,p3701-0005\x00nvidia,tegra234\x00"
                                    b"nvidia,tegra23x\x00")
    # the board as that issue names it
    (dt / "model").write_bytes(b"Jetson AGX Orin 64GB Developer Kit\x00")
    m = probe_machine(probe_matrix, root=tmp_path, runner=Replay(), docker=False, nvml=False)
    assert m.tegra is True and m.how["tegra"] == "/proc/device-tree/compatible names nvidia,tegra234"
    assert [(g.name, g.arch, g.integrated, g.serve) for g in m.gpus] == [("NVIDIA Jetson AGX Orin", "sm_87", True, True)]
    assert "does not derive the JetPack release" in m.unknown["jetpack"]


def test_not_a_jetson(tmp_path, probe_matrix):
    m = probe_machine(probe_matrix, root=tmp_path, runner=Replay(), docker=False, nvml=False)
    assert m.tegra is False and "tegra" not in m.how and "jetpack" not in m.unknown


def test_docker_facts_survive_the_machine_file(tmp_path, replay_machine):
    from envcheck.app.probe import write_machine
    from envcheck.machine.io import load_machine

    stdout = (FIXTURES / "docker" / "info-nvidia.json").read_text()
    m, _ = replay_machine("nvidia-2x-a5000", {tuple(INFO_ARGV): stdout}, docker=True)
    assert m.docker["nvidia_runtime"] is True
    back = load_machine(write_machine(tmp_path / "m.toml", m, force=False))
    assert back.docker == m.docker and back.to_dict() == m.to_dict()
