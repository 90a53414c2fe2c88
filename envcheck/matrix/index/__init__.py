"""What the wheel indexes served at the last ``envcheck matrix update``: the generated
``generated-index-*.toml`` files, queried (:mod:`.data`), compared with the hand-sourced facts
(:mod:`.status`), and turned into sha256 pins (:mod:`.hashes`). Wheel file names are read by
:mod:`.wheels`. Fetching those files is :mod:`envcheck.update`'s job; nothing here touches the network.
"""
