"""Nothing the user had is lost: every writer refuses to clobber, sets of files are all-or-nothing.

Real processes: `envcheck` runs as a child that is killed (SIGKILL, SIGTERM, SIGINT) at random
moments; ten run at once into one folder; targets of every kind (file, FIFO, folder, symbolic link,
dangling link) are offered to every flag that writes.
"""

from __future__ import annotations

import os
import random
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given, strategies as st

from tests.hostile.conftest import hostile
from tests.hostile.test_startup_sigint import envcheck_frames

ENVCHECK = [sys.executable, "-m", "envcheck"]
KINDS = ["file", "fifo", "dir", "symlink", "dangling", "devnull-link"]

#: real processes (envcheck, interpreters, docker, servers' clients) run here on purpose
pytestmark = pytest.mark.subprocess


def make(kind: str, p: Path) -> None:
    if kind == "file":
        p.write_text("the user's own file\n")
    elif kind == "fifo":
        os.mkfifo(p)
    elif kind == "dir":
        p.mkdir()
    elif kind == "symlink":
        (p.parent / "real-target").write_text("the user's linked file\n")
        p.symlink_to(p.parent / "real-target")
    elif kind == "dangling":
        p.symlink_to(p.parent / "nowhere")
    elif kind == "devnull-link":
        p.symlink_to("/dev/null")


def fingerprint(p: Path):
    st_ = os.lstat(p)
    body = p.read_bytes() if stat.S_ISREG(st_.st_mode) else (os.readlink(p) if stat.S_ISLNK(st_.st_mode) else b"")
    real = (p.parent / "real-target").read_bytes() if (p.parent / "real-target").exists() else b""
    return stat.S_IFMT(st_.st_mode), body, real


WRITERS = {
    "plan -o": lambda t: ["plan", "--gpu", "A100", "--format", "pip", "-o", str(t.parent)],
    "probe -o": lambda t: ["probe", "--no-docker", "-o", str(t)],
    "verify --save-facts": lambda t: ["verify", "--facts", str(_facts()), "--save-facts", str(t)],
    "docker ci --report": lambda t: ["docker", "ci", "cpu", "--report", str(t)],
}


def _facts() -> Path:
    return Path(__file__).resolve().parents[1] / "fixtures" / "verify" / "cases" / "C01.json"


@hostile(30)
@given(writer=st.sampled_from(sorted(WRITERS)), kind=st.sampled_from(KINDS), force=st.booleans())
def test_no_writer_clobbers_what_is_there(cli, tmp_path_factory, tally, writer, kind, force):
    d = tmp_path_factory.mktemp("w")
    target = d / ("requirements.txt" if writer == "plan -o" else "out.json")
    make(kind, target)
    before = fingerprint(target)
    args = WRITERS[writer](target) + (["--force"] if force else [])
    if writer == "docker ci --report" and kind == "file" and force:
        return  # allowed to go on (it would build): replacing a file with --force is the contract
    r = cli(args)
    tally["vectors.clobber"] += 1
    assert "Traceback" not in r.err
    if kind == "file" and force:
        assert r.code in (0, 1), r.err  # replacing a regular file is what --force is for
        return
    assert r.code == 2, (writer, kind, force, r.err)
    assert fingerprint(target) == before, "clobbered"
    assert not [p for p in d.iterdir() if ".envcheck-" in p.name], "temporary files left"


def _set(d: Path) -> dict:
    return {p.name: p.read_text() for p in sorted(d.iterdir()) if not p.name.startswith(".")}


def _gpu_of(files: dict) -> set:
    """Which run each file of a plan -o set came from (A100 or RTX 4090, named in every title)."""
    return {("A100" if "A100" in t.splitlines()[0] + t[:400] else "4090" if "4090" in t[:400] else "?")
            for t in files.values()}


