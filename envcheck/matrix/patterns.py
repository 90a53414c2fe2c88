"""The spellings of names shared by every file envcheck reads — matrix files, machine files, facts,
locks — so their validators agree (a machine file accepts ``sm_90a`` because the matrix does)."""

from __future__ import annotations

import re

#: an NVIDIA cubin target: ``sm_89``; ``sm_90a`` (arch-specific), ``sm_100f`` (family-specific)
SM_RE = re.compile(r"sm_\d{2,3}[af]?")
#: an NVIDIA PTX target: ``compute_90``, ``compute_90a``
PTX_RE = re.compile(r"compute_\d{2,3}[af]?")
#: an AMD target: ``gfx1100``, ``gfx90a``; ``gfx11-generic`` style generic targets
GFX_RE = re.compile(r"gfx[0-9a-f]{3,4}(-generic)?")
#: a Python version as envcheck names it: ``3.12``, ``3.13t`` (free-threaded)
PY_RE = re.compile(r"\d+\.\d+t?")
