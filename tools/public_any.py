"""Fail when a public signature of the core model packages mentions ``typing.Any``.

``nox -s lint`` runs it after mypy. "Public" means: a module-level function, class, or a method /
class attribute of a public class, whose name does not start with ``_`` (``__init__`` counts), in
the modules listed in :data:`MODULES`. Their types are what the rest of envcheck (and a reader)
relies on, so they are spelled out; ``Any`` stays allowed inside function bodies and in private
helpers (a TOML value really is any JSON-like thing until validated).

    python tools/public_any.py            # exit 1 and one line per finding
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path
from typing import Iterator, List, Tuple

ROOT = Path(__file__).resolve().parent.parent
#: packages (every module under them) and single modules held to the rule
MODULES = ["envcheck/resolve", "envcheck/matrix", "envcheck/machine", "envcheck/verify/diagnose.py"]
#: known exceptions, each with the work that removes it (delete the entry with that work)
ALLOWED = {
    "envcheck/resolve/types.py:Candidate.fit": "the per-candidate fit becomes a frozen dataclass (issue #10)",
}


def files() -> List[Path]:
    out: List[Path] = []
    for m in MODULES:
        p = ROOT / m
        out.extend(sorted(p.rglob("*.py")) if p.is_dir() else [p])
    return out


def mentions_any(node: ast.AST | None) -> bool:
    if node is None:
        return False
    for n in ast.walk(node):
        if isinstance(n, ast.Name) and n.id == "Any":
            return True
        if isinstance(n, ast.Attribute) and n.attr == "Any":
            return True
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and "Any" in n.value.replace("Any_", ""):
            try:
                if mentions_any(ast.parse(n.value, mode="eval")):
                    return True
            except SyntaxError:
                pass
    return False


def public(name: str) -> bool:
    return not name.startswith("_") or name == "__init__"


def signature_nodes(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> Iterator[ast.AST | None]:
    a = fn.args
    for arg in [*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg]:
        if arg is not None:
            yield arg.annotation
    yield fn.returns


def findings(path: Path) -> Iterator[Tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))

    def scan(body: List[ast.stmt], owner: str) -> Iterator[Tuple[int, str]]:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and public(node.name):
                if any(mentions_any(n) for n in signature_nodes(node)):
                    yield node.lineno, f"{owner}{node.name}()"
            elif isinstance(node, ast.ClassDef) and public(node.name):
                yield from scan(node.body, f"{owner}{node.name}.")
            elif (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and public(node.target.id)
                  and mentions_any(node.annotation)):
                yield node.lineno, f"{owner}{node.target.id}"

    yield from scan(tree.body, "")


def main() -> int:
    bad = 0
    for path in files():
        rel = path.relative_to(ROOT)
        if any(part.startswith("_") and part != "__init__.py" for part in rel.parts):
            continue  # private modules
        for line, what in findings(path):
            if f"{rel.as_posix()}:{what}" in ALLOWED:
                continue
            print(f"{rel}:{line}: Any in the public signature of {what}")
            bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
