"""newcomer L2: README's message-family table showed fixes the code no longer gives (torch 2.15.0+cpu,
cu132 for a CPU-only build…). The table is `envcheck explain --list` itself, rewritten by
tools/readme_families.py; this fails when they differ."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_readme_family_table_is_explain_list():
    spec = importlib.util.spec_from_file_location("readme_families", ROOT / "tools" / "readme_families.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert mod.rewritten(text) == text, "README.md's family table is stale: run python tools/readme_families.py"
    from envcheck.app.explain import families

    for f in families():  # every family is in the table
        assert f"| `{f['family']}` |" in text
