"""A format that cannot be made for a plan (breaker F7: no Docker base image for Intel XPU) is left
out with a note when the user did not name it (the default set, ``--format all``) and the other
files are written; named explicitly, it is exit 2 with the reason and nothing is written."""

from __future__ import annotations

from tests.conftest import run_cli


def _xpu_gpus(matrix):
    """Every Intel GPU the data knows (the class: a backend without a [[base_image]] row)."""
    return [g.name for g in matrix.gpus if g.vendor == "intel"]


def test_every_xpu_machine_gets_its_files_without_the_dockerfile(matrix, tmp_path):
    names = _xpu_gpus(matrix)
    assert names, "no Intel GPU on record"
    assert "xpu" not in {b.backend for b in matrix.base_images}  # the class this test is about
    for i, name in enumerate(names[:3]):
        out = tmp_path / f"o{i}"
        r = run_cli(["plan", "--gpu", name, "-o", str(out)])
        assert r.code == 0, (name, r.err)
        assert sorted(p.name for p in out.iterdir()) == ["envcheck.lock.toml", "environment.yml", "requirements.txt"]
        assert "torch==" in (out / "requirements.txt").read_text() and "+xpu" in (out / "requirements.txt").read_text()
        assert "note: Dockerfile not made: no Docker base image on record for the xpu backend" in r.err, r.err
    out = tmp_path / "all"
    r = run_cli(["plan", "--gpu", names[0], "-o", str(out), "--format", "all"])
    assert r.code == 0 and "Dockerfile" not in {p.name for p in out.iterdir()} and (out / "install.sh").exists()


def test_a_format_named_explicitly_that_cannot_be_made_is_exit_2(tmp_path):
    out = tmp_path / "o"
    r = run_cli(["plan", "--gpu", "Arc A770", "-o", str(out), "--format", "pip,docker"])
    assert r.code == 2 and r.err.count("\n") == 1, r.err
    assert "--format docker: Dockerfile cannot be made for this plan: no Docker base image" in r.err
    assert not out.exists() or not list(out.iterdir())
    r = run_cli(["plan", "--gpu", "Arc A770", "--format", "docker"])
    assert r.code == 2 and r.out == "" and "cannot be made" in r.err


def test_a_cuda_plan_still_writes_its_dockerfile(tmp_path):
    out = tmp_path / "o"
    r = run_cli(["plan", "--gpu", "H100", "-o", str(out)])
    assert r.code == 0 and (out / "Dockerfile").exists() and "not made" not in r.err
