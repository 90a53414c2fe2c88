"""Intel GPUs (PyTorch's ``xpu`` backend) from the DRM devices in sysfs.

``/sys/class/drm/card<n>/device`` links to the PCI device; its ``vendor`` is ``0x8086`` for Intel
and ``device`` the PCI device id (sysfs PCI attributes, Linux
Documentation/ABI/testing/sysfs-bus-pci). A GPU on PCI bus 00 is part of the processor's root
complex — an integrated GPU; discrete cards sit behind a PCIe port on another bus. envcheck has no
PCI-id table, so an Intel GPU is named by its ids and its family is left unknown (``arch`` =
``xpu``); integrated ones are listed but not served (``serve = false``).
"""

from __future__ import annotations

import re

from envcheck.machine.model import GpuDevice
from envcheck.probe.context import Finding, ProbeContext

INTEL_VENDOR = "0x8086"


def probe_intel(ctx: ProbeContext) -> Finding:
    """Intel GPUs listed under ``/sys/class/drm``."""
    f = Finding()
    cards, why = ctx.listdir("/sys/class/drm")
    if why:
        f.unknown["intel_gpus"] = f"no DRM devices to check ({why})"
        return f
    for card in (c for c in cards if re.fullmatch(r"card\d+", c)):
        dev = f"/sys/class/drm/{card}/device"
        vendor, _ = ctx.read(f"{dev}/vendor")
        if (vendor or "").strip().lower() != INTEL_VENDOR:
            continue
        device, _ = ctx.read(f"{dev}/device")
        pci_id = f"8086:{(device or '').strip().lower().replace('0x', '') or '????'}"
        slot = ctx.link_name(dev) or ""
        driver = ctx.link_name(f"{dev}/driver") or "no driver bound"
        bus = re.fullmatch(r"[0-9a-f]{4}:([0-9a-f]{2}):[0-9a-f]{2}\.[0-7]", slot)
        integrated = bus is not None and bus.group(1) == "00"
        how = f"{dev}/vendor {INTEL_VENDOR} (PCI {slot or '?'}, driver {driver})"
        how += "; on PCI bus 00 → integrated" if integrated else "; behind a PCIe port → discrete"
        f.gpus.append(GpuDevice(vendor="intel", name=f"Intel GPU [{pci_id}]", arch="xpu",
                                index=int(card[4:]), integrated=integrated, serve=not integrated, how=how))
    if f.gpus:
        f.how["intel_gpus"] = "/sys/class/drm/card*/device/vendor"
    return f
