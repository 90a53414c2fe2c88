"""verify, explain and probe against hostile input: interpreters that lie or misbehave, facts files
with any field wrong, tools that print without end, outputs that cannot be written, pastes of any size.

Each test here failed before the fix it guards (tests/verify/test_hostile.py, findings of a tester
who tried to break the three commands). Real processes throughout: fake *interpreters* are small
executable scripts run for real; nothing is mocked.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from envcheck.errors import DataFileError
from envcheck.verify.checks import CHECKS
from tests.verify.conftest import CASES, STANDIN
from tests.verify.test_faults import run_guarded

pytestmark = pytest.mark.subprocess  # real interpreters, venvs, tools (tests/README.md)

ROOT = Path(__file__).resolve().parents[2]


def guarded(fn, limit):
    """``fn()`` in a thread; fail if it takes longer than ``limit`` seconds (a hang, or time that grows
    with the square of the input: the bound is far above the linear time and far below the old one)."""
    box = {}
    t = threading.Thread(target=lambda: box.setdefault("v", fn()), daemon=True)
    t.start()
    t.join(limit)
    assert not t.is_alive(), f"did not finish within {limit} s"
    return box["v"]


def fake_python(tmp_path, body: str, name: str = "fakepy") -> str:
    """An executable that stands where --python points: runs ``body`` (Python), ignoring its arguments."""
    p = tmp_path / name
    p.write_text(f"#!{sys.executable}\n{body}\n")
    p.chmod(0o755)
    return str(p)


def fake_torch(tmp_path, body: str) -> Path:
    """A folder with a ``torch`` package whose ``__init__`` runs ``body`` (put it on PYTHONPATH)."""
    pkg = tmp_path / "site" / "torch"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text(body)
    return pkg.parent


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/status") as fh:
            return "\nState:\tZ" not in fh.read()  # a zombie is dead, waiting for its reaper
    except OSError:
        return False


# -- --save-facts: checked first, never a device, folders created ------------------------------------
def test_save_facts_never_replaces_a_special_file_even_with_force(cli, tmp_path):
    # a FIFO stands for /dev/null & co.: the same kind of target, and harmless when a broken envcheck
    # replaces it (the unfixed one replaced /dev/null itself)
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    r = cli(["verify", "--facts", str(CASES / "C01.json"), "--save-facts", str(fifo), "--force"])
    assert r.code == 2
    assert "not a regular file (even with --force)" in r.err and str(fifo) in r.err
    assert fifo.is_fifo()


def test_save_facts_into_missing_folders_creates_them(cli, tmp_path):
    target = tmp_path / "nodir" / "sub" / "f.json"
    r = cli(["verify", "--facts", str(CASES / "C01.json"), "--save-facts", str(target)])
    assert r.code == 1, r.err  # C01 has a failing check; the file is written all the same
    assert json.loads(target.read_text())["runs"]["cuda_build"]["data"]["devices"][0]["capability"] == [12, 0]


@pytest.mark.parametrize("make, words", [
    (lambda d: d.mkdir(), "not a regular file (even with --force)"),
    (lambda d: d.parent.joinpath("afile").write_text("x"), "is not a directory"),
])
def test_save_facts_target_is_checked_before_any_check_runs(cli, tmp_path, make, words):
    target = tmp_path / "adir"
    make(target)
    if not target.exists():
        target = tmp_path / "afile" / "f.json"
    marker = tmp_path / "ran"
    py = fake_python(tmp_path, f"open({str(marker)!r}, 'w').close()")
    r = cli(["verify", "--python", py, "--save-facts", str(target), "--force"])
    assert r.code == 2 and words in r.err, r.err
    assert "Traceback" not in r.err
    assert not marker.exists(), "the interpreter ran before the --save-facts target was checked"


def test_probe_output_into_missing_folders_and_never_a_device(cli, tmp_path):
    target = tmp_path / "x" / "y" / "m.toml"
    r = cli(["probe", "--no-docker", "-o", str(target)])
    assert r.code == 0 and target.read_text().startswith("# envcheck probe")
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    r = cli(["probe", "--no-docker", "-o", str(fifo), "--force"])
    assert r.code == 2 and "not a regular file" in r.err and fifo.is_fifo()


# -- workers that misbehave --------------------------------------------------------------------------
def test_a_child_left_holding_the_pipes_does_not_hang_verify(cli, monkeypatch, tmp_path, plain_python):
    pidfile = tmp_path / "child.pid"
    site = fake_torch(tmp_path, "import subprocess\n"
                                "p = subprocess.Popen(['sleep', '1000'])\n"
                                f"open({str(pidfile)!r}, 'w').write(str(p.pid))\n"
                                "__version__ = '2.13.0+cpu'\n")
    monkeypatch.setenv("PYTHONPATH", str(site))
    r = run_guarded(cli, ["verify", "--python", plain_python, "--timeout", "5", "--checks", "import_torch",
                          "--json"], limit=60)
    assert r.code == 1
    assert r.json()["checks"][0]["name"] == "import_torch"
    pid = int(pidfile.read_text())
    deadline = time.monotonic() + 5
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(pid), "the worker's child was left running"


def test_stream_kills_the_group_after_the_leader_exited():
    from envcheck.runner import start

    s = start(["sh", "-c", "sleep 1000 & echo $!; exit 0"])
    kind, line = s.readline(10)
    assert kind == s.LINE
    res = guarded(s.finish, 15)  # the sleeper holds stdout: finish kills it instead of waiting
    assert res.returncode == 0 and res.error is None
    time.sleep(0.2)
    assert not alive(int(line))


def test_run_does_not_wait_for_a_child_holding_its_pipes():
    from envcheck.runner import run

    res = guarded(lambda: run(["sh", "-c", "sleep 1000 & echo hi"], timeout=30), 15)
    assert res.stdout == "hi\n" and res.returncode == 0 and res.error is None


def test_an_early_done_line_does_not_restart_workers(cli, monkeypatch, tmp_path, plain_python):
    # the protocol stream is fd 3 in the worker (a dup of its original stdout)
    site = fake_torch(tmp_path, "import os\nos.write(3, b'{\"event\": \"done\"}\\n')\n__version__ = '2.13.0+cpu'\n")
    monkeypatch.setenv("PYTHONPATH", str(site))
    r = run_guarded(cli, ["verify", "--python", plain_python, "--timeout", "5", "--json"], limit=60)
    doc = r.json()
    assert doc["facts"]["collector"]["workers"] == 1
    imp = {c["name"]: c for c in doc["checks"]}["import_torch"]
    assert imp["status"] == "fail"
    assert "the worker said it was done before this check's result" in imp["detail"]


def test_a_worker_that_says_hello_and_done_forever_is_bounded(cli, tmp_path):
    py = fake_python(tmp_path, "import json\n"
                               "print(json.dumps({'event': 'hello', 'protocol': 1, 'python': {'version': '3.11.7'}}))\n"
                               "print(json.dumps({'event': 'done'}), flush=True)\n")
    r = run_guarded(cli, ["verify", "--python", py, "--timeout", "5", "--json"], limit=60)
    assert r.code == 1, r.err
    doc = r.json()
    assert doc["facts"]["collector"]["workers"] == 1
    assert "said it was done without running a check" in doc["facts"]["collector"]["error"]


def test_a_worker_that_prints_lines_without_end_times_out(cli, tmp_path):
    py = fake_python(tmp_path, "import json, sys\n"
                               "print(json.dumps({'event': 'hello', 'protocol': 1}), flush=True)\n"
                               "while True:\n    sys.stdout.write('not json\\n')\n")
    r = run_guarded(cli, ["verify", "--python", py, "--timeout", "2", "--checks", "matmul", "--json"], limit=60)
    assert r.code == 1, r.err
    imp = {c["name"]: c for c in r.json()["checks"]}["import_torch"]  # reported although not asked for
    assert imp["status"] == "fail" and "no result within 4 s" in imp["detail"]


@pytest.mark.parametrize("body, began", [
    ("print(1)", "'1'"),
    ("print([1, 2])", "'[1, 2]'"),
    ("print('{\"schema\": 1}')", "'{\"schema\": 1}'"),
    ("import os; os.write(1, bytes(range(256)) * 8)", "its output began"),
    ("import sys; sys.exit(3)", "exited with status 3"),
])
def test_an_interpreter_that_does_not_speak_the_protocol_is_bad_input(cli, tmp_path, body, began):
    py = fake_python(tmp_path, body)
    r = run_guarded(cli, ["verify", "--python", py, "--timeout", "5"], limit=60)
    assert r.code == 2, (r.code, r.err)
    assert "not a usable Python" in r.err and began in r.err, r.err
    assert "Traceback" not in r.err


def test_malformed_protocol_events_become_errors_not_tracebacks(cli, tmp_path):
    py = fake_python(tmp_path, "import json\n"
                               "def say(**e): print(json.dumps(e), flush=True)\n"
                               "say(event='hello', protocol=1, python={'version': 3}, platform=[], packages={'torch': 5})\n"
                               "say(event='start', check='import_torch')\n"
                               "say(event='result', check='import_torch', outcome='ok', seconds=0.1, data={'version': '2.13.0'})\n"
                               "say(event='start', check='matmul')\n"
                               "say(event='result', check='matmul', outcome='ok', seconds=0.1, data={'results': 5})\n"
                               "say(event='result', check=['x'], outcome='ok')\n"
                               "say(event='done')\n")
    r = run_guarded(cli, ["verify", "--python", py, "--checks", "matmul", "--json"], limit=60)
    assert r.code == 1, r.err
    doc = r.json()
    mm = {c["name"]: c for c in doc["checks"]}["matmul"]
    assert mm["status"] == "fail" and "matmul.data.results: expected a list" in mm["detail"]
    notes = doc["facts"]["collector"]["notes"]
    assert "the worker's python facts were left out (python.version: expected a Python version such as " \
           "'3.12.9', got an integer 3)" in notes
    assert "the worker's platform facts were left out (platform: expected a table, got a list)" in notes
    assert "python" not in doc["facts"] or doc["facts"]["python"] == {}  # dropped, not half-kept
    # what verify saved reads back: the facts are valid as a whole
    from envcheck.verify.facts import facts_from_dict

    facts_from_dict(doc["facts"])


# -- --facts: the whole shape is checked --------------------------------------------------------------
def _paths(node, pre=()):
    yield pre
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _paths(v, pre + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node[:2]):
            yield from _paths(v, pre + (i,))


MUTATIONS = ["x", 1, -1, None, [], {}, True, 1.5, [None], ["x"], {"a": 1}, "2.x", 10 ** 30, float("nan"),
             [1, 2], ["sm_50", None], [12]]


def test_every_single_field_mutation_of_the_cases_is_data_error_or_a_report(matrix):
    """The tester's experiment: every field of the 7 case facts replaced by each value above. Each
    result is either a DataFileError naming a key, or a report — never another exception."""
    from envcheck.verify.diagnose import diagnose
    from envcheck.verify.facts import facts_from_dict

    rejected = accepted = 0
    for case in sorted(CASES.glob("*.json")):
        doc0 = json.loads(case.read_text())
        for path in list(_paths(doc0)):
            if not path:
                continue
            for value in MUTATIONS:
                doc = copy.deepcopy(doc0)
                node = doc
                for k in path[:-1]:
                    node = node[k]
                node[path[-1]] = value
                try:
                    facts = facts_from_dict(doc, case)
                except DataFileError as exc:
                    assert exc.key, (path, value, str(exc))
                    rejected += 1
                    continue
                checks = diagnose(facts, None, None, matrix)
                assert len(checks) == len(CHECKS)
                accepted += 1
    assert rejected > 1000 and accepted > 500  # both sides exercised


@pytest.mark.parametrize("field, value, key, words", [
    (("runs", "import_torch", "seconds"), "x", "runs.import_torch.seconds", "a number of seconds"),
    (("platform", "glibc"), "2.x", "platform.glibc", "expected a version like '12.8' or '570.124.06', got a string \"2.x\""),
    (("runs", "cuda_build", "data", "arch_list"), ["sm_50", None], "runs.cuda_build.data.arch_list[1]",
     "got null"),
    (("packages", "torch", 0, "version"), 1, "packages.torch[0].version", "expected a string"),
    (("runs", "cuda_build", "data", "devices", 0, "capability"), [12], "capability", "[major, minor]"),
    (("runs", "cuda_build", "data", "devices"), "x", "runs.cuda_build.data.devices", "expected a list"),
    (("python", "version"), 3, "python.version", "a Python version"),
])
def test_a_wrong_field_is_named(cli, tmp_path, field, value, key, words):
    doc = json.loads((CASES / "C01.json").read_text())
    node = doc
    for k in field[:-1]:
        node = node[k]
    node[field[-1]] = value
    f = tmp_path / "facts.json"
    f.write_text(json.dumps(doc))
    for cmd in (["verify", "--facts", str(f)], ["explain", "--facts", str(f), "no kernel image is available"]):
        r = cli(cmd)
        assert r.code == 2, (cmd, r.err)
        assert f"{f}: " in r.err and key in r.err and words in r.err, r.err


@pytest.mark.parametrize("data, words", [
    (b'{"schema": 1, "runs": {}, "env": {"PATH": "\xff"}}', "not UTF-8"),
    (b"[" * 100000, "nested too deeply"),
    (b'{"schema": 1, "runs": {}, "x": ' + b"1" * 5000 + b"}", "invalid JSON"),
])
def test_unreadable_facts_files(cli, tmp_path, data, words):
    f = tmp_path / "facts.json"
    f.write_bytes(data)
    for cmd in (["verify", "--facts", str(f)], ["explain", "--facts", str(f), "x"]):
        r = cli(cmd)
        assert r.code == 2 and words in r.err, (cmd, r.err)


def test_a_lock_nested_too_deeply(cli, tmp_path):
    lock = tmp_path / "envcheck.lock.toml"
    lock.write_text("a = " + "[" * 100000)
    r = cli(["verify", "--facts", str(CASES / "C01.json"), "--lock", str(lock)])
    assert r.code == 2 and "nested too deeply" in r.err


# -- flags ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("value", ["inf", "1e309", "99999999999999999999", "nan", "0", "-1"])
def test_timeouts_that_are_not_a_finite_positive_number(cli, value):
    for cmd in (["verify", "--facts", str(CASES / "C01.json")], ["probe", "--no-docker"]):
        r = cli(cmd + ["--timeout", value])
        assert r.code == 2 and "--timeout" in r.err and "expected a number of seconds" in r.err, (cmd, r.err)


def test_a_tiny_timeout_is_called_too_small(cli):
    r = run_guarded(cli, ["verify", "--python", sys.executable, "--timeout", "0.001"], limit=60)
    assert r.code == 2 and "--timeout 0.001: too small" in r.err, r.err


def test_a_timeout_below_a_second_in_saved_facts_blames_the_budget(matrix):
    from envcheck.verify.diagnose import diagnose
    from envcheck.verify.facts import facts_from_dict

    facts = facts_from_dict({"schema": 1, "runs": {"matmul": {"outcome": "timeout", "timeout": 0.002}}})
    (c,) = diagnose(facts, None, None, matrix, ["matmul"])
    assert c.status == "fail" and "too small to tell a slow check from a hung one" in c.fix


@pytest.mark.parametrize("args, words", [
    (["--python", ""], "--python: an empty path"),
    (["--checks", ""], "--checks '': no check named"),
    (["--skip", " , "], "--skip ' , ': no check named"),
])
def test_empty_values_are_bad_input(cli, args, words):
    r = cli(["verify"] + args)
    assert r.code == 2 and words in r.err, r.err


def test_interpreters_that_are_not_python_are_bad_input(cli):
    r = run_guarded(cli, ["verify", "--python", "/bin/true"], limit=60)
    assert r.code == 2 and "--python /bin/true: not a usable Python" in r.err


def test_python_2_is_bad_input(cli):
    import glob
    import shutil

    py2 = shutil.which("python2.7") or next(iter(sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/2.7*/bin/python")))), None)
    if not py2:
        pytest.skip("no Python 2.7 here")
    r = run_guarded(cli, ["verify", "--python", py2], limit=60)
    assert r.code == 2 and "not a usable Python (≥ 3.7)" in r.err, r.err


def test_a_broken_interpreter_link_is_named(cli, tmp_path):
    env = tmp_path / "venv"
    (env / "bin").mkdir(parents=True)
    (env / "bin" / "python").symlink_to("/nonexistent/python3.9")
    r = cli(["verify", "--python", str(env)])
    assert r.code == 2 and "bin/python is a broken link (to /nonexistent/python3.9)" in r.err
    r = cli(["verify", "--python", str(env / "bin" / "python")])
    assert r.code == 2 and "a broken link" in r.err


# -- output that cannot be written, terminals without UTF-8 -------------------------------------------
def _envcheck(args, **kw):
    env = {**os.environ, "PYTHONPATH": str(ROOT), **kw.pop("env", {})}
    return subprocess.run([sys.executable, "-m", "envcheck"] + args, env=env, capture_output=kw.pop("capture", True),
                          text=True, timeout=120, **kw)


@pytest.mark.parametrize("args", [["verify", "--facts", str(CASES / "C01.json")],
                                  ["verify", "--facts", str(CASES / "C01.json"), "--json"],
                                  ["probe", "--no-docker"]])
def test_a_full_disk_is_a_message_not_a_traceback(args):
    with open("/dev/full", "w") as full:
        p = subprocess.run([sys.executable, "-m", "envcheck"] + args, stdout=full, stderr=subprocess.PIPE, text=True,
                           env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=120)
    assert p.returncode == 1
    assert p.stderr == "envcheck: error: cannot write the output: No space left on device\n"


@pytest.mark.parametrize("env", [{"PYTHONIOENCODING": "ascii"}, {"LC_ALL": "C", "PYTHONCOERCECLOCALE": "0",
                                                                 "PYTHONUTF8": "0", "PYTHONIOENCODING": ""}])
def test_an_ascii_terminal_gets_escapes(env):
    p = _envcheck(["verify", "--facts", str(CASES / "C01.json")], env=env)
    assert p.returncode == 1, p.stderr
    assert "Traceback" not in p.stderr
    assert "\\u2014" in p.stdout  # "—", escaped


def test_a_closed_stdout_keeps_the_exit_code():
    p = subprocess.run([sys.executable, "-m", "envcheck", "verify", "--facts", str(CASES / "C01.json")],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=120,
                       env={**os.environ, "PYTHONPATH": str(ROOT)}, preexec_fn=lambda: os.close(1))
    assert p.returncode == 1 and "Traceback" not in p.stderr


# -- explain: long pastes, rules that match what people paste -----------------------------------------
def in_subprocess(code: str, stdin: str = "", limit: float = 60.0) -> subprocess.CompletedProcess:
    """Run Python ``code`` in a fresh process, killed after ``limit`` seconds (a regex holds the GIL, so
    a thread could not stop it; a process can be)."""
    try:
        return subprocess.run([sys.executable, "-c", code], input=stdin, capture_output=True, text=True,
                              timeout=limit, env={**os.environ, "PYTHONPATH": str(ROOT)})
    except subprocess.TimeoutExpired:
        pytest.fail(f"did not finish within {limit} s: time that grows faster than the input")


def test_a_five_megabyte_line_is_read_in_linear_time():
    import random
    import string

    rnd = random.Random(7)
    noise = "".join(rnd.choices(string.ascii_letters + " ./:_-'", k=5_000_000))
    # the message after the long line: every start in that line was once tried to its end
    text = noise + "\nUserWarning: NVIDIA GeForce RTX 5090 D with CUDA capability sm_120 is not compatible with the " \
                   "current PyTorch installation."
    p = in_subprocess("import sys; from envcheck.cli import main; sys.exit(main(['explain', '--no-probe', '--json', '-']))",
                      stdin=text)
    assert p.returncode == 0, p.stderr
    assert [f["rule"] for f in json.loads(p.stdout)["findings"]] == ["arch-not-compatible"]


def test_no_rule_is_quadratic_in_a_long_line():
    """Each rule against 1 MB lines built from the words of its own example, repeated, and from text
    every rule meets (one letter, a path, words with spaces): the old patterns took minutes on these
    (``\\S*(torchvision|torchaudio)\\S*\\.so``, ``[^\\n]*? with CUDA capability``, an unanchored
    ``[^\\s:'"]{1,300}?\\.so: undefined symbol`` that tried 300 characters from every position of a
    line without spaces). Every word of every example against every rule grew with the number of
    families to minutes of linear work; a rule's own words are what it can backtrack on."""
    p = in_subprocess("""
import re
from envcheck.matrix import load_matrix
from envcheck.verify.rules import load_rules

rules = load_rules(load_matrix())
common = ["a", "/usr/lib/", "with CUDA capability ", "error: ", "no such file "]
for rule in rules:
    for w in sorted(set(re.findall(r"[A-Za-z_]{4,}", rule.example))) + common:
        text = (w * (1_000_000 // len(w) + 1))[:1_000_000] + "\\n"
        re.search(rule.pattern, text)
print("scanned", len(rules))
""", limit=120)
    assert p.returncode == 0 and p.stdout.startswith("scanned"), p.stderr


ONE_LINERS = [
    ("CUDA capability sm_120 is not compatible with the current PyTorch installation", "arch-not-compatible"),
    ("no kernel image is available", "no-kernel-image"),
    ("No module named torch._C", "torch-c-missing"),
    ("ModuleNotFoundError: No module named 'torch._C'", "torch-c-missing"),
    ("No module named 'torchvision'", "companion-not-installed"),
    ("ImportError: libtorch_cpu.so: cannot open shared object file", "torch-lib-missing"),
    ("/tmp/tmpn8c04nql/main.c:4:10: fatal error: Python.h: No such file or directory", "python-headers-missing"),
]


@pytest.mark.parametrize("text, rule", ONE_LINERS, ids=[r for _, r in ONE_LINERS])
def test_one_line_forms_are_recognised(cli, text, rule):
    r = cli(["explain", "--no-probe", "--json", text])
    assert r.code == 0, r.err
    (f,) = r.json()["findings"]
    assert f["rule"] == rule
    assert f["source"] and all(s.startswith(("https://", "pytorch/")) for s in f["source"])


def test_python_headers_fix_names_the_package_for_this_python(cli, tmp_path):
    doc = json.loads((CASES / "C01.json").read_text())  # Python 3.12.9
    f = tmp_path / "facts.json"
    f.write_text(json.dumps(doc))
    r = cli(["explain", "--json", "--facts", str(f), "fatal error: Python.h: No such file or directory"])
    (finding,) = r.json()["findings"]
    assert "apt-get install -y python3.12-dev" in finding["fix"] and "python3.12-devel" in finding["fix"]


def test_a_missing_companion_gets_the_one_paired_with_the_installed_build(cli):
    r = cli(["explain", "--json", "--facts", str(CASES / "C01.json"), "ModuleNotFoundError: No module named 'torchvision'"])
    (f,) = r.json()["findings"]
    assert f["rule"] == "companion-not-installed"
    assert "pip install torchvision==0.21.0+cu126 --index-url https://download.pytorch.org/whl/cu126" in f["fix"]
    assert "uninstall" not in f["fix"]


def test_the_gpu_name_loses_its_prefix(cli):
    r = cli(["explain", "--no-probe", "--json", "UserWarning: NVIDIA GeForce RTX 5090 D with CUDA capability "
             "sm_120 is not compatible with the current PyTorch installation."])
    (f,) = r.json()["findings"]
    assert "sm_120 (NVIDIA GeForce RTX 5090 D):" in f["cause"] and "UserWarning" not in f["cause"]


def test_root_causes_come_first(cli):
    text = ("ImportError: /lib64/libc.so.6: version `GLIBC_2.28' not found (required by libtorch_cpu.so) "
            "UserWarning: NVIDIA GeForce RTX 5090 D with CUDA capability sm_120 is not compatible with the current "
            "PyTorch installation. RuntimeError: CUDA error: no kernel image is available for execution on the "
            "device. AssertionError: Torch not compiled with CUDA enabled")
    r = cli(["explain", "--no-probe", "--json", text])
    rules = [f["rule"] for f in r.json()["findings"]]
    assert rules[0] == "glibc-too-old" and set(rules) >= {"arch-not-compatible", "no-kernel-image", "cpu-only-build"}


def test_with_the_driver_unknown_the_fix_is_plans_pick_and_lists_drivers(cli):
    # #10: one answer — with the driver unknown the fix is what `plan` picks for the GPU (not the oldest CUDA
    # that carries the arch), and it says which builds need which driver
    r = cli(["explain", "--no-probe", "--json", "UserWarning: NVIDIA GeForce RTX 5090 D with CUDA capability "
             "sm_120 is not compatible with the current PyTorch installation."])
    (f,) = r.json()["findings"]
    fix = f["fix"]
    command = next(p for p in fix.split("`") if "pip install" in p)
    chosen = cli(["plan", "--gpu", "sm_120", "--json"]).json()["chosen"]
    assert command.endswith(" ".join(chosen["pip"])) or all(p in command for p in chosen["pip"]), (fix, chosen)
    assert "driver is not known here" in fix and f"{chosen['variant']} needs ≥" in fix


def test_a_driver_in_the_text_is_used_for_the_arch_fix(cli):
    text = ("NVIDIA GeForce RTX 5090 D with CUDA capability sm_120 is not compatible with the current PyTorch "
            "installation. The NVIDIA driver on your system is too old (found version 12080).")
    r = cli(["explain", "--no-probe", "--json", text])
    found = {f["rule"]: f for f in r.json()["findings"]}
    for rule in ("arch-not-compatible", "driver-too-old"):
        # the build each fix installs runs on this CUDA 12.8 driver (driver-too-old may also name the
        # driver that plan's newest build needs, as the other way out: an upgrade, not an install)
        command = next(p for p in found[rule]["fix"].split("`") if "pip install" in p)
        assert "cu13" not in command and "+cu128" in command, (rule, found[rule]["fix"])


@pytest.mark.parametrize("text, words", [
    ("The NVIDIA driver on your system is too old (found version 0).", '"found version 0" is not a CUDA version'),
    ("The NVIDIA driver on your system is too old (found version 99999999999999999999999).",
     "is not a CUDA version code"),
    ("The NVIDIA driver on your system is too old (found version 12345).", "is not a CUDA version code"),
    ("RuntimeError: Dynamo is not supported on Python 2.7+", "no torch release on record runs on Python 2.7"),
    ("CUDA capability sm_0 is not compatible with the current PyTorch installation", "'sm_0' is no NVIDIA architecture"),
])
def test_implausible_values_are_called_garbled(cli, text, words):
    r = cli(["explain", "--no-probe", "--json", text])
    (f,) = r.json()["findings"]
    assert f["cause"].startswith("The text looks garbled or edited:") and words in f["cause"], f["cause"]
    # no conclusion is not "explained" (newcomer3 #13: it exited 0, like an explained message)
    assert r.code == 1 and f["garbled"] is True
    assert cli(["explain", "--no-probe", text]).code == 1
    assert "Copy the complete message again" in f["fix"]
    assert "up to 0.0" not in f["cause"] and "needs torch" not in f["cause"]


def test_no_fix_pins_a_torchaudio_of_another_release_line(matrix):
    """torchaudio follows torch's version from 2.0 on; a pin from another line (2.11.1 beside 2.15.0)
    would not install as a pair — the matrix leaves such companions out (commit 029b08a)."""
    from envcheck.verify.facts import public_version

    for r in matrix.releases:
        ta = public_version(r.torchaudio)
        if ta and int(r.version.split(".")[0]) >= 2:
            assert ta.split(".")[:2] == r.version.split(".")[:2], (r.version, r.torchaudio)


# -- verify: the driver check when the build was not read ---------------------------------------------
@pytest.mark.parametrize("case, checks, words", [
    # torch does not import: that failure is the verdict, and the driver says why it is unknown
    ("C06", "driver", "unknown: the build was not read (torch does not import; see import_torch)"),
    # torch imports but cuda_build was not run: `--checks driver` alone has nothing to judge (exit 2,
    # below); with import_torch asked too, the driver says why it is unknown
    ("C07", "import_torch,driver", "the NVIDIA driver is unknown (it is read with the build, and cuda_build did not run)"),
    ("C14", "import_torch,driver", "the NVIDIA driver is unknown"),
])
def test_driver_says_unknown_when_the_build_was_not_read(cli, case, checks, words):
    r = cli(["verify", "--facts", str(CASES / f"{case}.json"), "--json", "--checks", checks])
    c = {c["name"]: c for c in r.json()["checks"]}["driver"]
    assert c["status"] == "skip" and words in c["detail"], c["detail"]
    assert "CPU-only" not in c["detail"] and "not a CUDA build" not in c["detail"]


@pytest.mark.parametrize("case", ["C07", "C14"])
def test_facts_without_the_build_have_nothing_to_judge_for_the_driver_alone(cli, case):
    """newcomer4 F3: facts that hold no result the asked checks read are bad input, not a pass."""
    r = cli(["verify", "--facts", str(CASES / f"{case}.json"), "--checks", "driver"])
    assert r.code == 2 and "nothing to judge" in r.err, (r.code, r.err)


def test_a_deleted_torch_library_is_explained(cli, monkeypatch, tmp_path, torch_venv):
    """A real torch 2.13.0 whose torch/lib lacks libtorch_cpu.so: a copy of the package made of links to
    the real files, shadowing the venv's torch on PYTHONPATH."""
    real = Path(subprocess.run([str(torch_venv), "-c", "import torch, os; print(os.path.dirname(torch.__file__))"],
                               capture_output=True, text=True, check=True).stdout.strip())
    farm = tmp_path / "site" / "torch"
    (farm / "lib").mkdir(parents=True)
    for entry in real.iterdir():
        if entry.name != "lib":
            (farm / entry.name).symlink_to(entry)
    for entry in (real / "lib").iterdir():
        if entry.name != "libtorch_cpu.so":
            (farm / "lib" / entry.name).symlink_to(entry)
    monkeypatch.setenv("PYTHONPATH", str(farm.parent))
    r = run_guarded(cli, ["verify", "--python", str(torch_venv), "--checks", "import_torch", "--json"])
    assert r.code == 1, r.err
    (c,) = r.json()["checks"]
    assert c["status"] == "fail" and c["rule"] == "torch-lib-missing"
    assert "libtorch_cpu.so: cannot open shared object file" in c["detail"]
    assert "--force-reinstall --index-url https://download.pytorch.org/whl/cpu torch==2.13.0+cpu" in c["fix"]  # plan's install line


# -- section 3: the small things ----------------------------------------------------------------------
def test_exit_status_128_plus_a_signal_is_named():
    from envcheck.runner import run

    res = run(["sh", "-c", "exit 139"])
    assert res.error == "sh exited with status 139 (128+11: a child killed by SIGSEGV, as a shell or container reports it)"


def test_a_keyboard_interrupt_inside_the_import_is_not_blamed_on_the_user(cli, monkeypatch, tmp_path, plain_python):
    site = fake_torch(tmp_path, "raise KeyboardInterrupt\n")
    monkeypatch.setenv("PYTHONPATH", str(site))
    r = run_guarded(cli, ["verify", "--python", plain_python, "--timeout", "10", "--json"], limit=60)
    imp = {c["name"]: c for c in r.json()["checks"]}["import_torch"]
    assert imp["status"] == "fail"
    assert imp["detail"].startswith("KeyboardInterrupt raised inside the check — by the code under test, not by you")
    assert "SIGINT" not in imp["detail"]


def test_a_torch_without_compile_is_not_said_to_predate_it(cli, monkeypatch, plain_python):
    monkeypatch.setenv("PYTHONPATH", str(STANDIN))  # the stand-in says it is 2.13.0+cpu and has no torch.compile
    r = run_guarded(cli, ["verify", "--python", plain_python, "--timeout", "10", "--checks", "torch_compile",
                          "--json"], limit=60)
    (c,) = r.json()["checks"]
    assert c["status"] == "fail"
    assert "which every torch >= 2.0 has: this torch module is incomplete or not the real one" in c["detail"]
    assert "it arrived in torch 2.0" not in c["detail"]
