"""Render a Plan as requirements.txt, environment.yml, Dockerfile and envcheck.lock.toml.

Pure text generation: no I/O beyond reading the templates in ``dockerfiles/`` and ``conda/``.
"""

from __future__ import annotations

import json
import re
import shlex
from typing import Any, Dict, List, Optional

import tomli_w

from envcheck.edge import check_image, comment_text, printable_line
from envcheck.render.common import comment_block, driver_line, template, title, version
from envcheck.render.recipe import recipe_comment
from envcheck.resolve.plan import Plan


def render_requirements(plan: Plan) -> str:
    """``requirements.txt``: the index option, pinned torch + companions, comments saying why.

    Install with ``python -m pip install -r requirements.txt`` (pip ≥ 20.3 for manylinux_x_y tags).
    """
    lines = [
        f"# {title(plan)}",
        f"# Written by envcheck {version()} (`envcheck plan`). Install: python -m pip install -r requirements.txt",
        comment_block(plan),
    ]
    if plan.python:
        lines.append(f"# for Python {plan.python} — install into an interpreter of that version")
    if plan.hashes:
        lines.append("# hash-pinned: pip --require-hashes needs every dependency hashed too — install the "
                     "dependencies first and these with --no-deps, or lock them all "
                     "(uv pip compile --generate-hashes)")
    lines.append(recipe_comment(plan))
    lines += plan.pip_lines()
    if plan.env:
        lines.append("# set in the environment that runs torch: "
                     + comment_text(" ".join(f"{k}={shlex.quote(v)}" for k, v in sorted(plan.env.items()))))
    return "\n".join(lines) + "\n"


def _conda_dependencies(plan: Plan) -> List[str]:
    b = plan.build
    deps = [f"python={plan.python.rstrip('t')}" if plan.python else "python"]
    if plan.python.endswith("t"):
        deps.append("python-freethreading")
    choice = plan.conda
    if choice is not None:
        row, cuda_version = choice
        if cuda_version:
            deps.append(f"pytorch={plan.release.version}=*cuda*")  # never slip to a CPU build
            deps.append(f"cuda-version={cuda_version}")
            deps.append("torchvision=*=*cuda*")
        else:
            cpu = "cpu*" if b.backend == "cpu" and plan.machine.os != "macos" else "*"
            deps.append(f"pytorch={plan.release.version}={cpu}")
            deps.append("torchvision")
        deps.append("torchaudio")
        return [f"  - {yaml_scalar(d)}" for d in deps]
    deps.append("pip")
    pip = [f"      - {yaml_scalar(ln)}" for ln in plan.pip_lines()]
    return [f"  - {yaml_scalar(d)}" for d in deps] + ["  - pip:"] + pip


def render_environment(plan: Plan) -> str:
    """``environment.yml``: conda-forge ``pytorch`` pinned to a CUDA build string with
    ``cuda-version`` for GPU builds conda-forge has; a ``pip:`` section where it has none (ROCm,
    ROCm on WSL, XPU, releases conda-forge lacks). Never the ended ``-c pytorch`` channel.
    """
    b = plan.build
    notes = [comment_block(plan)]
    if plan.conda is None:
        notes.append(f"# conda-forge has no {b.variant} build of torch {plan.release.version} on record: torch "
                     "comes from pip inside the environment")
    else:
        row, cv = plan.conda
        src = row.source[0] if row.source else ""
        notes.append("# " + comment_text(f"conda-forge pytorch {plan.release.version}"
                                         + (f" with cuda-version {cv}" if cv else "") + f" (matrices/conda.toml: {src})"))
        if cv:
            notes.append("# conda-forge CUDA builds need the __cuda virtual package (a driver) at solve time;"
                         " on a machine without one: CONDA_OVERRIDE_CUDA=" + cv)
    steps = ("\n# With conda, the [python] and [install] steps are `conda env create -f environment.yml`"
             " and `conda activate`; run the other steps as the recipe says:\n" + recipe_comment(plan))
    name = re.sub(r"[^A-Za-z0-9_.-]", "-", f"torch-{plan.release.version}-{b.variant}")
    text = template("conda", "environment.yml.in").substitute(
        title=title(plan),
        envcheck_version=version(),
        comments="\n".join(notes),
        name=name,
        dependencies="\n".join(_conda_dependencies(plan)),
    )
    return text + steps + ("\n" if steps else "")


def docker_run_flags(plan: Plan) -> List[str]:
    """The ``docker run`` flags the chosen build needs for its GPU (from matrices/docker.toml)."""
    img = plan.base_image
    return list(img.run_flags) if img else []


