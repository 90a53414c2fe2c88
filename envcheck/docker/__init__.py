"""docker: images built from a plan, and verified from inside.

The Docker stage of the pipeline::

    Plan (flags or lock) ──► render Dockerfile ──► build context (+ wheelhouse) ──► image (labels: the lock)
    image ──► containers running verify's collector (device flags from matrices/docker.toml) ──► Facts ──► report

* :mod:`~envcheck.docker.engine` — connect through the docker SDK; every engine failure is a DockerError.
* :mod:`~envcheck.docker.source` — the plan from a lock file or from an image's lock label.
* :mod:`~envcheck.docker.wheelhouse` — the plan's wheels on the host (``pip download``) for ``--no-index`` builds.
* :mod:`~envcheck.docker.build` — context, streamed build, labels, clean-up of failed builds.
* :mod:`~envcheck.docker.inside` — verify's collector in containers (device requests, hang/crash handling).
* :mod:`~envcheck.docker.base` — the local Debian base image (debootstrap + docker import) for air-gapped hosts.
"""
