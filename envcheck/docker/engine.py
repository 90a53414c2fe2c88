"""The Docker engine, reached through the ``docker`` SDK (docker-py): connect, check, name failures.

Every way the engine can let a run down becomes an :class:`DockerError` (exit 3, could not run: the input was
fine, the engine could not do the work) whose message says what happened and what to do — no
socket, a socket nobody answers, an engine older than the SDK supports, an API error mid-run.
"""

from __future__ import annotations

import contextlib
import os
from typing import Any, Iterator

from envcheck.errors import CouldNotRun, require_extra

#: Seconds an API call may take (builds and container waits pass their own).
API_TIMEOUT = 120


class DockerError(CouldNotRun):
    """The Docker engine is missing or too old, or it (or an image) could not do the work. Exit
    code 3: could not run (a check failing inside a container is a verify result: exit 1)."""


def engine_address() -> str:
    """Where the SDK looks for the engine: ``$DOCKER_HOST`` or the default Unix socket."""
    return os.environ.get("DOCKER_HOST") or "unix:///var/run/docker.sock"


def short_error(exc: BaseException, limit: int = 300) -> str:
    """One line of an SDK/requests exception (its ``explanation`` when the engine sent one)."""
    text = str(getattr(exc, "explanation", None) or exc).strip().replace("\n", " ")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def check_api_version(version: str, minimum: str) -> None:
    """Refuse an engine whose API is older than ``minimum`` (the SDK's floor).

    Args:
        version: the engine's API version (``"1.41"``); ``minimum``: the oldest one accepted.

    Raises:
        DockerError: too old, or not a version number.
    """
    def key(v: str) -> tuple:
        return tuple(int(x) for x in v.split("."))

    try:
        old = key(version) < key(minimum)
    except ValueError:
        raise DockerError(f"the Docker engine at {engine_address()} reports API version {version!r}, "
                          "which is not a version number") from None
    if old:
        raise DockerError(f"the Docker engine at {engine_address()} speaks API {version}; the docker SDK "
                          f"needs {minimum} or newer: upgrade the engine (docker.io / docker-ce)")


def connect(timeout: float = API_TIMEOUT) -> Any:
    """A ``docker.DockerClient`` talking to a reachable engine whose API is new enough.

    The SDK reads ``DOCKER_HOST`` / ``DOCKER_TLS_VERIFY`` / ``DOCKER_CERT_PATH`` like the CLI, and
    negotiates the API version with the engine.

    Raises:
        DockerError: no engine answers at :func:`engine_address`, or it is too old.
        MissingExtra: the docker SDK is not installed (the message says what to install).
    """
    require_extra("docker")
    import docker
    from docker.constants import MINIMUM_DOCKER_API_VERSION

    try:
        client = docker.from_env(version="auto", timeout=int(timeout))
    except docker.errors.DockerException as exc:
        raise DockerError(
            f"no Docker engine reachable at {engine_address()}: {short_error(exc)}\n"
            "  start it (`sudo systemctl start docker`, or `sudo dockerd &`), or point DOCKER_HOST at a "
            "running engine; `docker info` should answer") from None
    try:
        check_api_version(str(client.api.api_version), MINIMUM_DOCKER_API_VERSION)
    except DockerError:
        client.close()
        raise
    return client


@contextlib.contextmanager
def engine_errors(doing: str) -> Iterator[None]:
    """Turn SDK and connection errors raised inside the block into :class:`DockerError`.

    Args:
        doing: what was being done, for the message ("building envcheck/torch:2.13.0-cpu").
    """
    import docker
    import requests

    try:
        yield
    except (docker.errors.DockerException, requests.exceptions.RequestException) as exc:
        raise DockerError(f"{doing}: {short_error(exc)}") from None


def engine_version(client: Any) -> str:
    """``"20.10.24+dfsg1 (API 1.41)"``."""
    with engine_errors("reading the engine version"):
        v = client.version()
    return f"{v.get('Version', '?')} (API {v.get('ApiVersion', client.api.api_version)})"
