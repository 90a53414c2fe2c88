#!/usr/bin/env python3
"""Build matrices/pci-gpus.ids, the GPU subset of the PCI ID database, from a pci.ids file.

Kept: device lines of NVIDIA (10de) and AMD (1002) whose name starts with a chip codename of
matrices/gpu-chips.toml, and Intel (8086) device lines whose name matches an Intel chip pattern there
(HD/UHD/Iris graphics, Arc); audio, USB and other companion functions of a GPU are dropped.
Subsystem lines (two TABs) are not kept. Re-run whenever Debian ships a newer pci.ids:

    apt-get download pci.ids            # e.g. from sid; or use /usr/share/misc/pci.ids
    dpkg-deb -x pci.ids_*.deb x
    python tools/pci_gpus_subset.py x/usr/share/misc/pci.ids --debian-version 0.0~2026.10.24-1 \\
        -o matrices/pci-gpus.ids

The version and date of the database (its "#\tVersion:" / "#\tDate:" header lines) go into the
header of the output, which names its source. Writes nothing when the input is not a pci.ids file.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

try:
    import tomllib
except ImportError:  # Python < 3.11
    import tomli as tomllib  # type: ignore[no-redef]

ROOT = Path(__file__).resolve().parent.parent
VENDORS = {"10de": "nvidia", "1002": "amd", "8086": "intel"}
#: the shape of a chip codename at the start of a device name, per vendor (kept even where gpu-chips.toml
#: maps no architecture: the name still resolves to "no chip known" instead of "no such PCI id")
CODENAME_SHAPE = {"nvidia": re.compile(r"(?:GK|GM|GP|GV|TU|GA|AD|GH|GB)\d{3}"),
                  "amd": re.compile(r"(?:Navi ?\d+|Vega ?\d+)"), "intel": None}
#: functions of a GPU board that are not the GPU (HDMI audio, USB-C controllers on Turing boards)
NOT_A_GPU = re.compile(r"audio|usb|ucsi|serial bus|hdmi|high definition", re.I)

HEADER = """\
# pci-gpus.ids — the GPU display devices of NVIDIA (10de), AMD (1002) and Intel (8086) from the PCI ID
# database, in its own format (vendor line, then TAB device-id TWO-SPACES name). Subset of pci.ids as
# Debian ships it (package pci.ids {debian}, /usr/share/misc/pci.ids; database version {version},
# {date}; upstream https://pci-ids.ucw.cz/), built by tools/pci_gpus_subset.py: device lines whose name
# starts with a GPU chip codename of gpu-chips.toml (NVIDIA, AMD) or names Intel graphics; audio/USB
# functions dropped. Devices newer than the database are not here. `--gpu 10de:2b85`,
# `--gpu "<an lspci -nn line>"` read it.
"""


def chip_patterns(chips_toml: Path) -> dict:
    data = tomllib.loads(chips_toml.read_text(encoding="utf-8"))
    out: dict = {"nvidia": [], "amd": [], "intel": []}
    for c in data.get("chip", []):
        out[c["vendor"]].append(re.compile(f"(?:{c['pattern']})", re.I))
    return out


def subset(lines: list, patterns: dict) -> list:
    out, vendor, kept_vendor = [], "", False
    for line in lines:
        if not line or line.startswith("#"):
            continue
        if line.startswith("C "):  # the device-class section ends the vendor list
            break
        if not line.startswith("\t"):
            vendor = line.split()[0].lower()
            kept_vendor = False
            continue
        if line.startswith("\t\t") or vendor not in VENDORS:
            continue
        dev, _, name = line.strip().partition("  ")
        if NOT_A_GPU.search(name):
            continue
        shape = CODENAME_SHAPE[VENDORS[vendor]]
        if not (any(p.match(name) for p in patterns[VENDORS[vendor]]) or (shape and shape.match(name))):
            continue
        if not kept_vendor:
            out.append(f"{vendor}  {_vendor_names[vendor]}")
            kept_vendor = True
        out.append(f"\t{dev}  {name}")
    return out


_vendor_names: dict = {}


def main(argv: list) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("pci_ids", type=Path, help="a pci.ids file (e.g. /usr/share/misc/pci.ids)")
    ap.add_argument("--debian-version", required=True, help="the Debian pci.ids package version it came from")
    ap.add_argument("--chips", type=Path, default=ROOT / "matrices" / "gpu-chips.toml")
    ap.add_argument("-o", "--output", type=Path, default=None, help="write here (default: stdout)")
    args = ap.parse_args(argv)
    try:
        text = args.pci_ids.read_text(encoding="utf-8", errors="replace")
    except OSError as e:
        print(f"pci_gpus_subset: cannot read {args.pci_ids}: {e.strerror}", file=sys.stderr)
        return 2
    version = re.search(r"^#\s*Version:\s*(\S+)", text, re.M)
    date = re.search(r"^#\s*Date:\s*(\S+)", text, re.M)
    if not version or not date:
        print(f"pci_gpus_subset: {args.pci_ids} has no '# Version:'/'# Date:' header: not a pci.ids file",
              file=sys.stderr)
        return 2
    lines = text.splitlines()
    for line in lines:
        m = re.match(r"^([0-9a-f]{4})  (.+)$", line)
        if m and m.group(1) in VENDORS:
            _vendor_names[m.group(1)] = m.group(2)
    body = subset(lines, chip_patterns(args.chips))
    out = HEADER.format(debian=args.debian_version, version=version.group(1), date=date.group(1)) + "\n".join(body) + "\n"
    if args.output:
        tmp = args.output.with_suffix(".tmp")
        tmp.write_text(out, encoding="utf-8")
        tmp.replace(args.output)
    else:
        sys.stdout.write(out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
