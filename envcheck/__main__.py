"""``python -m envcheck`` — same as the ``envcheck`` console script (:mod:`envcheck.entry` first, so
a Ctrl-C while the rest is imported is one line and exit 130)."""

from envcheck.entry import main

if __name__ == "__main__":  # pragma: no cover - thin entry point
    raise SystemExit(main())
