"""The command line REPLACES a repeatable flag's value from ENVCHECK_* or the config file, never
adds to it (breaker F4: ``ENVCHECK_GPU="RTX 4090" envcheck plan --gpu H100`` planned a two-GPU
machine nobody described; ``ENVCHECK_MIRROR=… --mirror …`` used the environment's URL). And an
explicit ``--config FILE`` is read even when ``ENVCHECK_NO_CONFIG=1`` (the command line first)."""

from __future__ import annotations

import argparse

import pytest

from tests.conftest import run_cli


def _commands(parser, path=()):
    """Every (command path, its parser) of the command tree."""
    for a in parser._actions:
        if isinstance(a, argparse._SubParsersAction):
            for name, sub in a.choices.items():
                yield path + (name,), sub
                yield from _commands(sub, path + (name,))


def _repeatable(parser):
    return [a for a in parser._actions if isinstance(a, (argparse._AppendAction, argparse._ExtendAction))
            and a.option_strings]


def test_every_repeatable_flag_of_every_command_is_replaced_by_the_command_line(tmp_path):
    from envcheck.cli import build_parser
    from envcheck.settings import apply_settings, env_names

    seen = 0
    for path, sub in _commands(build_parser(None)):
        for a in _repeatable(sub):
            command = "-".join(path)
            own = env_names(command, a.dest)[1]
            pick = list(a.choices) if a.choices else ["from-env", "from-cli"]
            environ = {own: str(pick[0])}
            try:
                apply_settings(sub, command, None, True, environ, tmp_path)
            except Exception as exc:  # a value its type refuses: this flag's own grammar, not the rule
                pytest.fail(f"{command} {a.option_strings}: {exc}")
            ns = argparse.Namespace(**{a.dest: sub.get_default(a.dest)})
            assert list(getattr(ns, a.dest)) != [], (command, a.dest)  # the setting reached the default
            a(sub, ns, [pick[-1]] if a.nargs in ("+", "*") or isinstance(a, argparse._ExtendAction) else pick[-1])
            got = getattr(ns, a.dest)
            assert pick[0] not in [str(x) for x in got], (command, a.option_strings, got)
            seen += 1
    assert seen >= 5  # plan/docker --gpu, --mirror, --without, explain --gpu, fleet k8s --node-selector


@pytest.fixture
def bare(tmp_path, monkeypatch):
    for k in list(__import__("os").environ):
        if k.startswith("ENVCHECK_") and k not in ("ENVCHECK_CACHE_DIR", "ENVCHECK_DATA_DIR", "ENVCHECK_MATRICES"):
            monkeypatch.delenv(k)
    monkeypatch.chdir(tmp_path)
    return monkeypatch


def test_the_reported_cases(bare, tmp_path):
    bare.setenv("ENVCHECK_MIRROR", "https://m1.example/whl")
    r = run_cli(["plan", "--gpu", "H100", "--mirror", "https://m2.example/whl", "--format", "pip"])
    assert "--index-url https://m2.example/whl/" in r.out and "m1.example" not in r.out, r.out
    bare.delenv("ENVCHECK_MIRROR")
    bare.setenv("ENVCHECK_GPU", "RTX 4090")
    r = run_cli(["plan", "--gpu", "H100"])
    assert "H100" in r.out.splitlines()[0] and "4090" not in r.out.splitlines()[0], r.out
    r = run_cli(["plan"])  # the environment alone still sets it
    assert "4090" in r.out.splitlines()[0]
    bare.delenv("ENVCHECK_GPU")
    bare.setenv("ENVCHECK_WITHOUT", "torchvision")
    r = run_cli(["plan", "--gpu", "H100", "--without", "torchaudio", "--format", "pip"])
    assert "torchvision==" in r.out and "torchaudio==" not in r.out, r.out
    bare.delenv("ENVCHECK_WITHOUT")
    (tmp_path / "pyproject.toml").write_text('[tool.envcheck.plan]\ngpu = ["RTX 4090"]\n')
    r = run_cli(["plan", "--gpu", "H100"])
    assert "H100" in r.out.splitlines()[0] and "4090" not in r.out.splitlines()[0], r.out
    bare.setenv("ENVCHECK_EXPLAIN_GPU", "RTX 5090")
    r = run_cli(["explain", "--no-probe", "--gpu", "GTX 1080", "CUDA error: no kernel image is available"])
    assert "5090" not in r.out and "1080" in r.out, r.out


def test_an_explicit_config_is_read_under_no_config_env(bare, tmp_path):
    f = tmp_path / "team.toml"
    f.write_text('[plan]\nbackend = "cpu"\n')
    bare.setenv("ENVCHECK_NO_CONFIG", "1")
    r = run_cli(["--config", str(f), "config", "plan", "--json"])
    assert r.code == 0, r.err
    doc = r.json()
    assert doc["file"] == str(f)
    assert {s["flag"]: s["value"] for s in doc["settings"]}["--backend"] == "cpu"
    (tmp_path / "envcheck.toml").write_text('[plan]\nbackend = "cu130"\n')
    doc = run_cli(["config", "plan", "--json"]).json()  # no --config: the variable still turns lookup off
    assert doc["file"] is None
