"""What starting a command imports (issue #9, speed): the modules a run loads are its start-up cost,
so the paths measured by benchmarks/bench_plan.py are held to an import list here (benchmarks time
them; this only fails when an eager import comes back)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from envcheck.cli import _command_of, build_parser

PROBE = ("import sys\nfrom envcheck.cli import main\ntry:\n    main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
         "sys.stderr.write('\\nMODULES ' + ' '.join(sorted(sys.modules)) + '\\n')\n")


def modules_of(cwd, *argv: str) -> set:
    """The modules ``envcheck ARGV`` has loaded when it is done, run in ``cwd`` (no config file there;
    the matrix cache of this test session filled by a first run)."""
    for _ in range(2):
        res = subprocess.run([sys.executable, "-c", PROBE, *argv], capture_output=True, text=True, timeout=120,
                             cwd=cwd)
    line = [ln for ln in res.stderr.splitlines() if ln.startswith("MODULES ")]
    assert line, res.stderr
    return set(line[-1][len("MODULES "):].split())


@pytest.mark.parametrize("argv, command", [
    (["plan", "--gpu", "x"], "plan"),
    (["-v", "plan"], "plan"),
    (["--color", "never", "probe"], "probe"),
    (["--color=never", "--config", "plan", "gpus"], "gpus"),  # `plan` is --config's value here
    (["--help", "plan"], None),
    (["-h"], None),
    (["--", "plan"], None),
    (["bogus", "plan"], None),
    ([], None),
])
def test_the_command_argv_runs(argv, command):
    assert _command_of(argv) == command


def test_the_top_level_lists_every_command_without_building_them():
    top = build_parser(["--help"])
    full = build_parser(None)
    assert top.format_help() == full.format_help()
    only = build_parser(["plan"])
    sub = next(a for a in only._actions if a.__class__.__name__ == "_SubParsersAction")
    assert list(sub.choices) == ["plan"]


@pytest.mark.subprocess
def test_help_imports_no_command_module_nor_dataclasses_pathlib_typing(tmp_path):
    mods = modules_of(tmp_path, "--help")
    assert not {m for m in mods if m.startswith("envcheck.cli.") and m != "envcheck.cli.conventions"}
    assert not mods & {"dataclasses", "tomllib", "envcheck.matrix", "json", "pathlib", "typing"}


@pytest.mark.subprocess
def test_plan_imports_only_what_planning_needs(tmp_path):
    mods = modules_of(tmp_path, "plan", "--gpu", "RTX 4090", "-o", str(tmp_path / "out"), "--force")
    others = {m for m in mods if m.startswith("envcheck.cli.")} - {"envcheck.cli.plan", "envcheck.cli.flags",
                                                                      "envcheck.cli.conventions"}
    assert not others
    # a TOML parse, a PEP 440 specifier, OpenSSL's hashes, pickle (the matrix cache is marshal data):
    # none is needed for a plan from cached data
    assert not mods & {"tomllib", "tomli", "packaging.specifiers", "hashlib", "pickle", "envcheck.matrix.load",
                       "envcheck.render.pixi", "envcheck.render.uvproject", "envcheck.render.pylock",
                       "envcheck.render.variantsenv"}
    # (the second run re-plans into the same folder, as the benchmark does) argparse's formatter and
    # the terminal width without shutil (+bz2, lzma); temporary names without tempfile (+random)
    assert not mods & {"shutil", "tempfile", "random", "bz2", "lzma", "threading"}
    # printable text is told by str.isprintable (unicodedata only for the rest); long lines are
    # wrapped by cli.plan.wrap_words (textwrap compiles its patterns on import)
    assert not mods & {"unicodedata", "textwrap"}
    # every class of the plan path is a @record or a plain class: no dataclasses (+inspect, ast, dis,
    # tokenize: ~9 ms), whose helpers envcheck.record provides for records
    assert not mods & {"dataclasses", "inspect", "ast", "dis", "tokenize"}
    # no JSON is read or written: the Dockerfile's LABEL values are plain ASCII (render.files.json_string)
    assert "json" not in mods
    # the lock is tomli_w's bytes written by envcheck.tomltext: no tomli_w, nor its datetime and math
    assert not mods & {"tomli_w", "datetime", "math"}
    # the Dockerfile and environment.yml templates are filled by render.common.Template (string's
    # import compiles string.Template's pattern)
    assert "string" not in mods
    # a machine file's schema tables: only for --machine FILE
    assert "envcheck.machine.io" not in mods
    # paths are strings on a plan's way (fsutil, matrix): pathlib imports urllib.parse and ipaddress
    # (~5 ms); the plain index URL is checked without urllib (edge._PLAIN_URL)
    assert not mods & {"pathlib", "urllib.parse", "ipaddress", "fnmatch"}
    # plain dotted versions are ordered without packaging (envcheck.matrix.version; packaging.version
    # imports typing: ~7 ms), and typing is only for type checkers in the plan path's modules
    assert not mods & {"typing", "packaging.version", "packaging"}


PROGRAM = ("import sys\nfrom envcheck.entry import main\nsys.argv[0] = 'envcheck'\ncode = main()\n"
           "sys.stderr.write('\\nMODULES ' + ' '.join(sorted(sys.modules)) + '\\n')\n")


@pytest.mark.subprocess
def test_the_program_looks_up_no_argparse_translation(tmp_path):
    """The program (the console script, ``python -m envcheck``) uses argparse's English phrases as
    they are: no gettext catalog lookup, which imports locale and lists the locale folders of each
    language in $LANG for every phrase (entry._untranslated_argparse); the help reads the same."""
    env = {**os.environ, "LANG": "de_DE.UTF-8", "LANGUAGE": "de:fr"}
    for _ in range(2):  # the first run may fill the matrix cache
        res = subprocess.run([sys.executable, "-c", PROGRAM, "plan", "--gpu", "RTX 4090", "-o", str(tmp_path / "o"),
                              "--force"], capture_output=True, text=True, timeout=120, cwd=tmp_path, env=env)
    assert res.returncode == 0, res.stderr
    mods = set(res.stderr.rsplit("MODULES ", 1)[1].split())
    assert "envcheck.resolve" in mods  # it did plan
    assert "locale" not in mods
    helps = [subprocess.run([sys.executable, "-c", code, "plan", "--help"], capture_output=True, text=True,
                            timeout=120, cwd=tmp_path, env=env).stdout for code in (PROGRAM, PROBE)]
    assert "usage: envcheck plan" in helps[0] and "options:" in helps[0]
    assert helps[0] == helps[1]


@pytest.mark.subprocess
def test_planning_into_a_new_folder_imports_no_json_nor_signal(tmp_path):
    """``plan -o NEWDIR`` writes its files as one set, with a journal (fsutil._write_journal) whose
    plain names are written without the json package (its bytes are json.dump's: tests/plan)."""
    modules_of(tmp_path, "plan", "--gpu", "RTX 4090", "-o", str(tmp_path / "warm"))  # the matrix cache
    res = subprocess.run([sys.executable, "-c", PROBE, "plan", "--gpu", "RTX 4090", "-o", str(tmp_path / "new")],
                         capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert (tmp_path / "new" / "envcheck.lock.toml").is_file(), res.stderr
    mods = set(res.stderr.rsplit("MODULES ", 1)[1].split())
    assert "json" not in mods
    assert "pathlib" not in mods  # the set's transaction folder is made with os.path (fsutil)
    # the commit's SIGTERM/SIGHUP handlers through the built-in _signal (signal wraps it in enums)
    assert "signal" not in mods


@pytest.mark.subprocess
def test_probe_imports_no_dataclasses(tmp_path):
    """probe's records (request, result, context, finding, runner results) are @record: no
    dataclasses, inspect, ast or tokenize on its start."""
    mods = modules_of(tmp_path, "probe", "--json")
    assert not mods & {"dataclasses", "inspect", "ast", "tokenize"}


@pytest.mark.subprocess
def test_plan_json_imports_no_renderer(tmp_path):
    """``plan --json`` writes no file: no format's module is loaded (each is imported when its
    format is first rendered, envcheck.render.FORMATS)."""
    mods = modules_of(tmp_path, "plan", "--gpu", "V100", "--json")
    assert "envcheck.resolve" in mods  # it did plan
    assert not {m for m in mods if m.startswith("envcheck.render.")}
    # nor tomli_w's datetime and math; --timeout's bound is a comparison (nan and inf fail it)
    assert not mods & {"tomli_w", "datetime", "math"}


def test_the_config_file_is_found_upward_without_parsing_unrelated_pyprojects(tmp_path):
    """find_config walks up with os.path (no pathlib on the --help path): the nearest envcheck.toml,
    else a pyproject.toml with [tool.envcheck]; a pyproject.toml without the word is skipped unread
    as TOML, so a broken one that is not ours costs nothing."""
    from envcheck.settings import find_config

    deep = tmp_path / "a" / "b" / "c"
    deep.mkdir(parents=True)
    assert find_config(deep) is None or not str(find_config(deep)).startswith(str(tmp_path))
    (tmp_path / "a" / "pyproject.toml").write_text("[tool.envcheck]\nbackend = 'cpu'\n")
    (tmp_path / "a" / "b" / "pyproject.toml").write_text("this is [not TOML\n")  # not ours: skipped
    assert find_config(deep) == tmp_path / "a" / "pyproject.toml"
    (tmp_path / "a" / "b" / "envcheck.toml").write_text("backend = 'cpu'\n")
    assert find_config(str(deep)) == tmp_path / "a" / "b" / "envcheck.toml"


@pytest.mark.parametrize("doc", [
    {"status": "ok", "candidates": [{"reasons": [], "n": 1.5e300}], "empty": {}, "none": None},
    {"a": "a line\n  \"schema\": 1 inside a string", "b": [[], {}]},
    {"schema": "old", "x": 1},  # a document with its own schema key: replaced, and first
    {"text": "≥ non-ASCII kept raw"},
])
def test_json_stamp_is_the_same_bytes_as_dumping_again(doc):
    """stamp_json puts the schema key first without re-encoding an indent=2 document (plan --json is
    ~1 MB): the bytes are those of dumping the stamped document again."""
    import json

    from envcheck.cli.conventions import JSON_SCHEMAS, stamp_json

    sid = JSON_SCHEMAS["plan"][0]
    want = json.dumps({"schema": sid, **{k: v for k, v in doc.items() if k != "schema"}}, indent=2) + "\n"
    for text in (json.dumps(doc, indent=2), json.dumps(doc, indent=2) + "\n",
                 json.dumps(doc, indent=2, ensure_ascii=False), json.dumps(doc, indent=1)):
        assert stamp_json("plan", text) == want


@pytest.mark.subprocess
def test_fresh_data_is_told_without_datetime(tmp_path):
    """staleness() compares the data's newest day as text; datetime is imported only to word a
    warning (nothing else on a plan's way imports it: tests above; this holds freshness alone)."""
    code = ("import sys\nimport envcheck.matrix.freshness as f\nfrom envcheck.matrix import load_matrix\n"
            "m = load_matrix()\nf.STALE_DAYS = 100000\nassert f.staleness(m) is None\n"
            "print('datetime' in sys.modules)\nf.STALE_DAYS = -100000\nassert 'days old' in f.staleness(m)\n")
    for _ in range(2):  # the first run may fill the matrix cache (a parse imports datetime)
        res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "False"


@pytest.mark.subprocess
@pytest.mark.parametrize("call, program", [("main()", True), ("main(['plan', '--gpu', 'RTX 4090', '--json'])", False)])
def test_the_program_leaves_its_objects_to_the_shutdown_but_a_caller_keeps_its_collector(tmp_path, call, program):
    """The program (argv=None) collects rarely and freezes its heap at the end, so the shutdown does not
    walk a plan's objects (#9); envcheck.entry.main(argv) in someone else's process changes neither."""
    code = ("import atexit, gc, sys\n"
            "atexit.register(lambda: sys.stderr.write(f'\\nGC {gc.get_threshold()[0]} {gc.get_freeze_count()}\\n'))\n"
            "sys.argv = ['envcheck', 'plan', '--gpu', 'RTX 4090', '--json']\n"
            f"from envcheck.entry import main\nsys.exit({call})\n")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    gc_line = [ln for ln in res.stderr.splitlines() if ln.startswith("GC ")]
    assert res.returncode == 0 and gc_line, res.stderr
    threshold, frozen = map(int, gc_line[-1].split()[1:])
    if program:
        assert threshold >= 10_000 and frozen > 10_000, gc_line
    else:
        assert (threshold, frozen) == (700, 0), gc_line
