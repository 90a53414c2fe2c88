"""tools/pci_gpus_subset.py rebuilds matrices/pci-gpus.ids from a pci.ids file (#10 follow-up).

The input below is a verbatim excerpt of pci.ids (Debian package pci.ids 0.0~2026.10.24-1; upstream
https://pci-ids.ucw.cz/): GPU lines, a GPU's HDMI audio function, a subsystem line, a vendor that is
not a GPU maker, and the device-class section that ends the vendor list.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TOOL = ROOT / "tools" / "pci_gpus_subset.py"

EXCERPT = """\
#	List of PCI ID's
#	Version: 2026.10.24
#	Date:    2026-10-24 03:15:02
1002  Advanced Micro Devices, Inc. [AMD/ATI]
\t744c  Navi 31 [Radeon RX 7900 XT/7900 XTX/7900 GRE/7900M]
\t7550  Navi 48 [Radeon RX 9070/9070 XT/9070 GRE]
\tab30  Navi 31 HDMI/DP Audio
10de  NVIDIA Corporation
\t2b85  GB202 [GeForce RTX 5090]
\t\t10de 2b85  GeForce RTX 5090 Founders Edition
\t22e8  GB202 High Definition Audio Controller
\t22ce  GB10 GEN5 X4 PCIe host
10df  Emulex Corporation
\t1ae5  LP6000 Fibre Channel Host Adapter
C 03  Display controller
\t00  VGA compatible controller
"""


def run(tmp_path, *args):
    return subprocess.run([sys.executable, str(TOOL), *args], capture_output=True, text=True, timeout=60,
                          cwd=tmp_path)


@pytest.mark.subprocess
def test_subset_keeps_gpus_and_names_its_source(tmp_path):
    src = tmp_path / "pci.ids"
    src.write_text(EXCERPT, encoding="utf-8")
    out = tmp_path / "pci-gpus.ids"
    r = run(tmp_path, str(src), "--debian-version", "0.0~2026.10.24-1", "-o", str(out))
    assert r.returncode == 0, r.stderr
    text = out.read_text(encoding="utf-8")
    body = [ln for ln in text.splitlines() if not ln.startswith("#")]
    assert body == [
        "1002  Advanced Micro Devices, Inc. [AMD/ATI]",
        "\t744c  Navi 31 [Radeon RX 7900 XT/7900 XTX/7900 GRE/7900M]",
        "\t7550  Navi 48 [Radeon RX 9070/9070 XT/9070 GRE]",
        "10de  NVIDIA Corporation",
        "\t2b85  GB202 [GeForce RTX 5090]",
    ]
    assert "0.0~2026.10.24-1" in text and "2026.10.24" in text and "2026-10-24" in text


@pytest.mark.subprocess
def test_not_a_pci_ids_file_is_a_one_line_error(tmp_path):
    src = tmp_path / "notes.txt"
    src.write_text("hello\n", encoding="utf-8")
    out = tmp_path / "pci-gpus.ids"
    r = run(tmp_path, str(src), "--debian-version", "x", "-o", str(out))
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and not out.exists()
    r = run(tmp_path, str(tmp_path / "missing.ids"), "--debian-version", "x")
    assert r.returncode == 2 and "Traceback" not in r.stderr


def test_shipped_subset_header_names_the_debian_version():
    head = (ROOT / "matrices" / "pci-gpus.ids").read_text(encoding="utf-8").splitlines()[:8]
    assert any("pci.ids 0.0~2026.10.24-1" in ln for ln in head)