def render_dockerfile(plan: Plan, wheelhouse: Optional[str] = None) -> str:
    """``Dockerfile`` from the template the base-image row names.

    Args:
        wheelhouse: a folder (relative to the build context) holding every wheel the plan needs;
            when given, pip installs from it with ``--no-index`` (air-gapped builds).

    Raises:
        UsageError: the matrix has no base image for this build's backend.
    """
    from envcheck.errors import UsageError

    img = plan.base_image
    wheelhouse = wheelhouse or plan.offline or None  # plan --download: the wheels folder beside it
    if img is None:
        raise UsageError(f"no Docker base image on record for the {plan.build.backend} backend "
                         "(matrices/docker.toml)")
    b = plan.build
    python = plan.python.rstrip("t") or "3.12"
    image = check_image(img.image.replace("{python}", python).replace("{rocm}", b.rocm or ""), "base image")
    pins = " ".join(shlex.quote(f"{k}=={v}") for k, v in plan.pins.items())
    pip = "python -m pip install --no-cache-dir"
    if wheelhouse:
        install = (f"COPY {wheelhouse} /tmp/wheelhouse\n"
                   f"RUN {pip} --no-index --find-links /tmp/wheelhouse {pins} \\\n"
                   " && rm -rf /tmp/wheelhouse")
    else:
        opt = ""
        if plan.index_option:
            flag, _, url = plan.index_option.partition(" ")
            opt = f"{flag} {shlex.quote(url)} "
        install = f"RUN {pip} {opt}{pins}"
    post = []
    for s in plan.recipe:
        if s.kind not in ("post-install", "verify"):
            continue
        if s.kind == "post-install" and s.env and not [ln for ln in s.lines() if not ln.startswith("export ")]:
            post.append(f"# {s.marker}: {comment_text(s.title)} (set with ENV)")
            continue
        body = " \\\n && ".join(ln.strip() for ln in s.lines())
        post.append(f"# {s.marker}: {comment_text(s.title)}\nRUN {body}")
    env = [f"ENV {docker_env(k, v)}" for k, v in sorted({**img.env, **plan.env}.items())]
    prereq = [f"# Host prerequisite: {comment_text(p)}" for p in img.prerequisites]
    drv = driver_line(plan)
    if drv:
        prereq.insert(0, f"# Host prerequisite: {comment_text(drv)}")
    for s in plan.recipe:
        if s.kind in ("host", "system", "python", "install"):
            done = {"host": "on the host", "install": "below (RUN pip install)"}.get(
                s.kind, "on the host" if not s.container or s.runs_in == "windows" else "by the base image / template below")
            prereq.append("# " + comment_text(f"{s.marker}: {s.title} — {done}" + (f" ({s.url})" if s.url else "")))
    labels = {
        "org.opencontainers.image.title": f"torch {plan.pins['torch']}",
        "io.envcheck.torch": plan.pins["torch"],
        "io.envcheck.variant": b.variant,
        "io.envcheck.python": plan.python,
    }
    tag = f"envcheck/torch:{plan.pins['torch'].replace('+', '-')}"
    text = template("dockerfiles", img.template).substitute(
        title=title(plan),
        envcheck_version=version(),
        comments=comment_block(plan),
        tag=re.sub(r"[^a-zA-Z0-9_.:/-]", "-", tag),
        run_flags=comment_text(" ".join(shlex.quote(f) for f in docker_run_flags(plan))),
        prerequisites="\n".join(prereq),
        base_image=image,
        env="\n".join(env),
        install=install,
        post_install="\n".join(post),
        python=python,
        labels=" \\\n      ".join(f"{k}={json.dumps(v)}" for k, v in labels.items()),
    )
    return re.sub(r"\n{3,}", "\n\n", text)


def yaml_scalar(text: str) -> str:
    """``text`` as a YAML flow scalar: plain when it cannot be read as anything else, otherwise
    double-quoted (a JSON string is a valid YAML double-quoted scalar)."""
    if re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9_.=<>!*,+/:@~%-]*(?: [A-Za-z0-9_.=<>!*,+/:@~%-]+)*", text) \
            and ": " not in text and not text.endswith(":"):
        return text
    return json.dumps(text)


def docker_env(key: str, value: str) -> str:
    """``KEY=VALUE`` for a Dockerfile ``ENV`` line: the key must be a variable name; a value that is
    not plain is double-quoted with ``\\``, ``"`` and ``$`` escaped (Dockerfile ``ENV`` syntax).

    Raises:
        UsageError: the key is not a variable name (matrix data gone wrong).
    """
    from envcheck.errors import UsageError

    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key):
        raise UsageError(f"ENV {key!r}: not an environment variable name")
    if re.fullmatch(r"[A-Za-z0-9_.,:/=@+%-]*", value):
        return f"{key}={value}"
    if not printable_line(value):
        raise UsageError(f"ENV {key}: the value holds a control or line-break character")
    escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("$", "\\$")
    return f'{key}="{escaped}"'


def render_uv(plan: Plan) -> str:
    """``pyproject.uv.toml``: the ``[tool.uv]`` tables a uv project needs for this build.

    The index is ``explicit`` (used only for the packages routed to it) and each source carries
    the platform's PEP 508 marker, so the same pyproject still resolves on other platforms.
    """
    b = plan.build
    bare = {k: v.split("+", 1)[0] for k, v in plan.pins.items()}
    doc: Dict[str, Any] = {"project": {"dependencies": [f"{k}=={v}" for k, v in bare.items()]}}
    marker = plan.marker.expression if plan.marker else ""
    uv: Dict[str, Any] = {}
    if b.channel != "pypi" and plan.index_kind == "simple":
        name = f"pytorch-{b.variant}"
        uv["index"] = [{"name": name, "url": plan.index_url, "explicit": True}]
        src = {"index": name}
        if marker:
            src["marker"] = marker
        uv["sources"] = {pkg: [dict(src)] for pkg in plan.pins}
    elif plan.index_kind == "find-links":
        uv["find-links"] = [plan.index_url]
        doc["project"]["dependencies"] = [f"{k}=={v}" for k, v in plan.pins.items()]
    if plan.python:
        doc["project"]["requires-python"] = f"=={plan.python.rstrip('t')}.*"
    if uv:
        doc["tool"] = {"uv": uv}
    head = [f"# {title(plan)}",
            f"# Written by envcheck {version()} (`envcheck plan --format uv`): merge these tables into your",
            "# pyproject.toml, then `uv lock && uv sync` (uv sync is the [python] and [install] steps below).",
            comment_block(plan), recipe_comment(plan)]
    return "\n".join(head) + "\n" + tomli_w.dumps(doc)


def render_lock(plan: Plan, generated: Optional[str] = None) -> str:
    """``envcheck.lock.toml`` as text (:mod:`envcheck.lock` writes it; ``verify --lock`` reads it)."""
    from envcheck.lock import render_lock as _render

    return _render(plan, generated, title(plan))
