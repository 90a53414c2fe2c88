"""Injection: a value from outside must never become a line of its own in any output.

Two layers, each tested on its own with generated payloads (a name, a line break of any kind
pip/TOML/YAML/Docker know, a foreign line: an index option, a RUN, a TOML table, a YAML key):

1. the edge — machine, lock and facts files and flags holding such a value are refused (exit 2,
   one line, no traceback);
2. the escaping — even a value that got past the edge (placed in a Machine directly) leaves each
   rendered file, read back by its real parser (pip's requirements parser, tomllib, PyYAML, a
   Dockerfile read as Docker reads it, and `docker build` itself), with no foreign line.
"""

from __future__ import annotations

import dataclasses
import json
import re
import shlex
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest
import yaml
from hypothesis import given, strategies as st

from tests.hostile.conftest import hostile

BREAKS = ["\n", "\r", "\r\n", "\v", "\f", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029", "\x1b[2K\r"]
FOREIGN = [
    "--extra-index-url http://evil.example/simple #",
    "-i http://evil.example/simple",
    "RUN touch /tmp/pwned",
    "FROM evil.example/pwned",
    "[evil]",
    'evil = "pwned"',
    "evil: pwned",
    "- pwned-package",
    "ALL CHECKS PASSED",
]
MARKS = ("evil", "pwned")

payloads = st.builds(
    lambda a, br, inj, br2, b: a + br + inj + br2 + b,
    st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=6),
    st.sampled_from(BREAKS), st.sampled_from(FOREIGN), st.sampled_from(BREAKS + [""]),
    st.text(max_size=6),
)

#: real processes (envcheck, interpreters, docker, servers' clients) run here on purpose
pytestmark = pytest.mark.subprocess


# -- 1. the edge ---------------------------------------------------------------------------------
def _toml_str(s: str) -> str:
    return json.dumps(s)  # a JSON string is a TOML basic string (escapes every control character)


@hostile(40)
@given(payload=payloads, where=st.sampled_from(["distro_name", "distro", "gpu.name", "gpu.uuid", "how"]))
def test_machine_file_with_a_foreign_line_is_refused(cli, tmp_path_factory, tally, payload, where):
    d = tmp_path_factory.mktemp("m")
    gpu = {"vendor": "nvidia", "name": "NVIDIA A100", "arch": "sm_80"}
    machine = {"os": "linux", "arch": "x86_64"}
    if where.startswith("gpu."):
        gpu[where[4:]] = payload
    elif where == "how":
        machine["how"] = {"glibc": payload}
    else:
        machine[where] = payload
    text = "schema = 1\n[machine]\n" + "".join(f"{k} = {_toml_str(v)}\n" for k, v in machine.items() if k != "how")
    if "how" in machine:
        text += f"[machine.how]\nglibc = {_toml_str(machine['how']['glibc'])}\n"
    text += "[[machine.gpus]]\n" + "".join(f"{k} = {_toml_str(v)}\n" for k, v in gpu.items())
    f = d / "machine.toml"
    f.write_text(text, encoding="utf-8")
    r = cli(["plan", "--machine", str(f), "--format", "pip"])
    tally["vectors.injection.edge"] += 1
    assert r.code == 2, r
    assert "Traceback" not in r.err and r.err.count("\n") == 1, r.err
    assert not any(m in r.out for m in MARKS)


@hostile(20)
@given(payload=payloads)
def test_lock_with_a_foreign_value_is_refused(cli, tmp_path_factory, tally, payload):
    d = tmp_path_factory.mktemp("l")
    r = cli(["plan", "--gpu", "A100", "--format", "lock"])
    assert r.code == 0, r.err
    doc = tomllib.loads(r.out)
    which = len(payload) % 3
    if which == 0:
        doc["build"]["index_url"] = "https://ok.example/whl" + payload
    elif which == 1:
        doc["machine"]["distro_name"] = payload
    else:
        doc["pip"]["lines"].append(payload)
    import tomli_w

    f = d / "envcheck.lock.toml"
    f.write_text(tomli_w.dumps(doc), encoding="utf-8")
    r = cli(["verify", "--lock", str(f), "--facts", str(_facts_file(d))])
    tally["vectors.injection.edge"] += 1
    assert r.code == 2, r
    assert "Traceback" not in r.err and r.err.count("\n") == 1, r.err


@hostile(30)
@given(url=st.builds(lambda a, m, b: a + m + "x" + b, st.sampled_from(["https://m.example/whl", "http://10.0.0.1/w"]),
                     st.sampled_from(list("$`;|&<>(){}*?!^\"'\\ \t\n#") + ["$(id)", "`id`", "\x00", "é"]),
                     st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=5)))
