"""Every script and file envcheck writes for another install to run (the Slurm batch script and
prolog, the Kubernetes Job, install.sh, install.ps1, the Dockerfile) calls only what a plain `pip install .` of
envcheck has — or says so on that very step and survives its absence (newcomer6 #1: the batch
script's `fleet merge --junit` exited 2 without the 'junit' extra, and the job wrote no fleet.json).

Each envcheck command in the text is parsed by envcheck's own parser and asked which optional
extras it needs (envcheck.cli.extras_needed, what the command line checks before any work)."""

from __future__ import annotations

import json
import shlex

import pytest

from tests.conftest import run_cli

#: how the generated texts call envcheck
CALLS = ("envcheck", "$ENVCHECK")
OPERATORS = set(";&|<>(){}")


def envcheck_commands(text):
    """``(line, argv)`` of every envcheck command in ``text`` (comments left out)."""
    out = []
    for line in text.replace("\\\n", " ").splitlines():
        body = line.strip()
        if body.startswith('- "'):  # a YAML double-quoted string (the k8s Job's command): JSON's escapes
            body = json.loads(body[2:])
        if body.startswith("#"):
            continue
        try:
            lex = shlex.shlex(body, posix=True, punctuation_chars=True)
            lex.whitespace_split = True
            words = list(lex)
        except ValueError:
            continue
        for i, w in enumerate(words):
            if w in CALLS and i + 1 < len(words) and words[i + 1][:1].isalpha():
                argv = []
                for a in words[i + 1:]:
                    if a and set(a) <= OPERATORS:
                        break
                    argv.append(a)
                out.append((line, argv))
    return out


def needs(argv):
    from envcheck.cli import build_parser, extras_needed

    return extras_needed(build_parser(argv).parse_args(argv))


def generated(tmp_path):
    texts = {"slurm": run_cli(["fleet", "slurm", "--nodes", "2", "--lock", "/x/envcheck.lock.toml"]).out,
             "prolog": run_cli(["fleet", "slurm", "--prolog", "--envcheck", "/bin/true"]).out,
             "k8s": run_cli(["fleet", "k8s", "--image", "reg/img:1", "--nodes", "2"]).out,
             "k8s-pvc": run_cli(["fleet", "k8s", "--image", "reg/img:1", "--nodes", "2", "--pvc", "reports"]).out}
    plans = {"cpu": ["--backend", "cpu", "--torch", "2.13.0", "--python", "3.11", "--os", "linux"],
             "cuda": ["--gpu", "H100", "--python", "3.12", "--os", "linux"],
             "windows": ["--gpu", "RTX 4060", "--python", "3.12", "--os", "windows"]}
    for name, argv in plans.items():
        out = tmp_path / name
        assert run_cli(["plan", *argv, "--format", "script,docker" if name != "windows" else "script",
                        "-o", str(out)]).code == 0
        for f in sorted(out.iterdir()):
            texts[f"{name}/{f.name}"] = f.read_text()
    return texts


def test_the_parser_of_generated_commands_sees_the_extras():
    """The test can fail: a command that needs an extra is seen as needing it."""
    assert needs(["fleet", "merge", "r/", "--junit", "f.xml"]) == ["junit"]
    assert envcheck_commands('x; "$ENVCHECK" fleet merge "$R" --junit "$R/f.xml" > /dev/null') == [
        ('x; "$ENVCHECK" fleet merge "$R" --junit "$R/f.xml" > /dev/null', ["fleet", "merge", "$R", "--junit", "$R/f.xml"])]


@pytest.mark.subprocess  # plan -o probes this machine (docker info)
def test_generated_scripts_need_no_extra_except_on_a_guarded_step(tmp_path):
    seen = 0
    for name, text in generated(tmp_path).items():
        for line, argv in envcheck_commands(text):
            seen += 1
            extra = needs(argv)
            if extra:
                # only the batch script's JUnit step, which runs under `if` (its failure is reported,
                # the job's verdict and fleet.json come from the merge before it) and is announced
                assert name == "slurm" and line.startswith("if ") and extra == ["junit"], (name, line)
                assert "'junit' extra" in text, name
    assert seen >= 11
