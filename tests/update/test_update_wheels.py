"""Wheel file names → release, variant, Python, platform (envcheck.matrix.index.wheels)."""

from __future__ import annotations

import pytest

from envcheck.matrix.index.wheels import BadWheelName, parse_wheel, supports_python


@pytest.mark.parametrize("name, release, variant, pythons, platforms, tag", [
    ("torch-2.7.1+cu128-cp313-cp313t-manylinux_2_28_x86_64.whl", "2.7.1", "cu128", ("3.13t",),
     ("linux-x86_64",), "manylinux_2_28_x86_64"),
    ("torch-2.7.1+cu128-cp310-cp310-manylinux_2_28_aarch64.whl", "2.7.1", "cu128", ("3.10",),
     ("linux-aarch64",), "manylinux_2_28_aarch64"),
    ("torch-2.7.1+cpu.cxx11.abi-cp39-cp39-linux_x86_64.whl", "2.7.1", "cpu.cxx11.abi", ("3.9",),
     ("linux-x86_64",), "linux_x86_64"),
    ("torch-1.13.1+cu117.with.pypi.cudnn-cp310-cp310-linux_x86_64.whl", "1.13.1", "cu117.with.pypi.cudnn",
     ("3.10",), ("linux-x86_64",), "linux_x86_64"),
    ("torch-2.7.1+rocm6.2.4-cp312-cp312-manylinux_2_28_x86_64.whl", "2.7.1", "rocm6.2.4", ("3.12",),
     ("linux-x86_64",), "manylinux_2_28_x86_64"),
    ("torch-2.7.1-cp310-none-macosx_11_0_arm64.whl", "2.7.1", "", ("3.10",), ("macos-arm64",), "macosx_11_0_arm64"),
    ("torch-2.0.1-cp311-cp311-manylinux2014_aarch64.whl", "2.0.1", "", ("3.11",), ("linux-aarch64",),
     "manylinux2014_aarch64"),
    ("torch-2.7.1+xpu-cp39-cp39-win_amd64.whl", "2.7.1", "xpu", ("3.9",), ("windows-x86_64",), "win_amd64"),
    ("torch-2.9.0-cp312-cp312-win_arm64.whl", "2.9.0", "", ("3.12",), ("windows-arm64",), "win_arm64"),
    ("torchaudio-2.1.0-cp38-cp38-macosx_10_13_x86_64.whl", "2.1.0", "", ("3.8",), ("macos-x86_64",),
     "macosx_10_13_x86_64"),
    ("torchvision-0.17.0-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl", "0.17.0", "", ("3.11",),
     ("linux-x86_64",), "manylinux_2_17_x86_64.manylinux2014_x86_64"),
    ("tensorflow-2.0.0-cp37-cp37m-macosx_10_9_universal2.whl", "2.0.0", "", ("3.7",),
     ("macos-arm64", "macos-x86_64"), "macosx_10_9_universal2"),
    ("filelock-3.13.1-py3-none-any.whl", "3.13.1", "", ("any",), ("any",), "any"),
    ("cryptography-42.0.0-cp39-abi3-manylinux_2_28_x86_64.whl", "42.0.0", "", ("3.9+",), ("linux-x86_64",),
     "manylinux_2_28_x86_64"),
    ("torch-2.7.1+cpu-cp39-cp39-musllinux_1_2_x86_64.whl", "2.7.1", "cpu", ("3.9",), (), "musllinux_1_2_x86_64"),
])
def test_parse_wheel(name, release, variant, pythons, platforms, tag):
    w = parse_wheel(name)
    assert (w.release, w.variant, w.pythons, w.platforms, w.platform_tag) == (release, variant, pythons, platforms, tag)
    assert w.version == (f"{release}+{variant}" if variant else release)


def test_build_number_is_kept_apart_from_the_version():
    w = parse_wheel("torch-2.0.0-1-cp310-cp310-manylinux2014_aarch64.whl")
    assert (w.release, w.build, w.variant) == ("2.0.0", "1", "")


@pytest.mark.parametrize("name", [
    "torch-2.7.1+cu128-cp313-cp313t.whl",           # no platform tag
    "torch-latest+cu128-cp313-cp313-linux_x86_64.whl",  # not a version
    "torch-2.7.1-cp313-cp313-linux_x86_64.zip",     # not a wheel
])
def test_malformed_names_raise(name):
    with pytest.raises(BadWheelName):
        parse_wheel(name)


@pytest.mark.parametrize("name, python, ok", [
    ("torch-2.7.1+cu128-cp313-cp313t-manylinux_2_28_x86_64.whl", "3.13t", True),
    ("torch-2.7.1+cu128-cp313-cp313t-manylinux_2_28_x86_64.whl", "3.13", False),
    ("torch-2.7.1+cu128-cp313-cp313-manylinux_2_28_x86_64.whl", "3.13t", False),
    ("torch-2.7.1-cp310-none-macosx_11_0_arm64.whl", "3.10", True),
    ("cryptography-42.0.0-cp39-abi3-manylinux_2_28_x86_64.whl", "3.12", True),
    ("cryptography-42.0.0-cp39-abi3-manylinux_2_28_x86_64.whl", "3.8", False),
    ("cryptography-42.0.0-cp39-abi3-manylinux_2_28_x86_64.whl", "3.13t", False),
    ("filelock-3.13.1-py3-none-any.whl", "3.13t", True),
])
def test_supports_python(name, python, ok):
    assert supports_python(parse_wheel(name), python) is ok
