"""The network refresh: read the wheel indexes, record what they serve.

Pipeline: :mod:`~envcheck.update.client` (HTTP, one session) → :mod:`~envcheck.update.pages`
(PEP 503 HTML / PEP 691 JSON → links) → :mod:`~envcheck.matrix.index.wheels` (file name → release,
variant, Python, platform) → :mod:`~envcheck.update.store` (rows, TOML, diff, all-or-nothing write)
→ ``generated-index-<channel>-<package>.toml`` in the per-user data folder
(:mod:`envcheck.matrix.userdata`), never in the installed package.

Reading that data is not this package's business: :mod:`envcheck.matrix.index` holds the queries
(:mod:`~envcheck.matrix.index.data`), the coverage report (:mod:`~envcheck.matrix.index.status`)
and the sha256 pins for ``plan --hashes`` (:mod:`~envcheck.matrix.index.hashes`). The dependency
runs one way: ``update`` → ``matrix``.
"""
