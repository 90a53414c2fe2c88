"""``envcheck docker verify``: the verify collector, run inside containers of an image.

Nothing of envcheck is installed in the image: each worker is a fresh container whose command is
``PYTHON /tmp/envcheck-collector.py --checks …``; the collector file (stdlib + torch only) is
copied in with ``put_archive`` before the container starts, so it works with a remote engine too.
:class:`ContainerStream` gives :func:`envcheck.verify.collect.collect` the same line-by-line
interface as :class:`envcheck.runner.Stream`, so the per-check timeouts, hang and crash handling
and the report are the ones ``envcheck verify`` uses. A hung check's container is killed and
removed; every container a run made is removed at the end (unless ``keep``).

Device flags come from the ``run_flags`` of the plan's ``[[base_image]]`` row
(matrices/docker.toml): ``--gpus all`` → a ``DeviceRequest`` for every GPU, ``--device /dev/kfd``
→ the device node, ``-v`` → a bind mount, … — each only when what it needs exists on this host;
the others are skipped, with the reason.
"""

from __future__ import annotations

import io
import os
import shlex
import signal
import tarfile
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from envcheck import runner
from envcheck.docker.engine import DockerError, engine_errors, short_error

#: Where the collector is copied in the container (``/tmp`` exists in every Linux image).
IN_IMAGE_DIR = "/tmp"
IN_IMAGE_COLLECTOR = f"{IN_IMAGE_DIR}/envcheck-collector.py"
#: Interpreters looked for in the image, in order; the first that has torch is used.
INTERPRETERS = ("python3", "python", "/opt/venv/bin/python")
#: Label on every container envcheck starts (``docker ps -a --filter label=io.envcheck.role``).
ROLE_LABEL = "io.envcheck.role"
#: Seconds the interpreter search may take.
FIND_TIMEOUT = 60.0
#: The device node the NVIDIA driver creates on a host with a GPU (``--gpus`` needs the driver).
NVIDIA_CONTROL = "/dev/nvidiactl"


@dataclass
class RunOptions:
    """How verify's containers are made.

    Attributes:
        kwargs: docker SDK ``containers.create`` arguments (devices, device_requests, …).
        applied: the ``docker run`` flags applied (as matrices/docker.toml words them).
        skipped: ``(flag, reason)`` for each flag left out.
    """

    kwargs: Dict[str, Any] = field(default_factory=dict)
    applied: List[str] = field(default_factory=list)
    skipped: List[Tuple[str, str]] = field(default_factory=list)

    def to_dict(self) -> Dict[str, Any]:
        return {"applied": self.applied, "skipped": [{"flag": f, "reason": r} for f, r in self.skipped]}


def run_options(run_flags: Sequence[str], exists: Callable[[str], bool] = os.path.exists) -> RunOptions:
    """Translate ``docker run`` flags (matrices/docker.toml ``run_flags``) to SDK arguments.

    Args:
        run_flags: ``["--gpus all", "--device /dev/kfd", "--ipc=host", "-v A:B", "-e K=V", …]``.
        exists: the host check for device nodes and mounted files (``os.path.exists``).

    Returns:
        :class:`RunOptions`; a device or mount this host lacks is skipped with the reason, and a
        flag envcheck cannot translate is skipped saying so.
    """
    from docker.types import DeviceRequest

    opt = RunOptions()
    kw = opt.kwargs
    for flag in run_flags:
        words = shlex.split(flag)
        name, _, inline = words[0].partition("=")  # --ipc=host
        value = inline or " ".join(words[1:])
        if name == "--gpus":
            if not exists(NVIDIA_CONTROL):
                opt.skipped.append((flag, f"no NVIDIA driver on this host ({NVIDIA_CONTROL} absent): "
                                          "no GPU to pass; the device checks skip"))
                continue
            count = -1 if value == "all" else int(value) if value.isdigit() else -1
            kw.setdefault("device_requests", []).append(DeviceRequest(count=count, capabilities=[["gpu"]]))
        elif name == "--device":
            if not exists(value.split(":")[0]):
                opt.skipped.append((flag, f"{value} does not exist on this host (no such GPU driver node)"))
                continue
            kw.setdefault("devices", []).append(f"{value}:{value}:rwm" if ":" not in value else value)
        elif name in ("-v", "--volume"):
            src, _, dst = value.partition(":")
            if not exists(src):
                opt.skipped.append((flag, f"{src} does not exist on this host"))
                continue
            kw.setdefault("volumes", {})[src] = {"bind": dst.split(":")[0], "mode": "ro"}
        elif name in ("-e", "--env"):
            k, _, v = value.partition("=")
            kw.setdefault("environment", {})[k] = v
        elif name == "--group-add":
            kw.setdefault("group_add", []).append(value)
        elif name == "--security-opt":
            kw.setdefault("security_opt", []).append(value)
        elif name == "--ipc":
            kw["ipc_mode"] = value
        elif name == "--shm-size":
            kw["shm_size"] = value
        else:
            opt.skipped.append((flag, "envcheck does not translate this flag"))
            continue
        opt.applied.append(flag)
    return opt


