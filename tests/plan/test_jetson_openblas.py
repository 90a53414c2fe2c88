"""Jetson's OpenBLAS step has one source, matrices/recipe.toml, for every output (newcomer4 #5).

The newcomer's `plan --gpu "Jetson Orin" -o jet/`: only the Dockerfile installed libopenblas-dev (from
docker.toml's apt lists), install.sh had no such step, and explain's libopenblas.so.0 fix carried its
own command. The recipe row now carries the step and its `apt` packages; the Dockerfile installs them
from it (docker.toml's rows no longer list them) and explain's fix quotes the row's command.
"""

from __future__ import annotations

from tests.conftest import run_cli


def _row(matrix):
    return next(r for r in matrix.recipe if r.key == "jetson-openblas")


def test_every_output_of_a_jetson_plan_takes_the_step_from_the_recipe(matrix, tmp_path):
    row = _row(matrix)
    assert row.apt == ("libopenblas-dev",) and "container" not in row.when
    r = run_cli(["plan", "--gpu", "Jetson Orin", "--format", "all", "-o", str(tmp_path)])
    assert r.code == 0, r.err
    assert "[system] jetson-openblas" in r.out
    for name in ("install.sh", "requirements.txt", "envcheck.lock.toml", "Dockerfile"):
        assert "jetson-openblas" in (tmp_path / name).read_text(), name
    assert row.commands in (tmp_path / "install.sh").read_text()
    docker = (tmp_path / "Dockerfile").read_text()
    # the image installs it (the step's apt packages), and the header no longer sends it to the host
    apt_line = next(ln for ln in docker.splitlines() if "apt-get install" in ln)
    assert "libopenblas-dev" in apt_line
    assert "jetson-openblas: OpenBLAS for JetPack's torch wheels (libopenblas-dev) — by the base image" in docker


def test_no_base_image_row_repeats_a_package_a_recipe_step_installs(matrix):
    """docker.toml's apt lists hold what the template needs; a step's packages live on the step only."""
    step_apt = {p: r.key for r in matrix.recipe for p in r.apt}
    assert step_apt
    both = [(img.key if hasattr(img, "key") else img.image, p, step_apt[p])
            for img in matrix.base_images for p in img.apt if p in step_apt]
    assert not both, both


def test_explain_gives_the_recipe_steps_own_command(matrix, cli):
    res = cli(["explain", "--no-probe", "ImportError: libopenblas.so.0: cannot open shared object file: No such file or directory"])
    assert res.code == 0, res.err
    assert f"`{_row(matrix).commands}`" in res.out
