"""Render a Plan as requirements.txt, environment.yml, Dockerfile and envcheck.lock.toml.

Pure text generation: no I/O beyond reading the templates in ``dockerfiles/`` and ``conda/``.
"""

from __future__ import annotations

import re
import shlex


from envcheck.edge import check_image, comment_text, printable_line
from envcheck.jsontypes import json_string
from envcheck.render.common import comment_block, driver_line, template, title, version
from envcheck.render.recipe import recipe_comment
from envcheck.resolve.plan import Plan

TYPE_CHECKING = False  # typing is not imported at run time (start-up, issue #9)
if TYPE_CHECKING:  # pragma: no cover
    from typing import Any, List, Optional, Sequence


def _index_lines(plan: Plan, style: str) -> List[str]:
    """The index option and the comment saying why that one.

    A whole file (``full``) uses ``--index-url``: it installs only torch and its companions, the
    PyTorch index serves their dependencies too, and nothing can come from another index by a
    higher version. Lines for an existing project (``project``) use ``--extra-index-url``: an
    ``--index-url`` there would cut every other package of the project off from PyPI; the pins carry
    the build's local label (``+cu130``), which only the PyTorch index serves.
    """
    opt = plan.index_option
    if not opt or not opt.startswith("--index-url"):
        return [opt] if opt else []
    if style == "project":
        out = ["# --extra-index-url, not --index-url: your other packages still come from PyPI; the +label "
               "pins below only exist on the PyTorch index"]
        if any("+" not in v for v in plan.pins.values()):
            out.append("# caution: a pin without a +label could also be met by PyPI's file of that version; "
                       "uv's explicit index (`--format uv`) routes it reliably")
        return out + ["--extra-index-url " + plan.index_url]
    return ["# --index-url: this file installs torch alone, and the PyTorch index also serves its dependencies; "
            "adding torch to an existing requirements file? use `--style project` (--extra-index-url)", opt]


def render_requirements(plan: Plan, style: str = "full") -> str:
    """``requirements.txt``: the index option (and why that one), pinned torch + companions.

    Args:
        style: ``full`` — a file of its own (``python -m pip install -r requirements.txt``, pip ≥
            20.3 for manylinux_x_y tags), with every comment; ``project`` — only the lines to add
            to an existing requirements file, under a short header.
    """
    pins = [ln for ln in plan.pip_lines() if not ln.startswith("--")]
    if style == "project":
        lines = [f"# {title(plan)} — envcheck {version()}: add these lines to your requirements file",
                 *_index_lines(plan, style), *pins]
        return "\n".join(lines) + "\n"
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
                     "(`envcheck plan --format pylock`)")
    lines.append(recipe_comment(plan))
    lines += _index_lines(plan, style) + pins
    if plan.env:
        lines.append("# set in the environment that runs torch: "
                     + comment_text(" ".join(f"{k}={shlex.quote(v)}" for k, v in sorted(plan.env.items()))))
    return "\n".join(lines) + "\n"


def conda_specs(plan: Plan) -> List[str]:
    """The conda-forge match specs of the environment (empty when torch comes from pip inside it)."""
    choice = plan.conda
    if choice is None:
        return []
    deps = [f"python={choice.python}"]
    vision = "torchvision" not in plan.without  # --without torchvision: not in any file
    if choice.cuda_version:
        deps.append(f"pytorch={choice.torch}=*cuda*")  # never slip to a CPU build
        deps.append(f"cuda-version={choice.cuda_version}")
        deps += ["torchvision=*=*cuda*"] if vision else []
    else:
        cpu = "cpu*" if plan.machine.os != "macos" else "*"
        deps.append(f"pytorch={choice.torch}={cpu}")
        deps += ["torchvision"] if vision else []
    return deps + [s for s in plan.conda_select if s not in deps]


def _conda_dependencies(plan: Plan) -> List[str]:
    deps = conda_specs(plan)
    if deps:
        return [f"  - {d}" for d in deps]
    deps = [f"python={plan.python.rstrip('t')}" if plan.python else "python", *plan.conda_select, "pip"]
    pip = [f"      - {yaml_scalar(ln)}" for ln in plan.pip_lines()]
    return [f"  - {yaml_scalar(d)}" for d in deps] + ["  - pip:"] + pip