def _tar_of(name: str, data: bytes) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        info = tarfile.TarInfo(name)
        info.size, info.mode, info.mtime = len(data), 0o644, int(time.time())
        tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def _signal_of(code: Optional[int]) -> Optional[int]:
    """A container's exit status 128+N means signal N ended its main process (137 = SIGKILL)."""
    if code is None or not 128 < code < 128 + 65:
        return None
    try:
        signal.Signals(code - 128)
    except ValueError:
        return None
    return code - 128


class ContainerStream(runner.Stream):
    """A started container, read line by line like :class:`envcheck.runner.Stream` (whose
    ``readline``/``stderr_size``/``stderr_since`` it shares).

    stdout and stderr come from two ``logs(follow=True)`` streams read in the background;
    :meth:`kill` kills the container; :meth:`finish` waits, says how it ended (exit status 128+N
    becomes "killed by SIGN", as a process's negative return code would) and removes it.
    """

    def __init__(self, argv: Sequence[str], container: Any = None, error: Optional[str] = None,
                 keep: bool = False):
        super().__init__(tuple(argv), None, error)  # no local process: the container is the child
        self.container = container
        self._keep = keep
        self._eof = container is None
        if container is not None:
            for target in (self._pump_stdout, self._pump_stderr):
                t = threading.Thread(target=target, daemon=True)
                t.start()
                self._threads.append(t)

    def _chunks(self, stdout: bool) -> Any:
        try:
            yield from self.container.logs(stdout=stdout, stderr=not stdout, stream=True, follow=True)
        except Exception:  # the container was removed under the stream: the end of it
            return

    def _pump_stdout(self) -> None:
        buf = b""
        for chunk in self._chunks(True):
            buf += chunk
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                self._lines.put(line.decode("utf-8", "replace").rstrip("\r"))
        if buf:
            self._lines.put(buf.decode("utf-8", "replace"))
        self._lines.put(None)

    def _pump_stderr(self) -> None:
        for chunk in self._chunks(False):
            with self._stderr_lock:
                self._stderr.append(chunk.decode("utf-8", "replace"))

    @property
    def pid(self) -> Optional[str]:  # type: ignore[override]
        return self.container.id if self.container is not None else None

    def kill(self, after: Optional[float] = None) -> None:
        """Kill the container; ``after`` (seconds) is the timeout to report."""
        if self.container is None:
            return
        self._killed_after = after if after is not None else self._killed_after
        try:
            self.container.kill()
        except Exception:
            pass  # already stopped

    def finish(self, timeout: float = 5.0) -> runner.Result:
        """Wait for the container (killing it after ``timeout`` s), describe the end, remove it."""
        name = os.path.basename(self.argv[0]) if self.argv else "?"
        if self.container is None:
            return runner.Result(self.argv, None, "", "", 0.0, self._error)
        status: Dict[str, Any] = {}
        try:
            status = self.container.wait(timeout=timeout)
        except Exception:  # requests' ReadTimeout, or the engine went away
            self.kill(self._killed_after if self._killed_after is not None else timeout)
            try:
                status = self.container.wait(timeout=30)
            except Exception as exc:
                status = {"StatusCode": None, "Error": {"Message": short_error(exc)}}
        rest = self._rest(5.0)
        code = status.get("StatusCode")
        oom = False
        try:
            self.container.reload()
            oom = bool(self.container.attrs.get("State", {}).get("OOMKilled"))
        except Exception:
            pass
        self.remove()
        sig = _signal_of(code)
        error = None
        rc = code
        if self._killed_after is not None:
            error, rc = f"{name} timed out after {self._killed_after:g} s", None
        elif sig is not None:
            rc = -sig
            error = f"{name} was killed by {signal.Signals(sig).name}" + (" (out of memory: the container's "
                                                                             "memory limit)" if oom else "")
        elif code is None:
            error = f"{name}: the container's end is unknown ({(status.get('Error') or {}).get('Message', '')})"
        elif code != 0:
            error = f"{name} exited with status {code}"
        return runner.Result(self.argv, rc, rest, self.stderr_since(), time.monotonic() - self._start, error)

    def remove(self) -> None:
        if self.container is not None and not self._keep:
            try:
                self.container.remove(force=True)
            except Exception:
                pass


