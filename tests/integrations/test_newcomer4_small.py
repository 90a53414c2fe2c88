"""newcomer4 #11: the smaller gaps between the README, --help and what the commands do."""

from __future__ import annotations

from tests.conftest import ROOT


def test_lock_check_prints_its_result_on_stdout(cli, tmp_path):
    """`lock check` printed its result lines to stderr only: stdout was empty without --json."""
    r = cli(["plan", "--gpu", "RTX 4090", "--driver", "580.65.06", "--python", "3.12", "--format", "lock",
             "-o", str(tmp_path)])
    assert r.code == 0, r.err
    res = cli(["lock", "check", str(tmp_path / "envcheck.lock.toml")])
    assert res.code == 0
    assert res.out.strip().endswith("still resolves (the resolver's choice)") and res.out.count("\n") == 1, res.out
    assert res.err == ""


def test_a_broken_lock_is_a_result_line_and_a_count_on_stderr(cli, tmp_path):
    r = cli(["plan", "--gpu", "RTX 4090", "--driver", "580.65.06", "--python", "3.12", "--format", "lock",
             "-o", str(tmp_path)])
    assert r.code == 0, r.err
    lock = tmp_path / "envcheck.lock.toml"
    bad = tmp_path / "old.toml"
    bad.write_text(lock.read_text().replace('nvidia_driver = "580.65.06"', 'nvidia_driver = "418.39"'))
    res = cli(["lock", "check", str(lock), str(bad)])
    assert res.code == 1
    lines = res.out.splitlines()
    assert len(lines) == 2 and "still resolves" in lines[0] and "no longer resolves" in lines[1], res.out
    assert res.err == "envcheck: 1 of 2 locks no longer resolves\n", res.err


def test_the_readme_says_explain_exits_1_when_nothing_explains_the_text(cli):
    res = cli(["explain", "--no-probe", "KeyError: 'foo'"])
    assert res.code == 1
    readme = (ROOT / "README.md").read_text()
    exit_para = readme[readme.index("Exit codes: 0 a build fits"):]
    exit_para = exit_para[:exit_para.index("\n\n")]
    assert "for `explain` \"no rule explains the\ntext\"" in exit_para
    assert "(exit 0 explained, 1 not explained" in readme


def test_the_windows_venv_step_tries_uv_when_the_launcher_lacks_the_python(matrix):
    """`if (Get-Command py) { py -3.14 -m venv }` failed where the launcher exists without 3.14, never
    reaching the uv branch. The py branch is now taken only when `py -3.14` runs (PowerShell is not on
    this machine: the command is checked as text)."""
    row = next(r for r in matrix.recipe if r.key == "venv-windows")
    cmd = row.commands.strip()
    py_branch, rest = cmd.split(" { py -{{python}} -m venv $VENV } ", 1)
    assert "py -{{python}} -c 'import ensurepip'" in py_branch and "$LASTEXITCODE -eq 0" in py_branch
    assert rest.startswith("elseif (Get-Command uv")


def test_a_floor_raised_by_the_gpus_first_driver_says_so(cli):
    """newcomer4 #10: RTX 5090 + 570.124.06 printed '(≥ 570.86.10 under minor-version compatibility)'
    where every other CUDA 12.x plan gives 525.60.13: 570.86.10 is the first driver for sm_120
    (cuda.toml [[arch]]), which the line now says; a floor that is CUDA's own names no GPU."""
    # a cu129 build: CUDA 12.9's first driver (575.51.03) is past 570.124.06, so it runs under
    # minor-version compatibility (cu128 runs fully there since hfix11: 12.8's first driver is older)
    blackwell = cli(["plan", "--gpu", "RTX 5090", "--driver", "570.124.06", "--backend", "cu129"])
    assert blackwell.code == 0, blackwell.err
    assert "(≥ 570.86.10, the first driver for sm_120, under minor-version compatibility)" in blackwell.out
    ada = cli(["plan", "--gpu", "RTX 4090", "--driver", "570.124.06", "--torch", "2.7.1"])
    assert ada.code == 0, ada.err
    assert "under minor-version compatibility)" in ada.out and "the first driver for" not in ada.out, ada.out
