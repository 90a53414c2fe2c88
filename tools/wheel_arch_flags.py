#!/usr/bin/env python3
"""Read a torch wheel's own facts off PyPI without downloading the whole wheel.

For each release given, takes one cp312 wheel for the platform pattern, reads with HTTP range
requests only the zip directory, ``torch/version.py`` (git commit, CUDA/HIP version), the
``*.dist-info/METADATA`` pins (cuda-toolkit, nvidia-cudnn, nvidia-nccl, triton) and streams
``torch/lib/libtorch_python.so`` through zlib looking for the kernel list
``torch._C._cuda_getArchFlags()`` returns ("sm_75 sm_80 …", "compute_XX" where PTX is in).
One JSON object per release on stdout; the matrix rows cite the file as ``wheel:<filename>``.

    python tools/wheel_arch_flags.py 'manylinux.*_x86_64' 2.13.0 2.15.0
    python tools/wheel_arch_flags.py 'manylinux.*_aarch64' 2.15.0

Network: PyPI only (the JSON API and its file host). Every request has a timeout.
"""

from __future__ import annotations

import io
import json
import re
import struct
import sys
import urllib.parse
import urllib.request
import zipfile
import zlib

JSON_URL = "https://pypi.org/pypi/torch/json"
TIMEOUT = 120
ARCH_RE = re.compile(rb"(?:sm|compute)_\d+[a-z]?(?: (?:sm|compute)_\d+[a-z]?){2,}")
PIN_RE = re.compile(r"^Requires-Dist: (cuda-toolkit|nvidia-cudnn|nvidia-nccl|nvidia-cuda-runtime|triton)")


def _get(url: str, start: int, end: int) -> bytes:
    req = urllib.request.Request(url, headers={"Range": f"bytes={start}-{end}"})
    with urllib.request.urlopen(req, timeout=TIMEOUT) as r:
        return r.read()


class RangeFile(io.RawIOBase):
    """A seekable read-only file over HTTP range requests (enough for zipfile)."""

    def __init__(self, url: str) -> None:
        self.url, self.pos = url, 0
        with urllib.request.urlopen(urllib.request.Request(url, method="HEAD"), timeout=TIMEOUT) as r:
            self.size = int(r.headers["Content-Length"])

    def seekable(self) -> bool:
        return True

    def readable(self) -> bool:
        return True

    def tell(self) -> int:
        return self.pos

    def seek(self, off: int, whence: int = 0) -> int:
        self.pos = off if whence == 0 else self.pos + off if whence == 1 else self.size + off
        return self.pos

    def readinto(self, b) -> int:  # type: ignore[no-untyped-def]
        if self.pos >= self.size:
            return 0
        data = _get(self.url, self.pos, min(self.pos + len(b), self.size) - 1)
        b[: len(data)] = data
        self.pos += len(data)
        return len(data)


def scan_member(url: str, info: zipfile.ZipInfo) -> list:
    """Stream one deflated zip member and return the kernel-list strings found in it."""
    head = _get(url, info.header_offset, info.header_offset + 29)
    n, m = struct.unpack("<HH", head[26:30])
    pos = info.header_offset + 30 + n + m
    end = pos + info.compress_size
    d, tail, found = zlib.decompressobj(-15), b"", set()
    while pos < end:
        data = _get(url, pos, min(pos + (8 << 20), end) - 1)
        pos += len(data)
        out = tail + d.decompress(data)
        found.update(x.group(0).decode() for x in ARCH_RE.finditer(out))
        tail = out[-4096:]
    return sorted(found)


def read(release_files: list, version: str, pattern: str) -> dict:
    files = [f for f in release_files if re.search(pattern, f["filename"]) and f["filename"].endswith(".whl")]
    if not files:
        return {"torch": version, "error": f"no wheel matches {pattern!r}"}
    files.sort(key=lambda f: ("cp312" not in f["filename"], f["filename"]))
    f = files[0]
    url = urllib.parse.urljoin(JSON_URL, f["url"])
    zf = zipfile.ZipFile(io.BufferedReader(RangeFile(url), buffer_size=1 << 16))
    version_py = zf.read("torch/version.py").decode()
    meta = next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA"))
    pins = [line.split(": ", 1)[1] for line in zf.read(meta).decode().splitlines() if PIN_RE.match(line)]
    lib = [n for n in zf.namelist() if n.endswith("torch/lib/libtorch_python.so")]
    return {
        "torch": version,
        "wheel": f["filename"],
        "version_py": [ln for ln in version_py.splitlines() if ln.startswith(("git_version", "cuda", "hip"))],
        "pins": pins,
        "arch_flags": scan_member(url, zf.getinfo(lib[0])) if lib else [],
    }


def main(argv: list) -> int:
    if len(argv) < 2:
        print(__doc__.strip().splitlines()[0], file=sys.stderr)
        print("usage: wheel_arch_flags.py PLATFORM_REGEX VERSION...", file=sys.stderr)
        return 2
    with urllib.request.urlopen(JSON_URL, timeout=TIMEOUT) as r:
        releases = json.load(r)["releases"]
    for version in argv[1:]:
        print(json.dumps(read(releases.get(version, []), version, argv[0])), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
