"""Wheel variants (PREVIEW): the provider properties and override variables for a named machine
(`plan --format variants`), and the variant label verify reads from an installed torch."""

from __future__ import annotations

import base64
import hashlib
import json
import subprocess
import sys
import zipfile

import pytest


def env_lines(text):
    return dict(ln.split("=", 1) for ln in text.splitlines() if ln and not ln.startswith("#"))


def test_nvidia_named_machine(cli):
    r = cli(["plan", "--gpu", "RTX 4090", "--gpu", "RTX 3090", "--driver", "580.65.06", "--format", "variants"])
    assert r.code == 0, r.err
    assert "PREVIEW" in r.out and "PEP 825" in r.out
    env = env_lines(r.out)
    # the highest architecture only (the provider's rule), as major.minor
    assert env["NV_VARIANT_PROVIDER_FORCE_SM_ARCH"] == "8.9"
    assert env["NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION"] == "13.0"  # R580 runs CUDA 13.0 (cuda.toml)
    props = [ln.strip("# ").strip() for ln in r.out.splitlines() if ":: sm_arch ::" in ln]
    assert props[0] == "nvidia :: sm_arch :: 89_real" and props[-1] == "nvidia :: sm_arch :: 80_virtual"
    assert len(props) == 11 and "sm_86" in r.out  # the lower GPU is named in a note


def test_amd_named_machine_and_cpu(cli):
    r = cli(["plan", "--gpu", "7900xtx", "--format", "variants"])
    env = env_lines(r.out)
    assert env["AMD_VARIANT_PROVIDER_GFX_ARCH"] == "gfx1100"
    assert env["AMD_VARIANT_PROVIDER_ROCM_VERSION"]
    assert "amd :: gfx_arch :: gfx1100" in r.out
    cpu = cli(["plan", "--backend", "cpu", "--os", "linux", "--format", "variants"])
    assert env_lines(cpu.out) == {} and "nothing to override" in cpu.out


def test_an_old_driver_without_cuda_on_record(cli):
    r = cli(["plan", "--gpu", "H100", "--format", "variants", "--backend", "cpu"])
    env = env_lines(r.out)
    assert env == {"NV_VARIANT_PROVIDER_FORCE_SM_ARCH": "9.0"} and "give --driver" in r.out


def wheel(tmp_path, version, variant=None):
    """A minimal real wheel named torch (metadata only) — pip installs it like any other."""
    name = f"torch-{version}-py3-none-any.whl"
    di = f"torch-{version}.dist-info"
    files = {f"{di}/METADATA": f"Metadata-Version: 2.1\nName: torch\nVersion: {version}\n",
             f"{di}/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
             "torch_marker/__init__.py": ""}
    if variant:
        files[f"{di}/variant.json"] = json.dumps(variant)
    record = []
    for path, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(text.encode())}")
    record.append(f"{di}/RECORD,,")
    files[f"{di}/RECORD"] = "\n".join(record) + "\n"
    path = tmp_path / name
    with zipfile.ZipFile(path, "w") as z:
        for p, t in files.items():
            z.writestr(p, t)
    return path


@pytest.fixture
def venv(tmp_path):
    d = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(d)], check=True)
    return d / "bin" / "python"


def pip_install(py, whl):
    r = subprocess.run([str(py), "-m", "pip", "install", "--no-index", "--no-deps", "-q", str(whl)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr


def test_installed_variant_label_and_properties(tmp_path, venv):
    from envcheck.variants import installed_variant

    assert installed_variant(str(venv))["installed"] is False
    doc = {"variants": {"cu129_sm90": {"nvidia": {"cuda_version_lower_bound": ["12.9"], "sm_arch": ["90_real"]}}}}
    pip_install(venv, wheel(tmp_path, "2.13.0", doc))
    v = installed_variant(str(venv))
    assert v["label"] == "cu129_sm90" and v["preview"] is True
    assert v["properties"] == ["nvidia :: cuda_version_lower_bound :: 12.9", "nvidia :: sm_arch :: 90_real"]


def test_a_plain_wheel_has_no_label(tmp_path, venv):
    from envcheck.variants import installed_variant

    pip_install(venv, wheel(tmp_path, "2.13.0+cpu"))
    v = installed_variant(str(venv))
    assert v["label"] is None and v["build"] == "cpu" and v["version"] == "2.13.0+cpu"


def test_verify_reports_the_variant(cli, tmp_path, venv):
    pip_install(venv, wheel(tmp_path, "2.13.0+cpu"))
    r = cli(["verify", "--python", str(venv), "--checks", "import_torch", "--json", "--timeout", "60"])
    doc = json.loads(r.out)
    assert doc["variant"]["installed"] is True and doc["variant"]["label"] is None
    assert doc["variant"]["build"] == "cpu"
    jsonschema = pytest.importorskip("jsonschema")
    from tests.conftest import ROOT

    jsonschema.validate(doc, json.loads((ROOT / "schemas" / "envcheck.verify.v1.json").read_text()))


def test_variants_env_reads_the_given_matrices(cli, tmp_path):
    """`--matrices DIR` is the data every output comes from, variants.env included (it read the
    built-in matrix before: a user's own provider row never reached the file)."""
    import shutil

    from tests.conftest import ROOT

    mx = tmp_path / "mx"
    shutil.copytree(ROOT / "matrices", mx)
    vt = mx / "variants.toml"
    vt.write_text(vt.read_text().replace('arch_override = "NV_VARIANT_PROVIDER_FORCE_SM_ARCH"',
                                         'arch_override = "MY_SITE_FORCE_SM_ARCH"'))
    args = ["plan", "--gpu", "RTX 4090", "--driver", "580.65.06", "--format", "variants"]
    r = cli([*args, "--matrices", str(mx)])
    assert r.code == 0, r.err
    assert env_lines(r.out).get("MY_SITE_FORCE_SM_ARCH") == "8.9"
    assert "NV_VARIANT_PROVIDER_FORCE_SM_ARCH" not in r.out
    out = tmp_path / "out"
    w = cli([*args, "--matrices", str(mx), "-o", str(out)])  # the file written by -o, too
    assert w.code == 0, w.err
    assert "MY_SITE_FORCE_SM_ARCH=8.9" in (out / "variants.env").read_text().splitlines()
