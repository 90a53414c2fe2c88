"""``fleet k8s``: a Kubernetes Indexed Job that verifies one GPU node per pod.

``completions = parallelism = nodes``, ``completionMode: Indexed``; required pod anti-affinity and
a hostname topology spread put each pod on its own node; the GPU resource request (NVIDIA's
``nvidia.com/gpu`` or AMD's ``amd.com/gpu``) makes the scheduler choose GPU nodes; ``/dev/shm`` is
a memory ``emptyDir`` (a container's default is 64 MiB). Each pod writes its node report to a
PersistentVolumeClaim (``--pvc``) or prints it on stdout as one ``ENVCHECK-REPORT {...}`` line.
The text is YAML (block style, strings JSON-quoted), for ``kubectl apply -f``.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from typing import Any, Dict, List, Optional

#: Where the GPU resource comes from, by vendor.
RESOURCE = {"nvidia": "nvidia.com/gpu", "amd": "amd.com/gpu"}
#: Where the plan's lock is mounted in the pod (from a ConfigMap the manifest carries).
LOCK_DIR = "/etc/envcheck"
#: The marker in front of a report printed on stdout.
MARKER = "ENVCHECK-REPORT "


@dataclass(frozen=True)
class K8sOptions:
    image: str
    nodes: int = 1
    name: str = "envcheck-fleet"
    namespace: Optional[str] = None
    vendor: str = "nvidia"
    gpus_per_node: int = 1
    tier: str = "full"
    pvc: Optional[str] = None
    shm: str = "16Gi"
    envcheck: str = "envcheck"
    lock_text: Optional[str] = None
    node_selector: Optional[Dict[str, str]] = None


#: Kubernetes object names (apimachinery validation): a DNS-1123 label (at most 63 characters:
#: Job, Namespace — a Job's name is also a label value) and a DNS-1123 subdomain (at most 253: a PVC).
_DNS_LABEL = re.compile(r"[a-z0-9](?:[-a-z0-9]*[a-z0-9])?", re.ASCII)
_DNS_SUBDOMAIN = re.compile(r"[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*", re.ASCII)
#: A label's value (empty, or at most 63 alphanumerics, ``-_.`` inside) and a key's name part.
_LABEL_VALUE = re.compile(r"(?:[A-Za-z0-9](?:[-A-Za-z0-9_.]*[A-Za-z0-9])?)?", re.ASCII)
#: A resource quantity (``16Gi``, ``512M``, ``1e9``).
_QUANTITY = re.compile(r"(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+|[KMGTPE]i|[mkMGTPE])?", re.ASCII)


def check_options(o: K8sOptions) -> K8sOptions:
    """Every string of ``o`` checked against the Kubernetes grammar it will be read with: the Job's
    name and namespace DNS-1123 labels (the ConfigMap is the name + ``-lock``), the PVC a DNS-1123
    subdomain, the image an OCI reference, ``--shm`` a quantity, ``--node-selector`` label keys and
    values. What passes is still escaped by :func:`to_yaml`.

    Raises:
        UsageError: a value that is not (one line naming the flag).
    """
    from envcheck.edge import check_image, check_name
    from envcheck.errors import UsageError

    def name(value: str, flag: str, pattern: re.Pattern[str], most: int, what: str) -> None:
        check_name(value, flag, max_len=most)
        if not pattern.fullmatch(value):
            raise UsageError(f"{flag} {value!r}: not a Kubernetes {what} (lowercase letters, digits and '-'"
                             f"{', dots between parts' if pattern is _DNS_SUBDOMAIN else ''}; start and end "
                             f"alphanumeric; at most {most} characters)")

    name(o.name, "--name", _DNS_LABEL, 58, "name")  # + "-lock" for the ConfigMap stays a label
    if o.namespace is not None:
        name(o.namespace, "--namespace", _DNS_LABEL, 63, "namespace")
    if o.pvc is not None:
        name(o.pvc, "--pvc", _DNS_SUBDOMAIN, 253, "claim name")
    check_image(o.image, "--image")
    check_name(o.shm, "--shm")
    if not _QUANTITY.fullmatch(o.shm):
        raise UsageError(f"--shm {o.shm!r}: not a Kubernetes quantity (e.g. 16Gi, 512Mi)")
    for key, value in (o.node_selector or {}).items():
        check_name(key, "--node-selector")
        check_name(value, "--node-selector")
        prefix, _, label = key.rpartition("/")
        if (prefix and (len(prefix) > 253 or not _DNS_SUBDOMAIN.fullmatch(prefix))) or not label \
                or len(label) > 63 or not _LABEL_VALUE.fullmatch(label):
            raise UsageError(f"--node-selector {key!r}: not a label key ([prefix/]name, e.g. nvidia.com/gpu.product)")
        if len(value) > 63 or not _LABEL_VALUE.fullmatch(value):
            raise UsageError(f"--node-selector {key}={value!r}: not a label value (at most 63 letters, digits, "
                             "'-', '_', '.'; alphanumeric at both ends)")
    return o


def job(o: K8sOptions) -> Dict[str, Any]:
    """The batch/v1 Job as plain data."""
    labels = {"app.kubernetes.io/name": "envcheck", "envcheck.io/fleet": o.name}
    verify = [o.envcheck, "verify", "--tier", o.tier, "--host", "$(NODE_NAME)"]
    if o.lock_text is not None:
        verify += ["--lock", f"{LOCK_DIR}/envcheck.lock.toml"]
    cmd = " ".join('"$NODE_NAME"' if a == "$(NODE_NAME)" else shlex.quote(a) for a in verify)
    if o.pvc:
        script = f'{cmd} --report "/reports/$JOB_NAME/"'
    else:
        script = (f'{cmd} --report /tmp/envcheck/ >&2; rc=$?; '
                  f'printf "{MARKER}"; tr -d "\\n" < "/tmp/envcheck/$NODE_NAME.json"; echo; exit $rc')
    mounts: List[Dict[str, Any]] = [{"name": "dshm", "mountPath": "/dev/shm"}]
    volumes: List[Dict[str, Any]] = [{"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": o.shm}}]
    if o.lock_text is not None:
        mounts.append({"name": "lock", "mountPath": LOCK_DIR, "readOnly": True})
        volumes.append({"name": "lock", "configMap": {"name": f"{o.name}-lock"}})
    if o.pvc:
        mounts.append({"name": "reports", "mountPath": "/reports"})
        volumes.append({"name": "reports", "persistentVolumeClaim": {"claimName": o.pvc}})
    resource = RESOURCE[o.vendor]
    pod_spec: Dict[str, Any] = {
        "restartPolicy": "Never",
        "affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"envcheck.io/fleet": o.name}},
             "topologyKey": "kubernetes.io/hostname"}]}},
        "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "kubernetes.io/hostname",
                                       "whenUnsatisfiable": "DoNotSchedule",
                                       "labelSelector": {"matchLabels": {"envcheck.io/fleet": o.name}}}],
        "tolerations": [{"key": resource, "operator": "Exists", "effect": "NoSchedule"}],
        "containers": [{
            "name": "envcheck",
            "image": o.image,
            "command": ["/bin/sh", "-c", script],
            "env": [
                {"name": "NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}},
                {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
                {"name": "JOB_NAME", "value": o.name},
            ],
            "resources": {"limits": {resource: str(o.gpus_per_node)}, "requests": {resource: str(o.gpus_per_node)}},
            "volumeMounts": mounts,
        }],
        "volumes": volumes,
    }
    if o.node_selector:
        pod_spec["nodeSelector"] = dict(o.node_selector)
    meta: Dict[str, Any] = {"name": o.name, "labels": labels}
    if o.namespace:
        meta["namespace"] = o.namespace
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": meta,
        "spec": {
            "completionMode": "Indexed",
            "completions": o.nodes,
            "parallelism": o.nodes,
            "backoffLimit": o.nodes,
            "ttlSecondsAfterFinished": 86400,
            "template": {"metadata": {"labels": labels}, "spec": pod_spec},
        },
    }


def image_and_vendor(image: Optional[str], vendor: Optional[str], lock: Any = None) -> tuple[str, str]:
    """The image and GPU vendor: as given, else from the plan (``lock``): the tag ``envcheck docker
    build --lock`` gives its image, and AMD for a ROCm variant.

    Raises:
        UsageError: neither an image nor a lock.
    """
    from envcheck.errors import UsageError

    if lock is not None:
        from envcheck.docker.build import default_tag

        image = image or default_tag({"torch": str(lock.expect.get("torch_version") or f"{lock.torch}+{lock.variant}")})
        vendor = vendor or ("amd" if str(lock.variant).startswith("rocm") else "nvidia")
    if not image:
        raise UsageError("give --image (the image to verify) or --lock (the plan whose image `envcheck docker build` tags)")
    return image, vendor or "nvidia"


def gather_text(o: K8sOptions) -> str:
    """How to collect the reports once the Job is done (YAML comments)."""
    ns = f" -n {o.namespace}" if o.namespace else ""
    if o.pvc:
        how = [f"reports land in the PVC {o.pvc} under /reports/{o.name}/; copy them out with any pod that",
               f"mounts it, e.g. kubectl cp{ns} <pod>:/reports/{o.name} reports/ ; then: envcheck fleet merge reports/"]
    else:
        how = ["each pod prints its report as one line starting with 'ENVCHECK-REPORT ':",
               "  mkdir -p reports; for p in $(kubectl get pods" + ns + f" -l envcheck.io/fleet={o.name} -o name); do",
               "    kubectl logs" + ns + " \"$p\" | sed -n 's/^ENVCHECK-REPORT //p' > \"reports/${p#pod/}.json\"; done",
               "  envcheck fleet merge reports/"]
    from envcheck.edge import comment_text

    return "\n".join("# " + comment_text(line) for line in [
        f"envcheck fleet: an Indexed Job verifying {o.nodes} GPU node(s), one pod per node (`envcheck fleet k8s`).",
        f"  kubectl apply{ns} -f job.yaml && kubectl wait{ns} --for=condition=complete --timeout=1h job/{o.name}",
        "(a pod whose node fails a check exits 1: the Job then reports failed pods; gather all the same)",
        *how,
        f"The image ({o.image}) must have envcheck and the environment to verify (e.g. built by",
        "`envcheck docker build --lock envcheck.lock.toml` with envcheck installed in it).",
    ])


def to_yaml(data: Any, indent: int = 0) -> str:
    """Block-style YAML for dicts/lists of str/int/bool; every string (and every key that is not a
    plain word) a double-quoted YAML scalar with every non-printable-ASCII character escaped."""
    pad = "  " * indent
    if isinstance(data, dict):
        if not data:
            return pad + "{}\n"
        out = []
        for k, v in data.items():
            key = str(k) if re.fullmatch(r"[A-Za-z][A-Za-z0-9_-]*", str(k), re.ASCII) else _quoted(str(k))
            if isinstance(v, (dict, list)) and v:
                out.append(f"{pad}{key}:\n{to_yaml(v, indent + 1)}")
            else:
                out.append(f"{pad}{key}: {_scalar(v)}\n")
        return "".join(out)
    if isinstance(data, list):
        out = []
        for item in data:
            if isinstance(item, (dict, list)) and item:
                body = to_yaml(item, indent + 1)
                out.append(f"{pad}- {body.lstrip()}")
            else:
                out.append(f"{pad}- {_scalar(item)}\n")
        return "".join(out)
    return pad + _scalar(data) + "\n"


def _scalar(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return str(v)
    if v is None:
        return "null"
    if isinstance(v, dict):
        return "{}"
    if isinstance(v, list):
        return "[]"
    return _quoted(str(v))


#: YAML's short escapes in a double-quoted scalar.
_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\t": "\\t", "\r": "\\r", "\0": "\\0"}


def _quoted(text: str) -> str:
    """``text`` as a YAML double-quoted scalar: printable ASCII as it is, everything else escaped
    (``\\xXX``, ``\\uXXXX``, ``\\UXXXXXXXX``), so no character of it can end the scalar, break the
    line or be folded (YAML folds raw line breaks, U+2028 included, inside quotes)."""
    out = []
    for ch in text:
        n = ord(ch)
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif 0x20 <= n < 0x7F:
            out.append(ch)
        elif n <= 0xFF:
            out.append(f"\\x{n:02x}")
        elif n <= 0xFFFF:
            out.append(f"\\u{n:04x}")
        else:
            out.append(f"\\U{n:08x}")
    return '"' + "".join(out) + '"'


def config_map(o: K8sOptions) -> Dict[str, Any]:
    """The ConfigMap that carries the plan's lock into every pod (``--lock``)."""
    meta: Dict[str, Any] = {"name": f"{o.name}-lock", "labels": {"app.kubernetes.io/name": "envcheck"}}
    if o.namespace:
        meta["namespace"] = o.namespace
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta,
            "data": {"envcheck.lock.toml": o.lock_text or ""}}


def manifest(o: K8sOptions) -> str:
    """The gather comments, then (with a lock) its ConfigMap, then the Job, as YAML documents."""
    docs = ([config_map(o)] if o.lock_text is not None else []) + [job(o)]
    return gather_text(o) + "\n" + "---\n".join(to_yaml(d) for d in docs)
