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


#: The variants.json / variant.json schema the installed uv reads (its `--preview-features wheel-variants`
#: refuses a file without `$schema`; the URL is the one its binary names, PEP 825 draft v0.1.1).
VARIANT_SCHEMA = "https://variants-schema.wheelnext.dev/peps/825/v0.1.1.json"
#: Two variant wheels of a metadata-only torch, labelled as PyTorch's variant index labels its CUDA builds.
VARIANTS = {"cu129_sm89": {"nvidia": {"cuda_version_lower_bound": ["12.9"], "sm_arch": ["89_real"]}},
            "cu129_sm90": {"nvidia": {"cuda_version_lower_bound": ["12.9"], "sm_arch": ["90_real"]}}}


@pytest.fixture
def variant_index(tmp_path):
    """A PEP 503 index on 127.0.0.1 with the two variant wheels and their torch-2.13.0-variants.json
    (PEP 825: the label after the platform tag; the provider is NVIDIA's, which uv runs built in)."""
    from tests.localhttp import serve_directory

    head = {"$schema": VARIANT_SCHEMA, "default-priorities": {"namespace": ["nvidia"]},
            "providers": {"nvidia": {"plugin-api": "nvidia_variant_provider.plugin:NvidiaVariantPlugin",
                                     "requires": ["nvidia-variant-provider>=0.0.1,<1.0.0"]}}}
    root = tmp_path / "index"
    pkg = root / "torch"
    pkg.mkdir(parents=True)
    names = []
    for label, props in VARIANTS.items():
        built = wheel(tmp_path, "2.13.0", {**head, "variants": {label: props}})
        name = f"torch-2.13.0-py3-none-any-{label}.whl"
        built.rename(pkg / name)
        names.append(name)
    (pkg / "torch-2.13.0-variants.json").write_text(json.dumps({**head, "variants": VARIANTS}))
    names.append("torch-2.13.0-variants.json")
    (pkg / "index.html").write_text("<html><body>\n" + "".join(f'<a href="{n}">{n}</a><br/>\n' for n in names)
                                    + "</body></html>\n")
    (root / "index.html").write_text('<html><body><a href="torch/">torch</a></body></html>\n')
    with serve_directory(root) as url:
        yield url


@pytest.mark.parametrize("gpu,label", [("RTX 4090", "cu129_sm89"), ("H100", "cu129_sm90")])
def test_uv_installs_the_variant_of_the_named_machine(cli, tmp_path, uv_bin, variant_index, gpu, label):
    """The whole preview loop on a GPU-less host: `plan --format variants` for a named machine, its
    variables given to the real uv's wheel-variant preview against a local variant index, and verify
    reads back the label of the wheel uv chose — a different one per GPU."""
    import os

    r = cli(["plan", "--gpu", gpu, "--driver", "580.65.06", "--format", "variants"])
    assert r.code == 0, r.err
    overrides = env_lines(r.out)
    assert set(overrides) == {"NV_VARIANT_PROVIDER_FORCE_SM_ARCH", "NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION"}
    env = {k: v for k, v in os.environ.items() if not k.startswith(("UV_", "PIP_", "NV_VARIANT", "AMD_VARIANT"))}
    env.update(overrides, UV_NO_CONFIG="1", UV_CACHE_DIR=str(tmp_path / "uv-cache"), UV_PYTHON_DOWNLOADS="never")
    venv = tmp_path / "venv"
    made = subprocess.run([uv_bin, "venv", "-q", "--python", sys.executable, str(venv)], env=env,
                          capture_output=True, text=True, timeout=300)
    assert made.returncode == 0, made.stderr
    py = venv / "bin" / "python"
    got = subprocess.run([uv_bin, "pip", "install", "--python", str(py), "--preview-features", "wheel-variants",
                          "--index-url", f"{variant_index}/", "torch"], env=env, capture_output=True, text=True,
                         timeout=300)
    assert got.returncode == 0, got.stderr
    v = cli(["verify", "--python", str(py), "--checks", "import_torch", "--json", "--timeout", "60"])
    assert v.json()["variant"]["label"] == label, v.json()["variant"]