def test_mirror_with_shell_metacharacters_is_refused(cli, tally, url):
    r = cli(["plan", "--gpu", "A100", "--mirror", url, "--format", "pip,docker"])
    tally["vectors.injection.edge"] += 1
    assert r.code == 2 and r.out == "", r
    assert "Traceback" not in r.err and r.err.count("\n") == 1


@pytest.mark.parametrize("image", ["python:3.12\nRUN touch /tmp/pwned", "python:3.12 AS x", "Python:3", "a b",
                                   "python:3.12;id", "-evil", "python@sha256:xyz", "ghcr.io/" + "a" * 300])
def test_base_image_outside_the_oci_grammar_is_refused(image):
    from envcheck.edge import check_image
    from envcheck.errors import UsageError

    with pytest.raises(UsageError):
        check_image(image)


@pytest.mark.parametrize("image", ["python:3.12-slim-bookworm", "nvidia/cuda:12.8.1-cudnn-runtime-ubuntu24.04",
                                   "localhost:5000/team/img:tag", "ghcr.io/o/i@sha256:" + "a" * 64,
                                   "rocm/pytorch:rocm6.4_ubuntu24.04_py3.12", "envcheck-base:bookworm"])
def test_real_image_references_pass(image):
    from envcheck.edge import check_image

    assert check_image(image) == image


def test_credentials_never_reach_a_file_or_the_output(cli, tmp_path, tally):
    out = tmp_path / "out"
    r = cli(["plan", "--gpu", "A100", "--mirror", "https://alice:s3cr3t@mirror.example/whl", "-o", str(out),
             "--format", "all"])
    tally["vectors.injection.credentials"] += 1
    assert r.code == 0, r.err
    texts = [p.read_text() for p in out.iterdir()] + [r.out, r.err] + [p.name for p in out.iterdir()]
    assert not any("s3cr3t" in t or "alice" in t for t in texts)
    assert "mirror.example/whl" in (out / "requirements.txt").read_text()
    assert "netrc" in r.err and "PIP_INDEX_URL" in r.err
    r = cli(["plan", "--gpu", "A100", "--mirror", "https://alice:s3cr3t@mirror.example/whl", "--json"])
    assert "s3cr3t" not in r.out + r.err


# -- 2. the escaping ----------------------------------------------------------------------------
def _evil_plan(matrix, payload: str, index_url: str = ""):
    """A plan whose machine names carry ``payload`` (placed directly: past the edge)."""
    from envcheck.machine.describe import apply_flags
    from envcheck.resolve import Request, resolve
    from envcheck.resolve.plan import make_plan

    m = apply_flags(matrix, None, gpus=["A100"], driver="580.65.06", glibc="2.35")
    m.distro_name = payload
    m.gpus[0].name = payload
    m.how["glibc"] = payload
    plan = make_plan(resolve(m, Request(), matrix), matrix)
    if index_url:
        plan = dataclasses.replace(plan, index_url=index_url)
    return plan


def _requirements_ok(text: str, plan) -> None:
    import pip_requirements_parser as rp

    f = Path(_tmp()) / "requirements.txt"
    f.write_text(text, encoding="utf-8")
    parsed = rp.RequirementsFile.from_file(str(f))
    assert not parsed.invalid_lines, parsed.invalid_lines
    assert [o.options for o in parsed.options] == [{"index_url": plan.index_url}]
    assert {r.name for r in parsed.requirements} == set(plan.pins) | set(plan.requires)  # + the plan's NumPy


def _toml_ok(text: str, top: set) -> dict:
    doc = tomllib.loads(text)
    assert set(doc) <= top, set(doc) - top

    def keys(v, path=""):
        if isinstance(v, dict):
            for k, x in v.items():
                assert not any(m in k for m in MARKS), path + k
                keys(x, path + k + ".")
        elif isinstance(v, list):
            for x in v:
                keys(x, path)
    keys(doc)
    return doc


def _yaml_ok(text: str) -> None:
    doc = yaml.safe_load(text)
    assert set(doc) <= {"name", "channels", "dependencies"}, doc.keys()
    flat = json.dumps(doc["dependencies"]) + json.dumps(doc.get("channels"))
    assert not any(m in flat for m in MARKS)


