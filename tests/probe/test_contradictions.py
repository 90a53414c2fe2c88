"""breaker F17: a machine whose facts cannot all be true is bad input — a one-line error naming the key,
exit 2 — whether it comes from a machine file, from flags, or from both; never a plan for a machine
that cannot exist ("Windows x86_64 (WSL2)", "Linux x86_64 (Jetson)", an Apple M2 among Linux GPUs).

The facts the rules hold a machine to are the matrix's own, with their sources: the glibc each distro
ships (matrices/platforms.toml) and the driver each CUDA toolkit needs (matrices/cuda.toml: NVIDIA's
"CUDA Toolkit and Corresponding Driver Versions" table). Real probes must pass them: every recorded
machine (tests/fixtures/probe/machines, sources in SOURCES.md there) is checked below, and the
driver/CUDA pairs are nvidia-smi banners as users posted them.
"""

from __future__ import annotations

import pytest

from envcheck.machine.consistency import contradiction, contradiction_with_data

HEAD = 'schema = 1\n[machine]\nos = "linux"\narch = "x86_64"\n'
H100 = '[[machine.gpus]]\nvendor = "nvidia"\nname = "NVIDIA H100"\narch = "sm_90"\n'

#: (what the file adds, the key the error names, words of the message)
BAD_FILES = [
    ('wsl = true\n', None, None),  # (consistent: the control case, plans)
    ('tegra = true\n', "machine.tegra", "aarch64"),
    ('distro = "ubuntu24.04"\nglibc = "2.17"\n', "machine.glibc", "ships glibc 2.39"),
    ('distro = "centos7"\nglibc = "2.28"\n', "machine.glibc", "ships glibc 2.17"),
    ('nvidia_driver = "570.124.06"\ncuda_driver_max = "11.0"\n' + H100, "machine.cuda_driver_max", "runs CUDA 12.8"),
    ('nvidia_driver = "550.135"\ncuda_driver_max = "11.4"\n' + H100, "machine.cuda_driver_max", "runs CUDA 12.4"),
    (H100 + 'memory_mib = -5\n', "machine.gpus[0].memory_mib", "≥ 0"),
    (H100 + 'index = -1\n', "machine.gpus[0].index", "≥ 0"),
    ('wsl = true\nwsl_version = 3\n', "machine.wsl_version", "expected"),
    ('wsl = false\nwsl_version = 2\n', "machine.wsl_version", "wsl = false"),
    ('[[machine.gpus]]\nvendor = "apple"\nname = "Apple M2"\narch = "apple-m2"\n', "machine.gpus[0].vendor",
     "Apple-silicon GPU, only in Macs"),
    ('macos = "14.5"\n', "machine.macos", "describes macOS"),
    ('tegra = false\njetpack = "6.2"\n', "machine.jetpack", "only on a Jetson"),
    # breaker4 F6: a driver version in the CUDA field was read as CUDA 570 (a cu130 plan for a 570 driver)
    ('cuda_driver_max = "570.124.06"\n' + H100, "machine.cuda_driver_max", "belongs in nvidia_driver"),
    ('cuda_driver_max = "99.0"\n' + H100, "machine.cuda_driver_max", "no CUDA 99.0 exists"),
]


@pytest.mark.parametrize("extra,key,words", BAD_FILES, ids=[b[1] or "consistent" for b in BAD_FILES])
def test_machine_file_contradictions_are_exit_2_naming_the_key(cli, tmp_path, extra, key, words):
    f = tmp_path / "node.toml"
    f.write_text(HEAD + extra)
    r = cli(["plan", "--machine", str(f), "-q"])
    if key is None:
        assert r.code == 0, r.err
        return
    assert r.code == 2 and r.out == "", (extra, r)
    assert r.err.startswith(f"envcheck: error: {f}: {key}: ") and words in r.err, r.err
    assert r.err.count("\n") == 1 and "Traceback" not in r.err


