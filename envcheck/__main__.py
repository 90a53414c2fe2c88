"""``python -m envcheck`` — same as the ``envcheck`` console script."""

from envcheck.cli import main

if __name__ == "__main__":  # pragma: no cover - thin entry point
    raise SystemExit(main())
