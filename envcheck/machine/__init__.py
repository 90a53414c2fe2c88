"""The Machine type and the ways to get one: flags (:mod:`.describe`), files (:mod:`.io`), probe."""

from envcheck.machine.model import GpuDevice, Machine

__all__ = ["GpuDevice", "Machine"]