def _index_host(plan: Plan) -> str:
    """``download.pytorch.org`` / ``repo.radeon.com`` / ``pypi.org``: where the plan's torch comes from."""
    from envcheck.edge import host_of

    return host_of(plan.index_url) or plan.index_url or "PyPI"


def conda_notes(plan: Plan, prefix: str = "# ") -> List[str]:
    """Why this conda route: conda-forge's own build (and how it differs from the pip plan), or why
    pip runs inside the environment; and the specs named beside it (``[[conda_select]]``)."""
    choice = plan.conda
    also = [f"{prefix}also named: {', '.join(plan.conda_select)} — the interpreter / ARM CUDA variant this plan is "
            "for, which the solver would not pick by itself (matrices/conda.toml [[conda_select]] says why)"
            ] if plan.conda_select else []
    if choice is None:
        return [f"{prefix}pip inside conda: {plan.conda_reason or 'conda-forge has no build for it'}; torch "
                f"{plan.pins['torch']} comes from the pip plan's index ({_index_host(plan)})"] + also
    row = choice.row
    src = row.source[-1] if row.source else ""
    out = [f"{prefix}conda-forge pytorch {choice.torch}" + (f" with cuda-version {choice.cuda_version}"
                                                            if choice.cuda_version else " (CPU build)")
           + f": {choice.why}", f"{prefix}source: matrices/conda.toml ({src}; confidence {row.confidence})"]
    if choice.torch != plan.release.version or (choice.cuda_version is None) != (plan.build.backend != "cuda"):
        out.append(f"{prefix}the pip plan chose torch {plan.pins['torch']}; conda-forge is resolved on its own terms")
    out += [f"{prefix}assumed: {a}" for a in choice.assumptions] + also
    if choice.cuda_version:
        out.append(f"{prefix}conda-forge CUDA builds need the __cuda virtual package (a driver) at solve time; "
                   f"on a machine without one: CONDA_OVERRIDE_CUDA={choice.cuda_version.split('.')[0]}")
    return out


def render_environment(plan: Plan) -> str:
    """``environment.yml``: conda-forge's newest ``pytorch`` this machine runs, pinned to a CUDA build
    string with its ``cuda-version`` (resolved on conda-forge's own terms, :mod:`envcheck.resolve.conda`);
    a ``pip:`` section only where conda-forge has nothing for the GPU (ROCm, AMD on WSL, XPU), said
    in the file. Never the ended ``-c pytorch`` channel. The driver it asks for is its own build's
    (:meth:`Plan.conda_plan`), not the pip plan's.
    """
    plan = plan.conda_plan()
    b = plan.build
    notes = [comment_block(plan), *conda_notes(plan)]
    steps = ("\n# With conda, the [python] and [install] steps are `conda env create -f environment.yml`"
             " and `conda activate`; run the other steps as the recipe says:\n" + recipe_comment(plan, venv=False))
    tag = f"{plan.conda.torch}-{'cuda' + plan.conda.cuda_version if plan.conda.cuda_version else 'cpu'}" \
        if plan.conda else f"{plan.release.version}-{b.variant}"
    name = _dashed(f"torch-{tag}", _NAME_CHARS)
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


OS_NAMES = {"windows": "Windows", "macos": "macOS"}
#: where a Dockerfile puts the plan's lock in the image (its verify step reads it there)
IMAGE_LOCK_DIR = "/opt/envcheck"


def dockerfile_plan(plan: Plan) -> Plan:
    """The plan a Dockerfile holds: a Dockerfile is always a Linux container, so a Windows or macOS
    plan's is its container plan (re-resolved, :mod:`envcheck.resolve.container`).

    Raises:
        UsageError: nothing fits that container (the plan's ``container_note`` says why).
    """
    from envcheck.errors import UsageError

    if plan.machine.os == "linux":
        return plan
    if plan.container is None:
        raise UsageError(plan.container_note or "no Dockerfile: this plan has no Linux container plan")
    return plan.container