def test_ten_concurrent_plans_into_one_folder_one_wins(tmp_path, tally):
    out = tmp_path / "out"
    gpus = ["A100", "RTX 4090"] * 5
    procs = [subprocess.Popen(ENVCHECK + ["plan", "--gpu", g, "-o", str(out)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for g in gpus]
    results = [(p.returncode, err) for p in procs for _, err in [p.communicate(timeout=300)]]
    tally["vectors.concurrent"] += len(procs)
    codes = sorted(c for c, _ in results)
    assert codes == [0] + [2] * 9, results
    assert all("Traceback" not in e for _, e in results)
    assert all("refusing to overwrite" in e for c, e in results if c == 2)
    files = _set(out)
    assert set(files) == {"requirements.txt", "environment.yml", "Dockerfile", "envcheck.lock.toml"}
    assert len(_gpu_of(files)) == 1, "a mixed set"
    assert not [p for p in out.iterdir() if p.name.startswith(".")]


def test_ten_concurrent_forced_plans_leave_one_whole_set(tmp_path, tally):
    out = tmp_path / "out"
    gpus = ["A100", "RTX 4090"] * 5
    procs = [subprocess.Popen(ENVCHECK + ["plan", "--gpu", g, "-o", str(out), "--force"], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for g in gpus]
    results = [(p.returncode, err) for p in procs for _, err in [p.communicate(timeout=300)]]
    tally["vectors.concurrent"] += len(procs)
    assert [c for c, _ in results] == [0] * 10, results
    assert len(_gpu_of(_set(out))) == 1, "a mixed set"


def _old_set(out: Path) -> dict:
    r = subprocess.run(ENVCHECK + ["plan", "--gpu", "A100", "-o", str(out)], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    return _set(out)


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM, signal.SIGINT])
def test_plan_killed_at_random_moments_leaves_a_whole_set(tmp_path, tally, sig):
    rng = random.Random(15 + sig)
    out = tmp_path / "out"
    old = _old_set(out)
    # how long a run takes here, to spread the kills over all of it
    t0 = time.monotonic()
    subprocess.run(ENVCHECK + ["plan", "--gpu", "RTX 4090", "--format", "pip"], capture_output=True, timeout=300)
    span = time.monotonic() - t0
    for _ in range(6):
        p = subprocess.Popen(ENVCHECK + ["plan", "--gpu", "RTX 4090", "-o", str(out), "--force"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        time.sleep(rng.uniform(0.3, span * 1.2))
        p.send_signal(sig)
        _, err = p.communicate(timeout=120)
        # no traceback through envcheck's code, also for a Ctrl-C while it is still importing (envcheck.entry);
        # only one that lands before envcheck's first line (the interpreter's own start-up) is Python's to print
        assert "Traceback" not in err or (sig == signal.SIGINT and envcheck_frames(err) == []), err
        from envcheck.fsutil import recover

        recover(out)  # what the next run (or a matrix read) does first
        files = _set(out)
        tally["vectors.kill.plan"] += 1
        assert set(files) == set(old)
        assert len(_gpu_of(files)) == 1, "a mixed set"
        assert not [q for q in out.iterdir() if q.name.startswith(".")], "temporary files left"


_KILL_CHILD = """
import sys, time
from envcheck.fsutil import write_set
d, tag = sys.argv[1], sys.argv[2]
files = {f"f{i}.txt": f"{tag} {i}\\n" * 100 for i in range(5)}
write_set(d, files, force=True, _hook=lambda i, n: time.sleep(0.03))
"""


@hostile(40)
@given(delay=st.floats(0.0, 0.5), sig=st.sampled_from([signal.SIGKILL, signal.SIGTERM, signal.SIGINT]))
def test_a_set_commit_killed_inside_its_window_is_all_or_nothing(tmp_path_factory, tally, delay, sig):
    """The commit itself is slowed (30 ms a file) so kills land inside it: after a SIGKILL the next
    writer's recovery, after SIGTERM/SIGINT the writer's own rollback, leave the old set or the new."""
    from envcheck.fsutil import recover

    d = tmp_path_factory.mktemp("set")
    for i in range(5):
        (d / f"f{i}.txt").write_text(f"old {i}\n" * 100)
    p = subprocess.Popen([sys.executable, "-c", _KILL_CHILD, str(d), "new"], stderr=subprocess.PIPE, text=True,
                         cwd=str(Path(__file__).resolve().parents[2]))
    time.sleep(delay)
    p.send_signal(sig)
    p.communicate(timeout=60)
    recover(d)
    tally["vectors.kill.set"] += 1
    tags = {p.read_text().split()[0] for p in d.glob("f*.txt")}
    assert len(list(d.glob("f*.txt"))) == 5 and len(tags) == 1, f"a mixed set: {tags}"
    assert not [q for q in d.iterdir() if q.name.startswith(".")], "leftovers"


def test_matrix_update_killed_at_random_moments_is_all_or_nothing(tmp_path, tally):
    """`matrix update` of two packages against a real local index, killed at random moments: the
    matrix read afterwards (which recovers first) holds both old files or both new ones."""
    import shutil

    from tests.update.index_support import ROOT, IndexServer

    page = (b"<!DOCTYPE html><html><body>\n<a href=\"/whl/cpu/{p}-{v}%2Bcpu-cp312-cp312-manylinux_2_28_x86_64.whl"
            b"#sha256=" + b"a" * 64 + b"\">{p}-{v}+cpu-cp312-cp312-manylinux_2_28_x86_64.whl</a><br/>\n</body></html>\n")
    server = IndexServer()
    try:
        mx = tmp_path / "matrices"
        mx.mkdir()
        for p in (ROOT / "matrices").glob("*.toml"):
            if not p.name.startswith("generated-"):
                shutil.copy2(p, mx / p.name)

        def serve(v: bytes) -> None:
            server.html("/whl/torch/", page.replace(b"{p}", b"torch").replace(b"{v}", v))
            server.html("/whl/torchvision/", page.replace(b"{p}", b"torchvision").replace(b"{v}", b"0.22.1"
                                                                                           if v == b"2.7.1" else b"0.22.2"))
        argv = ENVCHECK + ["matrix", "update", "--index", f"{server.url}/whl/", "--channel", "pytorch",
                           "--packages", "torch,torchvision", "--matrices", str(mx), "--retries", "0"]
        serve(b"2.7.1")
        r = subprocess.run(argv, capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr
        rng = random.Random(1515)
        t0 = time.monotonic()
        serve(b"2.7.2")
        subprocess.run(argv + ["--dry-run"], capture_output=True, timeout=300)
        span = time.monotonic() - t0
        for i in range(8):
            serve(b"2.7.2" if i % 2 == 0 else b"2.7.1")
            p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            time.sleep(rng.uniform(0.2, span * 1.3))
            p.send_signal(rng.choice([signal.SIGKILL, signal.SIGTERM, signal.SIGINT]))
            _, err = p.communicate(timeout=120)
            assert "Traceback" not in err or ("KeyboardInterrupt" in err and envcheck_frames(err) == []), err
            from envcheck.matrix import load_matrix

            load_matrix(mx)  # reading the matrix recovers a half-done set first
            gen = {q.name: q.read_text() for q in mx.glob("generated-*.toml")}
            tally["vectors.kill.matrix_update"] += 1
            torch_new = "2.7.2" in gen["generated-index-pytorch-torch.toml"]
            vision_new = "0.22.2" in gen["generated-index-pytorch-torchvision.toml"]
            assert torch_new == vision_new, "a partial matrix"
            assert not [q for q in mx.iterdir() if q.name.startswith(".")], "leftovers"
    finally:
        server.close()


def test_a_forced_set_leaves_files_that_hold_their_new_text_alone(tmp_path):
    """Re-planning into the same folder with --force: a file whose bytes do not change is not copied,
    renamed or flushed again (same inode, same mtime); the changed ones are replaced as a set."""
    from envcheck.fsutil import write_set

    d = tmp_path / "out"
    write_set(d, {"a.txt": "one\n", "b.txt": "two\n", "c.txt": "three\n"})
    before = {p.name: os.stat(p) for p in d.iterdir()}
    write_set(d, {"a.txt": "one\n", "b.txt": "TWO\n", "c.txt": "three\n"}, force=True)
    after = {p.name: os.stat(p) for p in d.iterdir()}
    assert set(after) == {"a.txt", "b.txt", "c.txt"}, "leftovers"
    for same in ("a.txt", "c.txt"):
        assert (after[same].st_ino, after[same].st_mtime_ns) == (before[same].st_ino, before[same].st_mtime_ns)
    assert after["b.txt"].st_ino != before["b.txt"].st_ino and (d / "b.txt").read_text() == "TWO\n"
    # the same text but a symbolic link in its place: still refused, never followed
    (d / "c.txt").unlink()
    (d / "c.txt").symlink_to(d / "a.txt")
    with pytest.raises(Exception, match="refusing to replace"):
        write_set(d, {"a.txt": "one\n", "c.txt": "one\n"}, force=True)
    assert (d / "c.txt").is_symlink()


@pytest.mark.parametrize("names", [["requirements.txt", "Dockerfile"], ['a"b', "back\\slash", "é.txt", "tab\there",
                                                                        os.fsdecode(b"\xff.txt")], []])
def test_a_sets_journal_is_json_that_rolls_back_every_name(tmp_path, names):
    """The journal a set's commit writes (its names, the rollback's list) is JSON: the bytes json.dump
    writes, names that need escaping included (plain ones are written without the json package); a
    rollback from it puts back every file it names."""
    import json

    from envcheck.fsutil import _rollback, _write_journal

    txn = tmp_path / ".envcheck-txn-x"
    (txn / "old").mkdir(parents=True)
    (txn / "new").mkdir()
    _write_journal(txn, names)
    raw = (txn / "journal.json").read_text(encoding="utf-8")
    assert raw == json.dumps({"names": names})
    for n in names:  # each was moved in (its staged copy gone) over a file whose backup is in old/
        (tmp_path / n).write_text("new\n")
        (txn / "old" / n).write_text("old\n")
    _rollback(tmp_path, txn)
    assert not txn.exists()
    assert all((tmp_path / n).read_text() == "old\n" for n in names)


def test_a_set_replacing_files_puts_staged_copies_and_backups_on_disk_before_its_journal(tmp_path, monkeypatch):
    """After a power cut the rollback reads a staged copy that is gone as "moved in" and restores the
    backup (or removes the target): so when a set replaces files the user had, the folders holding
    the staged copies and the backups are flushed before the journal that names them; a set of new
    files (any target after a crash is the set's own) skips those two flushes."""
    from envcheck import fsutil

    events = []
    real_dir, real_journal = fsutil._fsync_dir, fsutil._write_journal
    monkeypatch.setattr(fsutil, "_fsync_dir", lambda p: (events.append(("fsync", Path(p).name)), real_dir(p)))
    monkeypatch.setattr(fsutil, "_write_journal", lambda t, n: (events.append(("journal", "")), real_journal(t, n)))
    d = tmp_path / "out"
    fsutil.write_set(d, {"a.txt": "one\n", "b.txt": "two\n"})
    assert ("fsync", "new") not in events and ("fsync", "old") not in events
    assert events.index(("journal", "")) < events.index(("fsync", "out"))
    events.clear()
    fsutil.write_set(d, {"a.txt": "ONE\n", "b.txt": "TWO\n"}, force=True)
    journal = events.index(("journal", ""))
    assert events.index(("fsync", "new")) < journal and events.index(("fsync", "old")) < journal, events
    assert (d / "a.txt").read_text() == "ONE\n" and sorted(p.name for p in d.iterdir()) == ["a.txt", "b.txt"]
