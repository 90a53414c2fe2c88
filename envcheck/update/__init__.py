"""Keep the matrix true: read the wheel indexes, record what they serve.

Pipeline: :mod:`~envcheck.update.client` (HTTP, one session) → :mod:`~envcheck.update.pages`
(PEP 503 HTML / PEP 691 JSON → links) → :mod:`~envcheck.update.wheels` (file name → release,
variant, Python, platform) → :mod:`~envcheck.update.store` (rows, TOML, diff, all-or-nothing write)
→ ``matrices/generated-index-<channel>-<package>.toml``. Readers: :mod:`~envcheck.update.data`
(queries), :mod:`~envcheck.update.status` (what the hand-sourced facts do not cover yet),
:mod:`~envcheck.update.hashes` (sha256 pins for ``plan --hashes``).
"""
