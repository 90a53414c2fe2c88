"""explain's driver answers (breaker3 F10).

* One answer: for `explain --gpu "RTX 3090" --driver 470.82.01 "…Error 804: forward compatibility was
  attempted on non supported HW"` the fix named no build ("use a torch build with a CUDA this driver
  supports"), while `plan` for the same flags answers 2.5.1+cu118. Every family whose fix is the
  driver's now reads the driver's CUDA from the message, else from the machine (reported, or the
  driver version's per matrices/cuda.toml), and names plan's build.
* Under WSL, "Found no NVIDIA driver on your system" got the bare-metal answer (install a driver,
  `--gpus all`). Under WSL there is no Linux driver: the Windows driver's libraries come through
  /usr/lib/wsl/lib; WSL 1, a Linux driver installed inside WSL, or a loader path without that folder
  are the causes (NVIDIA's WSL user guide; CompVis/stable-diffusion#161: WSL 1 → WSL 2 solved it).
"""

from __future__ import annotations

import pytest

E804 = ("UserWarning: CUDA initialization: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions "
        "before calling NumCudaDevices() that might have already set an error? Error 804: forward compatibility was "
        "attempted on non supported HW (Triggered internally at  /opt/conda/conda-bld/pytorch_1623448278899/work/"
        "c10/cuda/CUDAFunctions.cpp:115.)")  # DeepVAC/TorchPod#43
NO_DRIVER = ("RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and "
             "installed a driver from http://www.nvidia.com/Download/index.aspx")  # CompVis/stable-diffusion#161


def _plan_line(cli, *flags):
    chosen = cli(["plan", "--json", *flags]).json()["chosen"]
    return " ".join(f"{k}=={v}" for k, v in chosen["pins"].items()), chosen["index_url"]


@pytest.mark.parametrize("flags,text", [
    (["--gpu", "RTX 3090", "--driver", "470.82.01"], E804),   # the breaker's: plan answers 2.5.1+cu118
    (["--gpu", "RTX 3090", "--driver", "535.183.01"], E804),
    # (the report's text carries a Linux path, which explain reads as the OS: the short line for Windows)
    (["--gpu", "RTX 4090", "--driver", "525.60.13", "--os", "windows"], E804.split("? ")[1].split(" (")[0]),
])
def test_804_fix_names_plans_build(cli, flags, text):
    r = cli(["explain", "--no-probe", "--json", *flags, text])
    assert r.code == 0, r.err
    f = r.json()["findings"][0]
    assert f["rule"] == "cuda-forward-compat-804"
    pins, index = _plan_line(cli, *flags)
    assert pins in f["fix"] and index in f["fix"], (pins, f["fix"])


@pytest.mark.parametrize("flags", [["--wsl"], ["--gpu", "RTX 4090", "--wsl"], ["--gpu", "RTX 4090", "--wsl", "--driver", "572.16"]])
def test_no_driver_under_wsl_is_the_wsl_answer(cli, flags):
    r = cli(["explain", "--no-probe", "--json", "--os", "linux", *flags, NO_DRIVER])
    assert r.code == 0, r.err
    f = r.json()["findings"][0]
    assert f["rule"] == "no-nvidia-driver-wsl", f
    assert "/usr/lib/wsl/lib" in f["fix"] and "wsl -l -v" in f["fix"], f["fix"]
    assert "do not install a Linux NVIDIA driver" in f["fix"]


def test_no_driver_on_bare_metal_keeps_its_answer(cli):
    r = cli(["explain", "--no-probe", "--json", "--os", "linux", "--gpu", "RTX 4090", NO_DRIVER])
    f = r.json()["findings"][0]
    assert f["rule"] == "no-nvidia-driver" and "/usr/lib/wsl" not in f["fix"], f