def docker_instructions(text: str) -> list:
    """The instructions of a Dockerfile as Docker's parser splits them: ``\\n`` and ``\\r\\n`` end
    lines, ``#`` lines are comments (also inside a continuation), ``\\`` continues a line."""
    out, cur = [], ""
    for line in re.split(r"\r?\n", text):
        if not cur and (not line.strip() or line.lstrip().startswith("#")):
            continue
        if cur and line.lstrip().startswith("#"):
            continue
        cur += line
        if cur.endswith("\\"):
            cur = cur[:-1]
            continue
        out.append(cur.strip())
        cur = ""
    if cur:
        out.append(cur.strip())
    return out


def _tmp() -> str:
    import tempfile

    return tempfile.mkdtemp(prefix="envcheck-hostile-")


@hostile(40)
@given(payload=payloads)
def test_rendered_files_carry_no_foreign_line(matrix, tally, payload):
    from envcheck.render.files import render_dockerfile, render_environment, render_lock, render_requirements
    from envcheck.render.uvproject import render_uv

    plan = _evil_plan(matrix, payload)
    base = _evil_plan(matrix, "NVIDIA A100")
    tally["vectors.injection.escape"] += 5
    _requirements_ok(render_requirements(plan), plan)
    _yaml_ok(render_environment(plan))
    lock = _toml_ok(render_lock(plan), set(tomllib.loads(render_lock(base))))  # the keys a benign lock has
    assert lock["machine"]["distro_name"] == payload  # the value itself survives, as data
    _toml_ok(render_uv(plan), {"project", "tool"})
    got = docker_instructions(render_dockerfile(plan))
    want = docker_instructions(render_dockerfile(base))
    # the lock the image carries holds the names as data: one RUN whose shell words are printf's
    # arguments, which write back exactly the lock (nothing of it runs)
    lock_run = [i for i in got if i.startswith("RUN mkdir -p /opt/envcheck && printf")]
    assert len(lock_run) == 1
    words = shlex.split(lock_run[0][len("RUN "):])
    assert words[:6] == ["mkdir", "-p", "/opt/envcheck", "&&", "printf", "%s\\n"] and words[-2] == ">"
    assert "\n".join(words[6:-2]) + "\n" == render_lock(plan, generated="with this Dockerfile")
    assert [i for i in got if i not in lock_run] == [i for i in want if not i.startswith("RUN mkdir -p /opt/envcheck")]
    assert not any(m in i for i in got if i not in lock_run for m in MARKS)


@hostile(15)
@given(payload=payloads)
def test_lock_written_with_a_hostile_name_reads_back(matrix, tmp_path_factory, tally, payload):
    """The lock envcheck wrote stays readable TOML whatever the names (the header is a comment)."""
    from envcheck.render.files import render_lock

    text = render_lock(_evil_plan(matrix, payload))
    tally["vectors.injection.escape"] += 1
    assert tomllib.loads(text)["build"]["torch"]


@hostile(20)
@given(url=st.builds(lambda m: "https://m.example/whl/" + m,
                     st.sampled_from(["$(touch /tmp/pwned)", "`touch /tmp/pwned`", "x;touch /tmp/pwned", "a b",
                                      "x' && touch /tmp/pwned && '"])))
def test_an_index_url_past_the_edge_is_one_shell_word(matrix, tally, url):
    import shlex

    from envcheck.render.files import render_dockerfile

    plan = _evil_plan(matrix, "A100", index_url=url)
    run = next(i for i in docker_instructions(render_dockerfile(plan)) if "pip install" in i)
    words = shlex.split(run[len("RUN "):])
    tally["vectors.injection.escape"] += 1
    assert url in words and words[words.index(url) - 1] == "--index-url"


def _facts_file(d: Path) -> Path:
    src = Path(__file__).resolve().parents[1] / "fixtures" / "verify" / "cases" / "C01.json"
    f = d / "facts.json"
    shutil.copy(src, f)
    return f


@hostile(20)
@given(payload=st.builds(lambda a, b: a + b, st.sampled_from(["\x1b[2J\x1b[H", "\x1b]0;owned\x07", "\x9b2J", "\r\x1b[2K",
                                                               "\x1b[32m", "\x08\x08\x08", "\u202e"]),
                         st.sampled_from(["ALL CHECKS PASSED", "pass  cuda", "\x1b[0m"])))