@pytest.mark.parametrize("os_,field", [("windows", "wsl = true"), ("macos", "wsl = true"), ("windows", 'glibc = "2.35"'),
                                       ("windows", "tegra = true"), ("macos", 'distro = "ubuntu22.04"')])
def test_facts_of_another_os_are_refused(cli, tmp_path, os_, field):
    f = tmp_path / "node.toml"
    f.write_text(f'schema = 1\n[machine]\nos = "{os_}"\narch = "aarch64"\n{field}\n')
    r = cli(["plan", "--machine", str(f), "-q"])
    key = field.split(" ")[0]
    assert r.code == 2 and f"machine.{key}:" in r.err and os_ in r.err, r.err


@pytest.mark.parametrize("argv,words", [
    (["--gpu", "M2", "RTX 4090"], "Apple-silicon GPU, only in Macs"),   # breaker: Apple M2 listed among Linux GPUs
    (["--gpu", "jetson orin", "--os", "windows"], "Jetson"),
    (["--gpu", "M2", "--os", "linux"], "Apple-silicon GPU"),
    (["--os", "windows", "--wsl"], "WSL2"),
    (["--gpu", "RTX 4090", "--driver", "99.0"], "no CUDA 99.0 exists"),  # breaker4 F6: planned cu130
    # breaker4 F5: Device Manager's number missing its last part passed every Adrenalin floor
    (["--gpu", "7900xtx", "--wsl", "--driver", "32.0.21013"], "no Adrenalin release 32.0.21013"),
])
def test_flags_that_describe_no_machine_are_exit_2(cli, argv, words):
    r = cli(["plan", *argv, "-q"])
    assert r.code == 2 and words in r.err and r.out == "", r


@pytest.mark.parametrize("gpu", ["GH200", "GB200", "GB300", "GB10"])
@pytest.mark.parametrize("where", [["--wsl"], ["--os", "windows"]])
def test_a_grace_system_is_never_windows_nor_a_wsl_guest(cli, gpu, where):
    """breaker3 F10: `--gpu GH200 --wsl` planned "Linux aarch64 (WSL2)". A Grace-Hopper/Blackwell
    system's NVIDIA driver is the arm64 (SBSA) one, Linux-only (NVIDIA's driver installation guide
    lists Windows for x86_64 only): the GPU rows say so (host_os), and the machine is refused."""
    r = cli(["plan", "--gpu", gpu, *where, "-q"])
    assert r.code == 2 and "comes only in systems that run linux" in r.err and r.out == "", r
    assert cli(["plan", "--gpu", gpu, "-q"]).code == 0  # the same GPU on Linux plans


def test_every_linux_only_gpu_is_refused_under_wsl_and_windows(cli, matrix):
    """The class, from the data: every GPU row with host_os, under --wsl and in a machine file."""
    rows = [g for g in matrix.gpus if g.host_os]
    assert len(rows) >= 10
    for g in rows:
        assert g.host_os == ("linux",), g.name
        r = cli(["plan", "--gpu", g.name, "--wsl", "-q"])
        assert r.code == 2 and "wsl" in r.err, (g.name, r.err)
    assert not [g.name for g in matrix.gpus if g.host_os and "windows" in g.host_os]


def test_a_machine_file_with_a_grace_gpu_under_wsl_is_refused(cli, tmp_path):
    f = tmp_path / "node.toml"
    f.write_text('schema = 1\n[machine]\nos = "linux"\narch = "aarch64"\nwsl = true\n'
                 '[[machine.gpus]]\nvendor = "nvidia"\nname = "NVIDIA GH200"\narch = "sm_90"\n')
    r = cli(["plan", "--machine", str(f), "-q"])
    assert r.code == 2 and "GH200" in r.err and "WSL2 guest" in r.err, r.err
    f.write_text(f.read_text().replace("wsl = true\n", ""))
    assert cli(["plan", "--machine", str(f), "-q"]).code == 0


