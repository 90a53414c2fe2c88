"""How fresh the matrix is: its data date and the newest torch release it knows.

The data date is read from the data, never written in code: the newest of the release dates in
``torch-releases.toml`` (the upload date of each release's first file) and the ``checked`` time of
the last ``envcheck matrix update`` (generated index files). A plan warns when it is older than
:data:`STALE_DAYS` days, or when ``--torch`` asks for a release newer than the newest known.
"""

from __future__ import annotations

import time

from envcheck import __version__

TYPE_CHECKING = False  # typing is not imported at run time (start-up, #9)
if TYPE_CHECKING:  # pragma: no cover
    from typing import Optional, Tuple

if TYPE_CHECKING:  # pragma: no cover
    import datetime as _dt

    from envcheck.matrix import Matrix

__all__ = ["STALE_DAYS", "data_date", "newest_release", "version_line", "staleness"]

STALE_DAYS = 60


def _day(text: str) -> str:
    """The day a date or UTC time of the data names (``"2025-06-04"``), ``""`` when none.

    The matrix loader holds both to days of the calendar (:mod:`envcheck.matrix.load`), and ISO days
    sort as text: a plan tells fresh data without importing :mod:`datetime` (~2 ms at start-up)."""
    day = text[:10] if isinstance(text, str) else ""
    return day if len(day) == 10 and day[4] == day[7] == "-" else ""


def _newest_day(matrix: Matrix) -> Tuple[str, str]:
    """``(day, what it is)``: the newest release date or last index check, whichever is later."""
    best: Tuple[str, str] = ("", "no dated rows")
    for r in matrix.releases:
        d = _day(r.date)
        if d > best[0]:
            best = (d, f"torch {r.version} release date")
    for u in getattr(matrix, "index_updates", ()):
        d = _day(u.checked)
        if d > best[0]:
            best = (d, f"last `envcheck matrix update` of {u.package}")
    return best


def data_date(matrix: Matrix) -> Tuple[Optional[_dt.date], str]:
    """``(date, what it is)``: the newest release date or last index check, whichever is later."""
    import datetime

    day, what = _newest_day(matrix)
    return (datetime.date.fromisoformat(day) if day else None), what


def newest_release(matrix: Matrix) -> str:
    """The newest torch version on record (``"2.15.0"``)."""
    from envcheck.matrix.model import vkey

    return max((r.version for r in matrix.releases), key=vkey, default="")


def staleness(matrix: Matrix, today: Optional[_dt.date] = None) -> Optional[str]:
    """A warning sentence when the data is older than :data:`STALE_DAYS`, else ``None``."""
    text, what = _newest_day(matrix)
    if not text:
        return None
    if today is None and text >= time.strftime("%Y-%m-%d", time.gmtime(time.time() - STALE_DAYS * 86400)):
        return None  # on or after the UTC day STALE_DAYS ago: fresh (the usual case, told from the text)
    import datetime

    day = datetime.date.fromisoformat(text)
    age = ((today or datetime.datetime.now(datetime.timezone.utc).date()) - day).days
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