def test_facts_from_a_file_print_no_escape_sequence(cli, tmp_path_factory, tally, payload):
    d = tmp_path_factory.mktemp("f")
    f = _facts_file(d)
    doc = json.loads(f.read_text())
    doc.setdefault("python", {})["executable"] = "/usr/bin/python3" + payload
    doc.setdefault("env", {})["CUDA_VISIBLE_DEVICES"] = payload
    f.write_text(json.dumps(doc))
    tally["vectors.injection.terminal"] += 2
    for args in (["verify", "--facts", str(f)], ["explain", "--facts", str(f), "--no-probe",
                                                  "CUDA error: no kernel image is available"]):
        r = cli(args)
        assert "Traceback" not in r.err
        for stream in (r.out, r.err):
            assert not re.search(r"[\x1b\x9b\x07\x08\u202e]", stream), (args, stream)


def test_docker_build_runs_no_foreign_line(matrix, tmp_path, tally):
    """The real parser: `docker build` on the local base image builds the rendered Dockerfile's
    comments, FROM, ENV and LABEL lines and an install line turned into `echo` — with hostile names
    and an index URL carrying a command substitution — and nothing foreign runs."""
    if shutil.which("docker") is None or subprocess.run(["docker", "image", "inspect", "envcheck-base:bookworm"],
                                                        capture_output=True, timeout=30).returncode != 0:
        pytest.skip("needs a Docker engine and the local base image (`envcheck docker base`)")
    from envcheck.render.files import render_dockerfile

    bad = [p for br in ("\n", "\r\n", "\x85", "\u2028", "\x1c") for p in (f"X{br}RUN touch /tmp/pwned",
                                                                         f"X{br}FROM busybox")]
    for i, payload in enumerate(bad):
        plan = _evil_plan(matrix, payload, index_url="https://m.example/whl/$(touch /tmp/pwned)")
        text = render_dockerfile(plan)
        text = re.sub(r"(?m)^FROM .*$", "FROM envcheck-base:bookworm", text)
        text = re.sub(r"(?ms)^RUN command -v gcc.*?\}\n", "", text)  # needs a package mirror
        text = text.replace("RUN python -m pip install", "RUN echo").replace("# syntax=docker/dockerfile:1\n", "")
        text = re.sub(r"(?m)^RUN cd /opt/envcheck \\\n && .*import torch.*$", "", text)  # verify needs torch
        text += "\nRUN test ! -e /tmp/pwned\n"
        ctx = tmp_path / f"ctx{i}"
        ctx.mkdir()
        (ctx / "Dockerfile").write_text(text, encoding="utf-8")
        tag = f"envcheck-hostile-injection:{i}"
        r = subprocess.run(["docker", "build", "-q", "--network=none", "-t", tag, str(ctx)],
                           capture_output=True, text=True, timeout=300)
        tally["vectors.injection.docker_build"] += 1
        assert r.returncode == 0, r.stderr[-2000:]
        hist = subprocess.run(["docker", "history", "--no-trunc", "--format", "{{.CreatedBy}}", tag],
                              capture_output=True, text=True, timeout=60).stdout
        subprocess.run(["docker", "rmi", "-f", tag], capture_output=True, timeout=60)
        # the layer writing the lock holds the names as printf's data (the last RUN proved nothing ran)
        hist = "\n".join(h for h in hist.split("\n") if "mkdir -p /opt/envcheck && printf" not in h)
        assert "touch /tmp/pwned" not in hist.replace("$(touch /tmp/pwned)", "")


# -- 3. launchers: fleet slurm (a shell script) and fleet k8s (YAML) -------------------------------
#: printable values a shell would act on: command substitution, quotes, separators, comments, globs
SHELLISH = ["$(touch PWNED)", "`touch PWNED`", ";touch PWNED;", "' && touch PWNED && '", '"$(touch PWNED)"',
            "a b", "x#y", "\\", "$HOME", "*", "--wrap=touch PWNED", "&& touch PWNED", "|touch PWNED", "é"]
shellish = st.builds(lambda a, m, b: a + m + b, st.text(st.characters(min_codepoint=33, max_codepoint=126),
                                                        max_size=4).map(lambda s: s.replace("/", "")),
                     st.sampled_from(SHELLISH), st.text(st.characters(min_codepoint=32, max_codepoint=126),
                                                        max_size=4).map(lambda s: s.replace("/", "")))