def _lock_in_image(plan: Plan) -> str:
    """A RUN line writing the plan's lock to ``IMAGE_LOCK_DIR`` (no COPY: the Dockerfile needs nothing
    beside it in the build context); its ``generated`` is fixed so the layer cache holds."""
    from envcheck.resolve.recipe import LOCK_NAME

    lines = render_lock(plan, generated="with this Dockerfile").rstrip("\n").split("\n")  # \n only: data stays data
    args = " \\\n    ".join(shlex.quote(ln) for ln in lines)
    return (f"# the plan's lock, for `envcheck verify --lock {IMAGE_LOCK_DIR}/{LOCK_NAME}` (below, and in the image)\n"
            f"RUN mkdir -p {IMAGE_LOCK_DIR} && printf '%s\\n' \\\n    {args} \\\n    > {IMAGE_LOCK_DIR}/{LOCK_NAME}")


#: where a Dockerfile's setup comments say a recipe step is done: in the image, by its pip line, else outside it
IN_IMAGE, BY_PIP = "by the base image / template below", "below (RUN pip install)"


def _done_where(step: Any, wsl: bool) -> str:
    """Where a Dockerfile is told a setup step happens, from the step's own data: ``container`` (False: the
    host does it) and ``runs_in`` — a step the image cannot do is done on the host, and on WSL the
    Windows host and the WSL2 guest are named apart (breaker6 F12: "inside the WSL guest … — on the host")."""
    if step.kind == "install":
        return BY_PIP
    if step.kind != "host" and step.container and step.runs_in != "windows":
        return IN_IMAGE
    if wsl:
        return "on the Windows host, not in the image" if step.runs_in == "windows" else "in the WSL2 guest, not in the image"
    return "on the host"


