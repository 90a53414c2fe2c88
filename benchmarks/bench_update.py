"""Parsing the real download.pytorch.org torch listing (2,442 links): page → links → generated rows.

Goal: ≤ 0.5 s. Baseline: html.parser alone over the same page (the floor any HTML parse pays).
The listing is ../shared/data/pytorch-whl-torch-listing-2025-07.html (see its README).
"""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path

from run import median_seconds

LISTING = Path(__file__).resolve().parents[2] / "shared" / "data" / "pytorch-whl-torch-listing-2025-07.html"


def run():
    from envcheck.update.pages import parse_html
    from envcheck.update.store import build_rows
    from envcheck.matrix.index.wheels import parse_wheel

    if not LISTING.exists():
        raise FileNotFoundError(f"{LISTING} is absent")
    text = LISTING.read_text()
    url = "https://download.pytorch.org/whl/torch/"

    def bare() -> None:
        p = HTMLParser()
        p.feed(text)
        p.close()

    def full() -> None:
        parse_wheel.cache_clear()  # measure the name parsing too, not a warm cache
        links = parse_html(text, url)
        assert len(links) == 2442
        build_rows(((ln, None) for ln in links), package="torch", channel="pytorch",
                   index_url="https://download.pytorch.org/whl/", page_url=url, since="",
                   source=url, confidence="official")

    base = median_seconds(bare, repeat=7)
    t = median_seconds(full, repeat=7)
    print(f"parse 2,442-link listing: {t:.3f} s (html.parser alone {base:.3f} s)")
    return [{"name": "update: parse 2,442-link torch listing", "seconds": t, "baseline": "html.parser alone",
             "baseline_seconds": base, "goal": "≤ 0.5 s"}]


if __name__ == "__main__":
    run()