SLURM_TEXT = ["--partition", "--account", "--job-name", "--reports", "--python", "--lock", "--envcheck"]


@hostile(30)
@given(payload=payloads, flag=st.sampled_from(SLURM_TEXT + ["--time"]), via=st.sampled_from(["flag", "env"]))
def test_fleet_slurm_refuses_a_value_with_a_line_break(cli, monkeypatch, tally, payload, flag, via):
    """F12: a line break in any free-text value (flag or ENVCHECK_*) would end a #SBATCH line or a
    command of the batch script: exit 2, one line, no script."""
    args = ["fleet", "slurm", "--nodes", "2"]
    with monkeypatch.context() as mp:
        if via == "env":  # the command's own variable (ENVCHECK_REPORTS is the job's, --python has 2 meanings)
            mp.setenv("ENVCHECK_FLEET_SLURM_" + flag[2:].upper().replace("-", "_"), payload.replace("\0", ""))
        else:
            args += [flag, payload]
        r = cli(args)
    tally["vectors.injection.edge"] += 1
    assert r.code == 2 and r.out == "", r
    assert "Traceback" not in r.err and r.err.count("\n") == 1, r.err


def _stub(path: Path, log: Path, out: str = "") -> None:
    path.write_text("#!/usr/bin/env python3\nimport json, sys\n"
                    f"open({str(log)!r}, 'a').write(json.dumps(sys.argv) + '\\n')\n"
                    f"sys.stdout.write({out!r})\n")
    path.chmod(0o755)


@hostile(30)
@given(values=st.fixed_dictionaries({f: shellish for f in SLURM_TEXT}))
def test_fleet_slurm_script_runs_exactly_the_intended_commands(cli, tmp_path_factory, tally, values):
    """F12: hostile printable values (command substitutions, quotes, separators, `#`) in every
    free-text flag: the script passes `bash -n`, its #SBATCH lines (read as sbatch reads them:
    shell-like words, an unquoted # ends the line) are exactly the intended options with the exact
    values, and run by bash (srun, scontrol and envcheck replaced by programs that log their argv)
    it runs exactly the intended commands with the exact values — and nothing else."""
    d = tmp_path_factory.mktemp("slurm")
    bin_, log = d / "bin", d / "argv.log"
    bin_.mkdir()
    _stub(bin_ / "srun", log)
    _stub(bin_ / "scontrol", log, out="n1\nn2\n")
    envcheck = str(bin_ / ("envcheck" + values["--envcheck"]))
    _stub(Path(envcheck), log)
    v = {**values, "--envcheck": envcheck}
    # FLAG=VALUE: a value may start with "-" (argparse reads `--lock -x` as two options)
    args = ["fleet", "slurm", "--nodes", "2", "--time", "10"] + [f"{f}={v[f]}" for f in SLURM_TEXT]
    r = cli(args)
    tally["vectors.injection.slurm"] += 1
    assert r.code == 0, r.err
    assert subprocess.run(["bash", "-n"], input=r.out, text=True, capture_output=True).returncode == 0
    import shlex

    lines = r.out.splitlines()
    first_command = next(i for i, line in enumerate(lines) if line.strip() and not line.startswith("#"))
    sbatch = [shlex.split(line[len("#SBATCH"):], comments=True) for line in lines if line.startswith("#SBATCH")]
    assert all(line.startswith("#SBATCH") or not line.startswith("#SB") for line in lines)
    assert max(i for i, line in enumerate(lines) if line.startswith("#SBATCH")) < first_command
    assert sorted(tuple(w) for w in sbatch) == sorted(
        (f"--{k}={x}",) for k, x in [("job-name", v["--job-name"]), ("partition", v["--partition"]),
                                     ("account", v["--account"]), ("nodes", "2"), ("ntasks-per-node", "1"),
                                     ("time", "10"), ("output", v["--job-name"] + "-%j.out")])
    work = d / "work"
    work.mkdir()
    env = {"PATH": f"{bin_}:/usr/bin:/bin", "SLURM_JOB_ID": "77", "SLURM_JOB_NODELIST": "n[1-2]", "HOME": str(d)}
    proc = subprocess.run(["bash", "-c", r.out, "job"], cwd=work, env=env, text=True, capture_output=True,
                          timeout=60)
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    # a folder named like an option is made ./-x, so that mkdir and envcheck read it as a path
    reports = ("./" if v["--reports"].startswith("-") else "") + f"{v['--reports']}/77"
    assert calls == [
        [str(bin_ / "srun"), "--ntasks-per-node=1", "--kill-on-bad-exit=0", envcheck, "verify", "--tier", "full",
         "--python", v["--python"], "--lock", v["--lock"], "--report", reports + "/"],
        [str(bin_ / "scontrol"), "show", "hostnames", "n[1-2]"],
        [envcheck, "fleet", "merge", reports, "--expect", "n1,n2", "--save", f"{reports}/fleet.json",
         "--lock", v["--lock"]],
        # the JUnit XML in a second merge, which needs the 'junit' extra (newcomer6 #1: 56f67ce)
        [envcheck, "fleet", "merge", reports, "--expect", "n1,n2", "--junit", f"{reports}/fleet.xml",
         "--lock", v["--lock"]],
    ], proc.stderr
    assert not list(work.rglob("PWNED")) and not (d / "PWNED").exists()
    assert (work / reports).is_dir()  # the folder the value names, taken literally


