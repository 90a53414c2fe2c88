"""How fresh the matrix is: its data date and the newest torch release it knows.

The data date is read from the data, never written in code: the newest of the release dates in
``torch-releases.toml`` (the upload date of each release's first file) and the ``checked`` time of
the last ``envcheck matrix update`` (generated index files). A plan warns when it is older than
:data:`STALE_DAYS` days, or when ``--torch`` asks for a release newer than the newest known.
"""

from __future__ import annotations

import datetime as _dt
from typing import TYPE_CHECKING, Optional, Tuple

from envcheck import __version__

if TYPE_CHECKING:  # pragma: no cover
    from envcheck.matrix import Matrix

__all__ = ["STALE_DAYS", "data_date", "newest_release", "version_line", "staleness"]

STALE_DAYS = 60


def _day(text: str) -> Optional[_dt.date]:
    try:
        return _dt.date.fromisoformat(text[:10])
    except (TypeError, ValueError):
        return None


def data_date(matrix: Matrix) -> Tuple[Optional[_dt.date], str]:
    """``(date, what it is)``: the newest release date or last index check, whichever is later."""
    best: Tuple[Optional[_dt.date], str] = (None, "no dated rows")
    for r in matrix.releases:
        d = _day(r.date)
        if d and (best[0] is None or d > best[0]):
            best = (d, f"torch {r.version} release date")
    for u in getattr(matrix, "index_updates", ()):
        d = _day(u.checked)
        if d and (best[0] is None or d > best[0]):
            best = (d, f"last `envcheck matrix update` of {u.package}")
    return best


def newest_release(matrix: Matrix) -> str:
    """The newest torch version on record (``"2.15.0"``)."""
    from envcheck.matrix.model import vkey

    return max((r.version for r in matrix.releases), key=vkey, default="")


def staleness(matrix: Matrix, today: Optional[_dt.date] = None) -> Optional[str]:
    """A warning sentence when the data is older than :data:`STALE_DAYS`, else ``None``."""
    day, what = data_date(matrix)
    if day is None:
        return None
    age = ((today or _dt.datetime.now(_dt.timezone.utc).date()) - day).days
    if age <= STALE_DAYS:
        return None
    from envcheck.install_hint import update_hint

    return (f"the matrix data is {age} days old (newest: {what}, {day.isoformat()}; newest torch known "
            f"{newest_release(matrix)}): newer releases may exist — update envcheck "
            f"({update_hint()}) or `envcheck matrix update`")


def version_line(matrix: Optional[Matrix] = None) -> str:
    """``envcheck 0.1.0 (matrix data 2026-10-28, newest torch 2.15.0)``."""
    try:
        if matrix is None:
            from envcheck.matrix import load_matrix

            matrix = load_matrix()
        day, _ = data_date(matrix)
        return (f"envcheck {__version__} (matrix data {day.isoformat() if day else 'undated'}, "
                f"newest torch {newest_release(matrix) or 'none'})")
    except Exception as exc:  # --version must answer even with broken data
        return f"envcheck {__version__} (matrix data unreadable: {exc})"
