"""A local base image for machines that cannot pull one: ``debootstrap`` a minimal Debian, then
``docker import`` it.

No registry is reachable on air-gapped machines (and in this project's CI), so ``python:3.11-slim``
cannot be pulled. This builds the equivalent from Debian's own packages: Debian 12 "bookworm"
(``--variant=minbase``) with Debian's Python (3.11 on bookworm, the cp311 wheels), a venv at
``/opt/venv`` first on ``PATH`` (Debian's system Python refuses ``pip install``: PEP 668), and a
C/C++ compiler so ``torch.compile`` works inside. matrices/docker.toml has its ``[[base_image]]``
row (``envcheck-base:bookworm``), which ``envcheck docker build --base-image`` picks up.

The image carries the recipe's digest as a label; :func:`ensure_base` builds only when no image
with that tag and digest exists (cached), so a changed recipe rebuilds. Needs root, debootstrap
and a reachable Debian mirror (~1-2 min, ~550 MB).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, Callable, Dict, Optional, Sequence

from envcheck import runner
from envcheck.docker.engine import DockerError, engine_errors

TAG = "envcheck-base:bookworm"
SUITE = "bookworm"
#: Debian packages on top of minbase: Python with venv and pip, and gcc/g++ + libc headers for
#: torch.compile's C++ code generation (Inductor compiles with the system C++ compiler and includes
#: Python.h, hence python3-dev).
PACKAGES = ("python3", "python3-venv", "python3-pip", "python3-dev", "gcc", "g++", "libc6-dev", "ca-certificates")
VENV = "/opt/venv"
PATH = f"{VENV}/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
RECIPE_LABEL = "io.envcheck.base-recipe"

Say = Callable[[str], None]


def recipe() -> Dict[str, Any]:
    """What the base is made of; its digest (:func:`recipe_digest`) labels the image."""
    return {"suite": SUITE, "variant": "minbase", "packages": list(PACKAGES), "venv": VENV, "path": PATH,
            "schema": 1}


def recipe_digest() -> str:
    """sha256 (first 16 hex digits) of :func:`recipe`."""
    return hashlib.sha256(json.dumps(recipe(), sort_keys=True).encode()).hexdigest()[:16]


def current(client: Any, tag: str = TAG) -> Optional[Any]:
    """The image ``tag`` if it exists and was built from this recipe, else ``None``."""
    import docker

    with engine_errors(f"looking up {tag}"):
        try:
            img = client.images.get(tag)
        except docker.errors.ImageNotFound:
            return None
    return img if (img.labels or {}).get(RECIPE_LABEL) == recipe_digest() else None


def _step(argv: Sequence[str], timeout: float, what: str) -> None:
    res = runner.run(argv, timeout=timeout)
    if not res.ok:
        tail = " ".join((res.stderr or res.stdout).strip().splitlines()[-4:])[-600:]
        raise DockerError(f"building the base image: {what} failed ({res.error}): {tail}")


def build_base(client: Any, tag: str = TAG, mirror: Optional[str] = None, say: Say = lambda s: None,
               workdir: Optional[str] = None) -> str:
    """debootstrap + venv + ``docker import``: the base image; returns its id.

    Args:
        mirror: a Debian mirror URL (default: debootstrap's, deb.debian.org).
        say: progress sentences.
        workdir: where the root file system is made (default: a temp dir under /var/tmp).

    Raises:
        DockerError: not root, debootstrap missing, a step failed, or the import failed.
    """
    if hasattr(os, "geteuid") and os.geteuid() != 0:
        raise DockerError("building the base image needs root (debootstrap makes device nodes and chroots)")
    if runner.which("debootstrap") is None:
        raise DockerError("building the base image needs debootstrap (apt-get install debootstrap)")
    tmp = Path(tempfile.mkdtemp(prefix="envcheck-base-", dir=workdir or "/var/tmp"))
    try:
        root = tmp / "root"
        say(f"debootstrap {SUITE} (minbase + {', '.join(PACKAGES)})")
        argv = ["debootstrap", "--variant=minbase", "--include=" + ",".join(PACKAGES), SUITE, str(root)]
        _step(argv + ([mirror] if mirror else []), 1800, "debootstrap")
        say(f"python3 -m venv {VENV}")
        _step(["chroot", str(root), "python3", "-m", "venv", VENV], 300, "creating the venv")
        for junk in ("var/cache/apt/archives", "var/lib/apt/lists"):
            for p in (root / junk).glob("*"):
                if p.is_file():
                    p.unlink()
        tar = tmp / "rootfs.tar"
        say("packing the root file system")
        _step(["tar", "--numeric-owner", "-C", str(root), "-cf", str(tar), "."], 900, "tar")
        say(f"docker import → {tag}")
        repo, _, name = tag.rpartition(":") if ":" in tag.split("/")[-1] else (tag, "", "latest")
        changes = [f"ENV PATH={PATH}", f"LABEL {RECIPE_LABEL}={recipe_digest()}",
                   f'LABEL io.envcheck.base="debian {SUITE} minbase, Debian python3, {VENV}"', 'CMD ["/bin/bash"]']
        with engine_errors(f"docker import of {tag}"):
            old = current_id(client, tag)
            out = client.api.import_image(src=str(tar), repository=repo, tag=name, changes=changes)
            new = current_id(client, tag)
            if old and old != new:
                _remove_quietly(client, old)
        if not new:
            raise DockerError(f"docker import of {tag} gave no image: {str(out)[:300]}")
        return new
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def current_id(client: Any, tag: str) -> Optional[str]:
    import docker

    try:
        return client.images.get(tag).id
    except docker.errors.ImageNotFound:
        return None


def _remove_quietly(client: Any, image_id: str) -> None:
    """Remove a replaced base image if nothing uses it any more (else leave it)."""
    import docker

    try:
        client.images.remove(image_id)
    except docker.errors.APIError:
        pass


def ensure_base(client: Any, tag: str = TAG, mirror: Optional[str] = None, say: Say = lambda s: None,
                force: bool = False) -> Dict[str, Any]:
    """The base image, built only when absent or from another recipe (or ``force``).

    Returns:
        ``{"tag", "id", "built": bool, "recipe": digest}``.
    """
    img = None if force else current(client, tag)
    if img is not None:
        return {"tag": tag, "id": img.id, "built": False, "recipe": recipe_digest()}
    image_id = build_base(client, tag, mirror, say)
    return {"tag": tag, "id": image_id, "built": True, "recipe": recipe_digest()}