K8S_TEXT = ["--image", "--name", "--namespace", "--pvc", "--shm", "--node-selector"]


@hostile(30)
@given(payload=st.one_of(payloads, shellish), flag=st.sampled_from(K8S_TEXT))
def test_fleet_k8s_refuses_values_outside_their_grammar(cli, tally, payload, flag):
    """F13: --image (OCI reference), --name/--namespace (DNS-1123 label), --pvc (DNS-1123
    subdomain), --shm (quantity), --node-selector (label key/value) with a line break or any
    character outside the grammar: exit 2, one line, no manifest."""
    value = f"gpu={payload}" if flag == "--node-selector" else payload
    args = ["fleet", "k8s", "--nodes", "2", "--image", "team/torch:1", flag, value]
    r = cli(args)
    tally["vectors.injection.edge"] += 1
    assert r.code == 2 and r.out == "", (args, r)
    assert "Traceback" not in r.err and r.err.count("\n") == 1, r.err


def _shape(v):
    """A YAML document's structure: its keys all the way down, and where the strings are."""
    if isinstance(v, dict):
        return {k: _shape(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_shape(x) for x in v]
    return type(v).__name__


@hostile(30)
@given(payload=st.one_of(payloads, shellish, st.text(max_size=8)))
def test_fleet_k8s_manifest_has_exactly_the_intended_keys(tally, payload):
    """F13, the escaping: hostile strings placed past the edge in every field (image, names, PVC,
    node selector, the lock's text) leave a manifest that PyYAML reads back with exactly the keys
    a benign one has, each value exactly as given, and the header only comments."""
    from envcheck.fleet.k8s import K8sOptions, manifest

    def opts(x):
        return K8sOptions(image="img" + x, nodes=2, name="n" + x, namespace="ns" + x, pvc="claim" + x,
                          shm="1Gi" + x, lock_text="[build]\n" + x, node_selector={"k" + x: "v" + x})

    text, base = manifest(opts(payload)), manifest(opts(""))
    tally["vectors.injection.yaml"] += 1
    docs, want = list(yaml.safe_load_all(text)), list(yaml.safe_load_all(base))
    assert [_shape(d) for d in docs] != [] and len(docs) == len(want)
    got_shape = [_shape(d) for d in docs]
    # the keys are the benign keys; only the selector's key carries the payload (it is a key)
    want_shape = [_shape(d) for d in want]
    sel = got_shape[-1]["spec"]["template"]["spec"].pop("nodeSelector")
    want_shape[-1]["spec"]["template"]["spec"].pop("nodeSelector")
    assert got_shape == want_shape and sel == {"k" + payload: "str"}
    job, cm = docs[-1], docs[0]
    c = job["spec"]["template"]["spec"]["containers"][0]
    assert c["image"] == "img" + payload and job["metadata"]["name"] == "n" + payload
    assert job["metadata"]["namespace"] == "ns" + payload and cm["data"]["envcheck.lock.toml"] == "[build]\n" + payload
    assert job["spec"]["template"]["spec"]["nodeSelector"] == {"k" + payload: "v" + payload}
    head = text[: text.index("apiVersion")]
    assert all(line.startswith("# ") for line in head.splitlines() if line.strip() and line != "---")