class ImageRunner:
    """Starts verify's containers for one image and cleans them up.

    Use as a context manager; :meth:`start` has :func:`envcheck.runner.start`'s signature, so it
    is the ``start`` seam of :func:`envcheck.verify.collect.collect`.
    """

    def __init__(self, client: Any, image: str, options: RunOptions, keep: bool = False):
        self.client, self.image, self.options, self.keep = client, image, options, keep
        self.streams: List[ContainerStream] = []

    def __enter__(self) -> ImageRunner:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        """Kill and remove every container still there (unless ``keep``)."""
        for s in self.streams:
            if not self.keep:
                s.kill()
                s.remove()

    def _create(self, argv: Sequence[str], files: Optional[Dict[str, bytes]] = None) -> Any:
        kw = dict(self.options.kwargs)
        kw.setdefault("environment", {})
        kw["environment"] = {**kw["environment"], "PYTHONDONTWRITEBYTECODE": "1", "PYTHONUNBUFFERED": "1"}
        c = self.client.containers.create(self.image, command=list(argv), labels={ROLE_LABEL: "verify"},
                                          working_dir=IN_IMAGE_DIR, detach=True, **kw)
        for name, data in (files or {}).items():
            c.put_archive(IN_IMAGE_DIR, _tar_of(name, data))
        return c

    def start(self, argv: Sequence[str], env: Optional[Dict[str, str]] = None, cwd: Optional[str] = None) -> ContainerStream:
        """Run ``argv`` (``[python, <host collector path>, …]``) in a new container with the
        collector copied in; a container that cannot start gives a stream at EOF saying why.
        ``env`` and ``cwd`` (host settings) do not apply inside."""
        from envcheck.verify.collect import COLLECTOR

        argv = list(argv)
        if len(argv) > 1 and argv[1] == str(COLLECTOR):
            argv[1] = IN_IMAGE_COLLECTOR
        container = None
        try:
            container = self._create(argv, {os.path.basename(IN_IMAGE_COLLECTOR): COLLECTOR.read_bytes()})
            container.start()
        except Exception as exc:  # the engine refused: a stream that says why
            stream = ContainerStream(argv, None, f"the container could not start: {short_error(exc)}")
            if container is not None:
                ContainerStream(argv, container, keep=self.keep).remove()
            return stream
        stream = ContainerStream(argv, container, keep=self.keep)
        self.streams.append(stream)
        return stream


#: Run by ``sh -c`` in the image: print ``torch PATH`` for the first interpreter that has torch on
#: its sys.path (without importing it), else ``python PATH`` for the first interpreter at all.
FIND_SCRIPT = r"""
first=""
for p in {candidates}; do
  exe=$(command -v "$p" 2>/dev/null) || continue
  if "$exe" -c 'import os, sys; sys.exit(0 if any(os.path.isfile(os.path.join(d or ".", "torch", "__init__.py")) for d in sys.path) else 3)' 2>/dev/null; then
    echo "torch $exe"; exit 0
  fi
  [ -n "$first" ] || first="$exe"
done
[ -n "$first" ] && echo "python $first"
exit 0
"""  # noqa: E501 (a shell script: its Python one-liner cannot wrap)


def find_interpreter(runner_: ImageRunner, candidates: Sequence[str] = INTERPRETERS,
                     timeout: float = FIND_TIMEOUT) -> Tuple[str, bool]:
    """The interpreter verify runs in the image: ``(path, has_torch)``.

    Raises:
        DockerError: the image has no ``sh`` or no Python at all, the container could not start
            (the engine's message: a GPU runtime missing…), or the search hung.
    """
    script = FIND_SCRIPT.format(candidates=" ".join(shlex.quote(c) for c in candidates))
    stream = runner_.start(["sh", "-c", script])
    out: List[str] = []
    end = time.monotonic() + timeout
    while True:
        kind, line = stream.readline(max(0.0, end - time.monotonic()))
        if kind == stream.TIMEOUT:
            stream.kill(after=timeout)
            break
        if kind == stream.EOF:
            break
        out.append(line)
    res = stream.finish()
    if not res.ok:
        why = res.error or "?"
        raise DockerError(f"looking for Python in {runner_.image}: {why}"
                          + (f" ({res.stderr.strip()[-300:]})" if res.stderr.strip() else "")
                          + "\n  give the interpreter with --python PATH if the image has no /bin/sh")
    for line in out:
        kind_, _, path = line.partition(" ")
        if kind_ in ("torch", "python") and path:
            return path, kind_ == "torch"
    raise DockerError(f"no Python interpreter in {runner_.image} (looked for {', '.join(candidates)}): "
                      "build the image from a plan (`envcheck docker build`) or give --python PATH")


def image_info(client: Any, ref: str) -> Any:
    """The image ``ref`` (tag or id).

    Raises:
        DockerError: no such image on the engine (with the way to build one).
    """
    import docker

    with engine_errors(f"looking up the image {ref}"):
        try:
            return client.images.get(ref)
        except docker.errors.ImageNotFound:
            raise DockerError(f"no image {ref!r} on the Docker engine: build it (`envcheck docker build … "
                              f"--tag {ref}`) or check `docker images`") from None
