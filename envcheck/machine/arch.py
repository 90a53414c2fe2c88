"""CPU architecture names: the one alias table (``matrices/platforms.toml`` ``[[cpu_arch]]``).

``--arch``, probe (``platform.machine()``), saved facts and machine files all name the CPU
through :func:`cpu_arch`; :func:`platform_arch` spells it for a platform key per OS. The table is
read from the data shipped with envcheck (the names do not change with ``--matrices``).
"""

from __future__ import annotations

from functools import lru_cache

TYPE_CHECKING = False  # typing is not imported at run time (start-up, #9)
if TYPE_CHECKING:  # pragma: no cover
    from typing import Dict, Optional, Tuple


@lru_cache(maxsize=1)
def _table() -> Tuple[Dict[str, str], Dict[str, Dict[str, str]]]:
    import os

    from envcheck.matrix import load_file_cached, resource_path
    from envcheck.matrix.model import CpuArch

    rows = [r for r in load_file_cached(os.path.join(resource_path("matrices"), "platforms.toml")).get("cpu_arch", [])
            if isinstance(r, CpuArch)]
    aliases = {a.lower(): r.name for r in rows for a in (r.name, *r.aliases)}
    spelling = {r.name: dict(r.platform) for r in rows}
    return aliases, spelling


def cpu_arch(text: Optional[str]) -> Optional[str]:
    """``"AMD64"`` → ``"x86_64"``, ``"i686"`` → ``"x86"``; ``None`` for a name not in the table."""
    if not text:
        return None
    return _table()[0].get(text.strip().lower())


def platform_arch(os: str, arch: str) -> str:
    """The platform-key spelling of ``arch`` on ``os`` (``linux``+``arm64`` → ``aarch64``)."""
    return _table()[1].get(arch, {}).get(os, arch)
