"""The check registry, the collector's probes and the judges agree (adding a check touches all three)."""

from __future__ import annotations

import ast
import inspect

from envcheck.verify import checks as registry
from envcheck.verify import collector
from envcheck.verify.diagnose import _Judge
from envcheck.verify.checks import PROBE_DATA


def test_every_probe_in_the_registry_is_in_the_collector_and_back():
    probes = {c.probe for c in registry.REGISTRY if c.probe}
    assert probes == set(collector.PROBES)
    for name, fn in collector.PROBES.items():
        assert fn.__name__ == f"probe_{name}"


def test_every_check_has_its_judge_and_help():
    for c in registry.REGISTRY:
        assert callable(getattr(_Judge, c.judge, None)), c.name
        assert c.help and "\n" not in c.help, c.name
        for p in c.needs:
            assert p in registry.PROBE_ORDER, (c.name, p)


def test_run_order_is_the_one_the_worker_relies_on():
    order = registry.PROBE_ORDER
    # import first; the libraries loaded right after import (environment) before any other probe
    # touches CUDA or loads more
    assert order[:3] == ("import_torch", "environment", "cuda_build")
    assert order.index("distributed") < order.index("allocation")  # forks before any thread pool
    assert order[-1] == "torch_compile"  # slow: last
    assert len({c.run for c in registry.REGISTRY if c.probe}) == len(order)


def test_probe_data_keys_are_what_the_collector_writes():
    """Every key a probe puts in its data (a literal key of a dict it returns or builds) is in the
    registry's data shape, so replayed facts are checked for everything the collector writes."""
    for name, fn in collector.PROBES.items():
        tree = ast.parse(inspect.getsource(fn))
        written = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Return) and isinstance(node.value, ast.Dict):
                written |= {k.value for k in node.value.keys if isinstance(k, ast.Constant)}
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict) and any(
                    isinstance(t, ast.Name) and t.id == "d" for t in node.targets):
                written |= {k.value for k in node.value.keys if isinstance(k, ast.Constant)}
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "update" \
                    and node.args and isinstance(node.args[0], ast.Dict):
                written |= {k.value for k in node.args[0].keys if isinstance(k, ast.Constant)}
            if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == "d" \
                    and isinstance(node.ctx, ast.Store) and isinstance(node.slice, ast.Constant):
                written.add(node.slice.value)
        spec = PROBE_DATA[name]
        missing = written - set(spec)
        assert not missing, (name, missing)
        assert written, name


def test_probes_for_reads_the_registry():
    assert registry.probes_for(["arch_compat"]) == ["import_torch", "cuda_build"]
    assert registry.probes_for(["environment"]) == ["import_torch", "environment"]
    assert registry.probes_for(["torch_compile", "distributed"]) == ["import_torch", "distributed", "torch_compile"]
    assert registry.probes_for(["lock"]) == ["import_torch", "cuda_build", "torchvision_compat", "torchaudio_compat"]
