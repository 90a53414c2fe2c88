"""requirements.txt: --index-url for a file of its own, --extra-index-url (said why) for lines added
to an existing project, whose other packages must still reach PyPI."""

from __future__ import annotations

PLAN = ["plan", "--gpu", "RTX 4090", "--driver", "580.65.06", "--python", "3.12", "--torch", "2.13.0",
        "--format", "pip"]


def test_full_file_uses_index_url_and_says_why(cli):
    r = cli(PLAN)
    assert r.code == 0, r.err
    lines = r.out.splitlines()
    opts = [ln for ln in lines if ln.startswith("--")]
    assert opts == ["--index-url https://download.pytorch.org/whl/cu130"] or opts[0].startswith("--index-url ")
    i = lines.index(opts[0])
    assert lines[i - 1].startswith("# --index-url:") and "--style project" in lines[i - 1]


def test_project_style_is_short_and_keeps_pypi(cli):
    r = cli([*PLAN, "--style", "project"])
    assert r.code == 0, r.err
    lines = r.out.splitlines()
    comments = [ln for ln in lines if ln.startswith("#")]
    assert len(comments) <= 3
    assert not any(ln.startswith("--index-url") for ln in lines)
    (extra,) = [ln for ln in lines if ln.startswith("--extra-index-url ")]
    assert extra.startswith("--extra-index-url https://download.pytorch.org/whl/cu1")
    reqs = [ln for ln in lines if not ln.startswith(("#", "--"))]
    pins = [ln for ln in reqs if "==" in ln]
    assert [ln for ln in reqs if "==" not in ln] == ["numpy"]  # the plan's NumPy range (matrices/numpy.toml)
    assert pins and all(ln.split("==")[0] in ("torch", "torchvision", "torchaudio") for ln in pins)
    assert all("+cu" in ln for ln in pins)  # a label only the PyTorch index serves
    assert any("--extra-index-url, not --index-url" in c for c in comments)


def test_project_lines_drop_into_an_existing_file(cli, tmp_path):
    """The user's file with envcheck's lines appended: options stay options, every other line is a
    PEP 508 requirement (packaging's parser), the user's own lines untouched."""
    from packaging.requirements import Requirement

    r = cli([*PLAN, "--style", "project"])
    text = "pandas>=2\nrequests\n" + r.out
    body = [ln for ln in text.splitlines() if ln and not ln.startswith("#")]
    reqs = [Requirement(ln) for ln in body if not ln.startswith("--")]
    assert [str(q) for q in reqs[:2]] == ["pandas>=2", "requests"]
    assert any(q.name == "torch" and str(q.specifier).startswith("==2.13.0+cu") for q in reqs)