def test_flags_on_a_machine_file_are_held_to_it(cli, tmp_path):
    """A flag that contradicts the file it is added to (a Jetson file, --arch x86_64) is refused too."""
    f = tmp_path / "jetson.toml"
    f.write_text('schema = 1\n[machine]\nos = "linux"\narch = "aarch64"\ntegra = true\n')
    assert cli(["plan", "--machine", str(f), "-q"]).code == 0
    r = cli(["plan", "--machine", str(f), "--arch", "x86_64", "-q"])
    assert r.code == 2 and "tegra" in r.err and "aarch64" in r.err, r.err


def test_saved_facts_and_locks_read_machines_with_the_same_rules(tmp_path):
    """The rules are the [machine] table's: facts files and locks (which embed a machine) get them too."""
    from envcheck.errors import DataFileError
    from envcheck.verify.facts import facts_from_dict

    with pytest.raises(DataFileError, match=r"machine\.wsl: WSL2 runs Linux"):
        facts_from_dict({"schema": 2, "runs": {}, "machine": {"os": "windows", "wsl": True}}, "f.json")


#: nvidia-smi banners users posted (driver, "CUDA Version"): real pairs, accepted — a driver reports the
#: newest CUDA it runs, or more (a beta driver ahead of the toolkit table, CUDA forward compatibility).
BANNERS = [
    ("450.51.05", "11.0", "https://github.com/tensorflow/docs/pull/1616"),
    ("450.57", "11.0", "https://github.com/rossumai/nvgpu/pull/15"),
    ("450.80.02", "11.0", "https://github.com/NVIDIA/nvidia-docker/issues/1439"),
    ("550.40.07", "12.4", "https://github.com/Frogging-Family/nvidia-all/pull/212"),  # beta, before 12.4's 550.54.14
    ("550.135", "12.4", "https://github.com/slackr31337/wyoming-piper-gpu/pull/20"),
    ("535.183.06", "12.9", "https://github.com/flagos-ai/FlagGems/pull/4734"),  # forward compatibility
]


@pytest.mark.parametrize("driver,cuda,source", BANNERS, ids=[b[0] for b in BANNERS])
def test_real_driver_and_cuda_pairs_are_consistent(matrix, driver, cuda, source):
    m = {"os": "linux", "arch": "x86_64", "nvidia_driver": driver, "cuda_driver_max": cuda}
    assert contradiction(m) is None and contradiction_with_data(m, matrix) is None, source


@pytest.mark.parametrize("name", ["amd-apu-raven-fiji", "amd-smi-mi350x", "mixed-3090-7900xtx", "nvidia-2x-a5000",
                                  "nvidia-open-proc-only", "wsl2-nvidia-quadro", "wsl2-radeon-7900xtx"])
def test_every_recorded_machine_is_consistent(replay_machine, matrix, name):
    """The rules never refuse a real machine: each recorded probe passes them (and its saved file reads back)."""
    from envcheck.machine.io import machine_document, machine_from_dict

    m, _ = replay_machine(name)
    fields = m.to_dict()
    assert contradiction(fields) is None and contradiction_with_data(fields, matrix) is None, fields
    assert machine_from_dict(machine_document(m)["machine"]) == m


@pytest.mark.parametrize("line", ["CUDA Version: 12.4", "CUDA Version 12.4", "cuda version: 12.4", "12.4"])
def test_driver_takes_nvidia_smis_cuda_version_as_printed(cli, line):
    """breaker4 F6: `--driver "CUDA Version: 12.8"` (nvidia-smi's header, as pasted) was refused while the
    bare 12.8 was taken: each is the driver's CUDA, and the plan is the one for a CUDA 12.4 driver."""
    r = cli(["plan", "--gpu", "RTX 4090", "--driver", line, "--json"])
    assert r.code == 0, r.err
    import json

    doc = json.loads(r.out)
    assert doc["machine"]["cuda_driver_max"] == "12.4" and doc["machine"].get("nvidia_driver") is None
    # a CUDA 12.4 driver runs CUDA 12.x builds (minor-version compatibility), never a cu13x one
    assert doc["chosen"]["variant"].startswith("cu12"), doc["chosen"]