def _and_list(words: List[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return ", ".join(words[:-1]) + " and " + words[-1] if len(words) > 1 else "".join(words)


def render_dockerfile(plan: Plan, wheelhouse: Optional[str] = None, host: Optional[Plan] = None) -> str:
    """``Dockerfile`` from the template the base-image row names — always a Linux container: for a
    Windows or macOS plan, from its container plan (:func:`dockerfile_plan`), said in the file.

    Args:
        wheelhouse: a folder (relative to the build context) holding every wheel the plan needs;
            when given, pip installs from it with ``--no-index`` (air-gapped builds).
        host: the Windows / macOS plan ``plan`` is the container plan of (``envcheck docker build``
            passes it), for the sentence that says so.

    Raises:
        UsageError: the matrix has no base image for this build's backend.
    """
    from envcheck.errors import UsageError

    wheelhouse = wheelhouse or plan.offline or None  # plan --download: the wheels folder beside it
    host, plan = host or plan, dockerfile_plan(plan)
    img = plan.base_image
    if img is None:
        raise UsageError(plan.base_image_why or f"no Docker base image on record for the {plan.build.backend} "
                         "backend (matrices/docker.toml)")
    b = plan.build
    python = plan.python or "3.12"  # the image's Python is the plan's (resolve.plan._base_image chose the row)
    image = check_image(img.image.replace("{python}", python).replace("{rocm}", b.rocm or ""), "base image")
    pins = " ".join(shlex.quote(r) for r in plan.requirements())
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
        if s.kind == "verify":  # its lock travels in the image (the step reads it relative to its folder)
            post.append(_lock_in_image(plan))
            body = f"cd {IMAGE_LOCK_DIR} \\\n && {body}"
        post.append(f"# {s.marker}: {comment_text(s.title)}\nRUN {body}")
    env = [f"ENV {docker_env(k, v)}" for k, v in sorted({**img.env, **plan.env}.items())]
    setup = [(s, _done_where(s, plan.machine.wsl)) for s in plan.recipe if s.kind in ("host", "system", "python", "install")]
    outside = [s.marker for s, done in setup if done not in (IN_IMAGE, BY_PIP)]
    # the image row's prerequisite names the steps outside the image from the recipe itself (breaker6 F12)
    said = "the recipe's " + ("step " if len(outside) == 1 else "steps ") + _and_list(outside) + " below"
    prereq = [f"# Host prerequisite: {comment_text(p.replace('{outside_steps}', said))}" for p in img.prerequisites
              if outside or "{outside_steps}" not in p]
    drv = driver_line(plan)
    if drv:
        prereq.insert(0, f"# Host prerequisite: {comment_text(drv)}")
    for s, done in setup:
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
        comments=comment_block(plan) + ("\n# " + comment_text(
            f"A Dockerfile is a Linux container, so this is the plan re-resolved for one, not the "
            f"{OS_NAMES.get(host.machine.os, host.machine.os)} plan ({host.title}): {host.container_note}.")
                                        if plan is not host else ""),
        tag=_dashed(tag, _TAG_CHARS),
        run_flags=comment_text(" ".join(shlex.quote(w) for f in docker_run_flags(plan) for w in shlex.split(f))),
        prerequisites="\n".join(prereq),
        base_image=image,
        env="\n".join(env),
        install=install,
        post_install="\n".join(post),
        python=python,
        about=comment_text(img.says),
        apt=" ".join(shlex.quote(p) for p in _image_apt(img.apt, plan.recipe)),
        uv_image=check_image(img.uv_image, "uv image") if img.uv_image else "",
        labels=" \\\n      ".join(f"{k}={json_string(v)}" for k, v in labels.items()),
    )
    while "\n\n\n" in text:  # the blank lines of empty placeholders: at most one in a row
        text = text.replace("\n\n\n", "\n\n")
    return text


def _image_apt(base: Sequence[str], recipe: Sequence[Any]) -> List[str]:
    """The image's apt packages: its base row's (docker.toml) and those of the recipe's system steps that
    run in the container (recipe.toml ``apt``), each once — the recipe is the one source of a step's packages."""
    out = list(base)
    for s in recipe:
        if s.kind == "system" and s.container and s.runs_in == "linux":
            out += [p for p in s.apt if p not in out]
    return out


#: the characters a conda environment name keeps (any other becomes ``-``); a Docker tag also keeps ``:/``
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")
_TAG_CHARS = _NAME_CHARS | frozenset(":/")
#: an ``ENV`` value of only these characters is written as it is
_PLAIN_ENV_CHARS = _NAME_CHARS | frozenset(",:/=@+%")


def _dashed(text: str, keep: frozenset) -> str:
    """``text`` with every character not in ``keep`` replaced by ``-``."""
    return "".join(ch if ch in keep else "-" for ch in text)


def yaml_scalar(text: str) -> str:
    """``text`` as a YAML flow scalar: plain when it cannot be read as anything else, otherwise
    double-quoted (a JSON string is a valid YAML double-quoted scalar)."""
    if re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9_.=<>!*,+/:@~%-]*(?: [A-Za-z0-9_.=<>!*,+/:@~%-]+)*", text) \
            and ": " not in text and not text.endswith(":"):
        return text
    return json_string(text)


def docker_env(key: str, value: str) -> str:
    """``KEY=VALUE`` for a Dockerfile ``ENV`` line: the key must be a variable name; a value that is
    not plain is double-quoted with ``\\``, ``"`` and ``$`` escaped (Dockerfile ``ENV`` syntax).

    Raises:
        UsageError: the key is not a variable name (matrix data gone wrong).
    """
    from envcheck.errors import UsageError

    if not (key.isascii() and key.isidentifier()):  # [A-Za-z_][A-Za-z0-9_]*
        raise UsageError(f"ENV {key!r}: not an environment variable name")
    if set(value) <= _PLAIN_ENV_CHARS:
        return f"{key}={value}"
    if not printable_line(value):
        raise UsageError(f"ENV {key}: the value holds a control or line-break character")
    escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("$", "\\$")
    return f'{key}="{escaped}"'


def render_lock(plan: Plan, generated: Optional[str] = None) -> str:
    """``envcheck.lock.toml`` as text (:mod:`envcheck.lock` writes it; ``verify --lock`` reads it)."""
    from envcheck.lock import lock_body, lock_head
    from envcheck.render import shared

    return lock_head(generated, title(plan)) + shared(plan, "lock", lambda: lock_body(plan))
