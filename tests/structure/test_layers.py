"""The layout keeps its promises: no import cycle between envcheck's packages, and the command line
stays a thin layer (DESIGN.md "Layers"). Imports are read from the source (function-level ones too),
so a lazy import cannot hide a cycle."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Dict, List, Set

PKG = Path(__file__).resolve().parents[2] / "envcheck"


def _module_name(path: Path) -> str:
    rel = path.relative_to(PKG.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(path: Path) -> Set[str]:
    """Every ``envcheck.…`` module ``path`` imports when it runs, anywhere in the file (function-level
    imports too; not those under ``if TYPE_CHECKING:``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    me = _module_name(path).split(".")
    is_pkg = path.name == "__init__.py"
    out: Set[str] = set()
    # imports only for type checkers (``if TYPE_CHECKING:``) are not run, so they make no cycle
    typing_only = {id(n) for block in ast.walk(tree) if isinstance(block, ast.If) and _is_type_checking(block.test)
                   for stmt in block.body for n in ast.walk(stmt)}
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.startswith("envcheck")}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = me if is_pkg else me[:-1]
                base = base[: len(base) - (node.level - 1)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            if mod.startswith("envcheck"):
                out.add(mod)
                out |= {f"{mod}.{a.name}" for a in node.names}
    return out


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def unit(module: str) -> str:
    """The package a module belongs to: ``envcheck.matrix.index.data`` → ``envcheck.matrix``
    (top-level modules such as ``envcheck.errors`` are their own unit)."""
    parts = module.split(".")
    return ".".join(parts[:2])


def graph() -> Dict[str, Set[str]]:
    modules = {_module_name(p) for p in PKG.rglob("*.py")}
    units = {unit(m) for m in modules}
    g: Dict[str, Set[str]] = {u: set() for u in units}
    for p in PKG.rglob("*.py"):
        src = unit(_module_name(p))
        for m in imports_of(p):
            dst = unit(m)
            if dst in units and dst != src and dst != "envcheck.__init__":
                g[src].add(dst)
    return g


def cycles(g: Dict[str, Set[str]]) -> List[List[str]]:
    """The strongly connected components with more than one package (Tarjan), each sorted."""
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    stack: List[str] = []
    out: List[List[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(g.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(g):
        if v not in index:
            visit(v)
    return out


def test_the_graph_is_read_from_source():
    g = graph()
    # the reading must see real edges, lazy (function-level) imports included, or this file proves nothing
    assert "envcheck.matrix" in g["envcheck.resolve"]
    assert "envcheck.update" in g["envcheck.cli"]  # `matrix update` imports it inside run_update_cmd


def test_no_import_cycle_between_packages():
    assert cycles(graph()) == []


def test_matrix_and_resolve_never_import_the_network_refresh():
    g = graph()
    assert "envcheck.update" not in g["envcheck.matrix"]
    assert "envcheck.update" not in g["envcheck.resolve"]


def test_cycle_finder_finds_one():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == [["a", "b", "c"]]


#: modules every command may import: the shared flags and the console (DESIGN.md "Layers")
CLI_SHARED = {"envcheck.cli.flags", "envcheck.cli.output", "envcheck.cli.conventions"}  # + colour/quiet/strict/JSON rules
def cli_violations(module: str, imports: Set[str]) -> List[str]:
    """The imports that break "commands never import each other": a ``cli/`` module may import the
    shared ones (:data:`CLI_SHARED`) and itself, never another command nor ``envcheck.cli`` (whose
    ``build_parser`` imports every command)."""
    bad = []
    for m in sorted(imports):
        parts = m.split(".")
        if parts[:2] != ["envcheck", "cli"]:
            continue
        other = ".".join(parts[:3])
        if other == "envcheck.cli" or (other != module and other not in CLI_SHARED):
            bad.append(f"{module} imports {other if len(parts) > 2 else m}")
    return bad


def test_command_modules_never_import_each_other():
    """No exception list: a command that needs the whole parser (`envcheck config`) is handed
    ``args.build_parser`` by ``envcheck.cli.main``."""
    bad = []
    for p in sorted((PKG / "cli").glob("*.py")):
        if p.name != "__init__.py":
            bad += cli_violations(_module_name(p), imports_of(p))
    assert bad == []


def test_the_cli_rule_finds_a_command_importing_another():
    assert cli_violations("envcheck.cli.docker", {"envcheck.cli.verify", "envcheck.cli.verify.report"}) == [
        "envcheck.cli.docker imports envcheck.cli.verify", "envcheck.cli.docker imports envcheck.cli.verify"]
    assert cli_violations("envcheck.cli.config", {"envcheck.cli", "envcheck.cli.build_parser"}) != []
    assert cli_violations("envcheck.cli.plan", {"envcheck.cli.flags", "envcheck.cli.plan", "envcheck.app.plan"}) == []


#: the use cases DESIGN.md "Layers" names, each a module of envcheck/app
USE_CASES = {"plan", "verify", "explain", "probe", "docker", "fleet", "matrix"}
#: names that mean "prints" or "reads the terminal" in a use case
OUTPUT_NAMES = {"print", "input"}
OUTPUT_ATTRS = {"stdout", "stderr", "stdin"}


def test_use_case_layer_neither_parses_nor_prints():
    modules = sorted(p for p in (PKG / "app").glob("*.py") if p.name != "__init__.py")
    assert {p.stem for p in modules} >= USE_CASES
    for p in modules:
        text = p.read_text(encoding="utf-8")
        mods = imports_of(p)
        assert not any(m.startswith("envcheck.cli") for m in mods), p
        tree = ast.parse(text)
        names = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        names |= {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
        assert "argparse" not in names and not any(n == "rich" or n.startswith("rich.") for n in names), p
        calls = {n.func.id for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
        assert not calls & OUTPUT_NAMES, p
        attrs = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
        assert not attrs & OUTPUT_ATTRS, p


def _frozen_dataclass(node: ast.ClassDef) -> bool:
    for d in node.decorator_list:
        if isinstance(d, ast.Call) and getattr(d.func, "id", "") in ("dataclass", "record"):  # record: #9 start-up
            return any(k.arg == "frozen" and getattr(k.value, "value", False) is True for k in d.keywords)
    return False


def test_use_case_requests_and_results_are_frozen_dataclasses():
    """Typed, immutable results: ``@dataclass(frozen=True)`` or ``@record(frozen=True)`` (the same, lighter
    to define: #9 speed; ``plan``'s requests are mutable records)."""
    seen = []
    for p in sorted((PKG / "app").glob("*.py")):
        if p.stem in ("__init__", "plan"):
            continue
        for node in ast.parse(p.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.ClassDef):
                seen.append(node.name)
                assert _frozen_dataclass(node), f"{p.name}: {node.name}"
    assert {"VerifyResult", "ExplainResult", "ProbeResult", "MergeResult", "CiResult", "Validation"} <= set(seen)


#: flags several commands take, each defined once, in cli/flags.py (``--config``/``--no-config``:
#: cli/conventions.py, read early by envcheck.cli.main)
SHARED_FLAGS = {"--matrices", "--json", "--force", "--timeout", "--lock", "--checks", "--skip", "--tier", "--python"}


def flag_definitions(path: Path) -> List[str]:
    """The option strings ``path`` passes to ``add_argument`` (the first, a literal)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [n.args[0].value for n in ast.walk(tree)
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "add_argument"
            and n.args and isinstance(n.args[0], ast.Constant) and isinstance(n.args[0].value, str)]


def test_shared_flags_are_defined_in_one_place():
    found = {p.name: sorted(set(flag_definitions(p)) & SHARED_FLAGS) for p in sorted((PKG / "cli").glob("*.py"))}
    assert found["flags.py"] == sorted(SHARED_FLAGS)  # the reading sees them where they are
    assert {name: flags for name, flags in found.items() if flags and name != "flags.py"} == {}


def test_config_flags_are_defined_once_for_the_early_read_and_the_parse():
    """``--config``/``--no-config`` are read before the command's parse (they name the settings that
    become its defaults) and by every parser: one definition serves both (it was written twice)."""
    where = {p.name: flag_definitions(p).count("--config") + flag_definitions(p).count("--no-config")
             for p in sorted((PKG / "cli").glob("*.py"))}
    assert {name: n for name, n in where.items() if n} == {"conventions.py": 2}
    from envcheck.cli.conventions import config_parser

    early, rest = config_parser().parse_known_args(["plan", "--conf", "x.toml", "--gpu", "H100"])
    assert (str(early.config), early.no_config, rest) == ("x.toml", False, ["plan", "--gpu", "H100"])
