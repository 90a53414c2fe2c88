"""The README's Plan block, run top to bottom as a newcomer does (newcomer finding H1).

Its `--format all -o wsl/` line wrote wsl/install.sh, so the next line (`--format script -o wsl/`)
refused to overwrite it and `bash wsl/install.sh` never ran. Every line that writes files (-o) runs
here in order, in one folder, as the README gives it (`--download` reads the index: skipped, it is
tested in tests/docker/test_recipe_e2e.py); `&& bash …` parts are not run (a WSL + Radeon machine).
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from tests.conftest import run_cli

README = Path(__file__).resolve().parents[2] / "README.md"


def plan_block() -> list:
    text = README.read_text(encoding="utf-8")
    block = re.search(r"^## Plan\n+```bash\n(.*?)^```", text, re.M | re.S)
    assert block, "README.md has no ```bash block under ## Plan"
    return [ln for ln in block.group(1).splitlines() if ln.strip()]


def test_readme_plan_block_writes_without_collisions(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    ran = 0
    for line in plan_block():
        first = line.split("#")[0].split("&&")[0]
        argv = shlex.split(first)
        if "-o" not in argv or "--download" in argv:
            continue
        assert argv[0] == "envcheck", line
        res = run_cli(argv[1:])
        assert res.code == 0, f"README line fails when run in order: {line}\n{res.err[-1500:]}"
        ran += 1
        if "&&" in line and "bash" in line.split("&&", 1)[1]:  # the script it runs is there, with nothing missing
            script = Path(shlex.split(line.split("&&", 1)[1].split("#")[0])[-1])
            assert script.is_file(), line
    assert ran >= 3
