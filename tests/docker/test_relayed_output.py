"""What the engine relays of a build is printed without its control sequences (newcomer6 #7):
pip inside `docker build` coloured its error, and envcheck's message carried it raw —
`last output: [91mERROR: Could not find … filelock [0m`. A real build on the real engine prints
pip's coloured error line; the error envcheck prints (stderr and the --json document alike) keeps
the words and drops the escapes."""

from __future__ import annotations

import pytest

from tests.docker.conftest import RUN, RUN_LABEL, run_tag

pytestmark = pytest.mark.docker

PIP_SAID = "ERROR: Could not find a version that satisfies the requirement filelock"


def test_a_failed_builds_coloured_output_is_relayed_as_text(engine, run_base, tmp_path, capsys):
    from envcheck.cli import _failure, _say_error
    from envcheck.docker.build import build_image
    from envcheck.docker.engine import DockerError

    (tmp_path / "Dockerfile").write_text(
        f"FROM {run_base}\nRUN printf '\\033[91m{PIP_SAID} (from torch)\\033[0m\\n'; exit 1\n")
    with pytest.raises(DockerError) as caught:
        build_image(engine, tmp_path, run_tag("ansi:1"), {RUN_LABEL: RUN})
    raw = str(caught.value)
    assert "\x1b[91m" in raw and PIP_SAID in raw  # what the engine relayed, as it came
    message, code = _failure(caught.value)
    assert code == 3 and "\x1b" not in message and f"{PIP_SAID} (from torch)" in message
    _say_error(raw)
    err = capsys.readouterr().err
    assert err.startswith("envcheck: error: building ") and "\x1b" not in err and PIP_SAID in err
    assert "last output:" in err

