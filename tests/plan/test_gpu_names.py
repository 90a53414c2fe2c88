"""GPU names as people have them (#10): PCI vendor:device ids, `lspci -nn` lines, chip codenames and
older/low-end names, from the PCI ID database (matrices/pci-gpus.ids, Debian's pci.ids) and the
codename table (matrices/gpu-chips.toml).

Public reports the inputs come from:
- geerlingguy/raspberry-pi-pcie-devices#504: an RTX 4090 shows as "NVIDIA Corporation Device 2684"
  where the local pci.ids is too old — the id is what people have;
- Antergos/nvidia-installer#15: "01:00.0 VGA compatible controller [0300]: NVIDIA Corporation GM204M
  [GeForce GTX 980M] [10de:1617] (rev a1)";
- geerlingguy/raspberry-pi-pcie-devices#480 "TU102GL [Quadro RTX 6000/8000]", #692 "GA104GL [RTX A4000]";
- ROCm/legacy-rocm-build#2216 (Ryzen 5600G iGPU: no ROCm wheel serves it);
- NVIDIA/open-gpu-kernel-modules#862 ("The NVIDIA GPU 0000:01:00.0 (PCI ID: 10de:2b85)", an RTX 5090) and
  #935 ("NVIDIA Corporation GB203M / GN22 [GeForce RTX 5090 Max-Q / Mobile] [10de:2c18]") — ids the
  2023 database did not have; pci-gpus.ids is rebuilt from Debian's pci.ids 0.0~2026.10.24-1 by
  tools/pci_gpus_subset.py.
"""

from __future__ import annotations

import pytest

from tests.conftest import plan_for


@pytest.mark.parametrize("query, vendor, arch", [
    ("10de:2684", "nvidia", "sm_89"),
    ("01:00.0 VGA compatible controller [0300]: NVIDIA Corporation GM204M [GeForce GTX 980M] [10de:1617] (rev a1)",
     "nvidia", "sm_52"),
    ("TU102GL", "nvidia", "sm_75"),
    ("GA102", "nvidia", "sm_86"),
    ("AD104", "nvidia", "sm_89"),
    ("Navi 31", "amd", "gfx1100"),
    ("1002:744c", "amd", "gfx1100"),
    ("GTX 780", "nvidia", "sm_35"),
    ("RX 580", "amd", "gfx803"),
    ("MX150", "nvidia", "sm_61"),
    ("Iris Xe", "intel", "intel-igpu"),
    ("UHD 630", "intel", "intel-igpu"),
])
def test_names_people_have(matrix, query, vendor, arch):
    g = matrix.find_gpu(query)
    assert (g.vendor, g.arch) == (vendor, arch), g


def test_pci_id_of_a_known_gpu_is_that_gpu(matrix, cli):
    assert matrix.find_gpu("10de:2684").name == matrix.find_gpu("RTX 4090").name
    r = cli(["plan", "--gpu", "10de:2684", "--json"])
    assert r.code == 0 and r.json()["machine"]["gpus"][0]["name"] == matrix.find_gpu("RTX 4090").name
    g = cli(["gpus", "10de:2684", "--json"]).json()
    assert [x["arch"] for x in g["gpus"]] == ["sm_89"]


def test_old_gpus_get_no_official_build(matrix):
    # sm_35 / gfx803, Fermi / Kepler sm_30, GCN1-3: no wheel envcheck knows carries them
    for name in ("GTX 780", "RX 580", "GTX 580", "GTX 680", "1002:6798", "1002:67b1", "1002:6939"):
        res = plan_for(matrix, gpus=[name])
        assert res.chosen is None and res.status == "no_official_build" and res.fallback is not None


def test_integrated_intel_never_blocks_and_alone_gets_the_cpu_fallback(matrix):
    both = plan_for(matrix, gpus=["RTX 3060", "Iris Xe"])
    assert both.chosen.build.backend == "cuda"
    alone = plan_for(matrix, gpus=["UHD 630"])
    assert alone.status == "no_official_build" and alone.fallback.build.backend == "cpu"


def test_an_unknown_pci_id_is_exit_2(cli):
    r = cli(["plan", "--gpu", "10de:ffff"])
    assert r.code == 2 and "unknown GPU" in r.err


@pytest.mark.parametrize("query, name, arch", [
    ("10de:2b85", "RTX 5090", "sm_120"),        # open-gpu-kernel-modules#862
    ("0000:02:00.0 VGA compatible controller [0300]: NVIDIA Corporation GB203M / GN22 "
     "[GeForce RTX 5090 Max-Q / Mobile] [10de:2c18] (rev a1)", "5090", "sm_120"),  # #935
    ("10de:2901", "B200", "sm_100"),
    ("1002:7550", "9070", "gfx1201"),
    ("1002:7590", "9060", "gfx1200"),
])
def test_gpus_newer_than_2023_resolve_by_pci_id(matrix, query, name, arch):
    g = matrix.pci_gpu(query)
    assert g is not None and name in g.name and g.arch == arch, (query, g)


def test_rtx_5090_pci_id_plans_a_blackwell_build(matrix, cli):
    r = cli(["plan", "--gpu", "10de:2b85", "--os", "linux", "--json"])
    assert r.code == 0
    chosen = r.json()["chosen"]
    # sm_120 has cubins from CUDA 12.8 on
    assert chosen["variant"].startswith("cu") and int(chosen["variant"][2:]) >= 128, chosen


#: Names that hold no GPU model once vendor words are set aside: what a user types for their vendor,
#: and the generic marketing name many Ryzen APUs report ("AMD Radeon(TM) Graphics": 680M gfx1035,
#: 780M gfx1103, Strix parts; pci.ids names several devices "[Radeon Graphics]" too). They used to
#: resolve to the first "[Radeon Graphics]" device (a Navi 33, gfx1102) and get a ROCm plan, exit 0.
GENERIC = ["nvidia", "NVIDIA GeForce", "amd", "AMD", "Radeon", "Radeon Graphics", "AMD Radeon Graphics",
           "AMD Radeon(TM) Graphics", "Intel", "Intel Graphics", "Intel(R) Graphics", "Apple", "Graphics",
           "", " ", "-", ":"]


@pytest.mark.parametrize("query", GENERIC)
def test_a_name_without_a_model_is_an_unknown_gpu(matrix, query):
    from envcheck.errors import UnknownGpuError

    with pytest.raises(UnknownGpuError) as e:
        matrix.find_gpu(query)
    assert "no GPU model in it" in str(e.value)


def test_generic_names_are_exit_2_on_the_command_line():
    from tests.conftest import run_cli

    for query in ("nvidia", "AMD Radeon(TM) Graphics"):
        r = run_cli(["plan", "--gpu", query, "--no-config"])
        assert r.code == 2 and "unknown GPU" in r.err and "lspci -nn" in r.err, (query, r.err)
    r = run_cli(["explain", "--no-probe", "--gpu", "AMD Radeon Graphics", "RuntimeError: HIP error: invalid device function"])
    assert r.code == 2 and "gfx1102" not in r.out + r.err


def test_a_radeon_graphics_device_is_still_found_by_its_pci_id(matrix):
    """The devices pci.ids calls "[Radeon Graphics]" stay reachable by id (1002:7487 is a Navi 33)."""
    assert matrix.find_gpu("1002:7487").arch == "gfx1102"


# --- families added from other tools' test tables (tests/fixtures/peers/cases.json; hgpus) -------------------
# Each row: a PCI vendor:device id as Debian's pci.ids 2026.10.24 names it → the architecture, written out here
# from the source named in gpu-chips.toml for that family (NVIDIA's legacy CUDA GPU list, AMD's Ryzen AI
# targets, PyTorch's XPU hardware list), not read back from the chip table.
@pytest.mark.parametrize("pci, vendor, arch", [
    ("10de:1180", "nvidia", "sm_30"),   # GK104 [GeForce GTX 680]
    ("10de:1187", "nvidia", "sm_30"),   # GK104 [GeForce GTX 760]
    ("10de:0fc6", "nvidia", "sm_30"),   # GK107 [GeForce GTX 650]
    ("1002:150e", "amd", "gfx1150"),    # Strix [Radeon 880M / 890M]
    ("1002:1586", "amd", "gfx1151"),    # Strix Halo [Radeon 8050S / 8060S]
    ("1002:1114", "amd", "gfx1152"),    # Krackan [Radeon 840M / 860M]
    ("1002:163f", "amd", "gfx1033"),    # VanGogh (Steam Deck)
    ("1002:1900", "amd", "gfx1103"),    # HawkPoint1 [Radeon 760M / 780M]
    ("8086:e20b", "intel", "xpu-battlemage"),  # Battlemage G21 [Arc B580]
    ("8086:e223", "intel", "xpu-battlemage"),  # Battlemage G31 [Arc Pro B70]
    ("8086:b080", "intel", "xpu-ptl"),  # Panther Lake [Arc B390]: an iGPU, not a Battlemage card
    ("8086:7d55", "intel", "xpu-mtl"),  # Meteor Lake-P [Intel Arc Graphics]
    ("8086:7d51", "intel", "xpu-arl-h"),  # Arrow Lake-P [Arc Pro 130T/140T]
    ("8086:64a0", "intel", "xpu-lnl"),  # Core Ultra 200V … Arc Graphics 130V/140V
    ("8086:0bd9", "intel", "xpu-pvc"),  # Ponte Vecchio XT (1 Tile) [Data Center GPU Max 1100]
    ("8086:56a7", "intel", "xpu-alchemist"),  # DG2 [Arc Xe Graphics]
    # older families: recognised, so the plan can say no build serves them instead of "unknown GPU"
    ("10de:1080", "nvidia", "sm_20"),   # GF110 [GeForce GTX 580] (NVIDIA legacy list: 2.0)
    ("10de:1244", "nvidia", "sm_21"),   # GF116 [GeForce GTX 550 Ti] (2.1)
    ("1002:6798", "amd", "gfx600"),     # Tahiti XT [Radeon HD 7970 / R9 280X] (LLVM AMDGPUUsage: tahiti)
    ("1002:6613", "amd", "gfx602"),     # Oland PRO [Radeon R7 240]
    ("1002:67b1", "amd", "gfx702"),     # Hawaii PRO [Radeon R9 290/390] (LLVM lists R9 290/390 under gfx702)
    ("1002:67a0", "amd", "gfx701"),     # Hawaii XT GL [FirePro W9100] (gfx701)
    ("1002:6939", "amd", "gfx802"),     # Tonga PRO [Radeon R9 285/380] (gfx802, not gfx803)
    ("1002:692b", "amd", "gfx805"),     # Tonga PRO GL [FirePro W7100] (tongapro)
    ("1002:665c", "amd", "gfx704"),     # Bonaire XT [Radeon HD 7790]
    # Windows hardware ids (Device Manager, Win32_VideoController.PNPDeviceID) name the same devices
    (r"PCI\VEN_10DE&DEV_2504&SUBSYS_881D1043&REV_A1\4&22AF55FA&0&0008", "nvidia", "sm_86"),
    (r"pci\ven_1002&dev_744c", "amd", "gfx1100"),
    (r"PCI\VEN_8086&DEV_E20B&SUBSYS_00000000", "intel", "xpu-battlemage"),
])
def test_every_pci_id_of_a_family_resolves(matrix, pci, vendor, arch):
    g = matrix.find_gpu(pci)
    assert (g.vendor, g.arch) == (vendor, arch), g


@pytest.mark.parametrize("query, arch", [
    ("NVIDIA GeForce GK104", "sm_30"),          # vendor and brand words before a codename
    ("NVIDIA Tesla GV100", "sm_70"),
    ("NVIDIA GB100", "sm_100"),
    ("AMD Navi 31", "gfx1100"),
    ("Advanced Micro Devices, Inc. [AMD/ATI] Navi 31 [Radeon RX 7900 XT/7900 XTX]", "gfx1100"),  # lspci without -nn
    ("GM200GL [Tesla M40]", "sm_52"),           # the PCI database's own device names
    ("TU106M [GeForce RTX 2060 Mobile]", "sm_75"),
    ("GA106 [GeForce RTX 3060 Lite Hash Rate]", "sm_86"),
    ("Vega 10 XL [Radeon Pro Vega 56]", "gfx900"),
    ("Navi 33 [Radeon RX 7600M XT]", "gfx1102"),
    ("Navi 44 XTX", "gfx1200"),                 # a codename with the variant or product after it
    ("Ellesmere RX 580", "gfx803"),
])
def test_codenames_in_the_forms_tools_print(matrix, query, arch):
    assert matrix.find_gpu(query).arch == arch


@pytest.mark.parametrize("query", ["8086:a806", "8086:6420", "1002:1902", "GeForce", "Radeon", "GK1040",
                                   "8086:4f80", "8086:56c1", r"PCI\VEN_10DE&DEV_25040"])
def test_what_is_not_a_known_gpu_stays_unknown(cli, query):
    # a Lunar Lake LPC controller, a "Lunar Lake [Intel Graphics]" id with no product, Krackan2 (target not
    # stated), bare brand words (once "GeForce" matched the AMD entry "Navi 33 [Radeon Graphics]"), a
    # codename with digits after it, DG2 [Intel Xe Graphics] and a Data Center GPU Flex (not on PyTorch's
    # XPU list), a Windows device id with one hex digit too many
    r = cli(["plan", "--gpu", query, "--json"])
    assert r.code == 2 and "unknown GPU" in r.err


# GPU names as tools print them — the machine descriptions in bug reports are mostly pasted tool output:
# torch.utils.collect_env "GPU 0: …" (pytorch/pytorch#123835: "GPU 0: NVIDIA GH200 480GB") and its ROCm
# form with the gfx target (vllm-project/vllm#10663, #14062, #17875), torch.cuda.get_device_name /
# nvidia-smi ("NVIDIA B300 SXM6 AC": NVIDIA/cosmos-framework#114, vllm-project/vllm#28707), torch.xpu and
# Windows ("Intel ARC(TM) 140v GPU": jamiepine/voicebox#693), rocminfo's "… Accelerator"
# (apptainer/apptainer#3261). Cases: tests/fixtures/reports/cases.json R41-R45.
@pytest.mark.parametrize("query, name, arch", [
    ("GPU 0: NVIDIA GH200 480GB", "NVIDIA GH200", "sm_90"),
    ("NVIDIA B300 SXM6 AC", "NVIDIA B300", "sm_103"),
    ("AMD Instinct MI250X/MI250 (gfx90a:sramecc+:xnack-)", "AMD Instinct MI250X", "gfx90a"),
    ("AMD Instinct MI300X (gfx942:sramecc+:xnack-)", "AMD Instinct MI300X", "gfx942"),
    ("AMD Instinct MI300A Accelerator", "AMD Instinct MI300A", "gfx942"),
    ("AMD Instinct MI300X OAM", "AMD Instinct MI300X", "gfx942"),
    ("Intel ARC(TM) 140v GPU", "Intel Arc Graphics (Core Ultra Series 2 mobile, Lunar Lake)", "xpu-lnl"),
    ("Intel(R) Arc(TM) 140V GPU (16GB)", "Intel Arc Graphics (Core Ultra Series 2 mobile, Lunar Lake)", "xpu-lnl"),
    ("Tesla V100 32GB", "NVIDIA V100", "sm_70"),  # once "v10032gb" lost the model's digits to the memory
    ("Radeon RX 580 Series", "AMD Radeon RX 580 (Ellesmere)", "gfx803"),  # rocminfo's Marketing Name (xuhuisheng/rocm-gfx803#19)
    # a family name that tells no model apart (breaker4 F11): every RX 7900 is gfx1100 (matrices/gpus-amd.toml)
    ("AMD Radeon RX 7900 Series", "AMD Radeon RX 7900 Series", "gfx1100"),
    # new names from reports (cases.json round3): unslothai/unsloth#7290, Physical-Intelligence/openpi#1009
    ("AMD Radeon(TM) 8065S Graphics", "AMD Radeon 8065S (Gorgon Halo)", "gfx1151"),
    ("Intel Arc B70", "Intel Arc Pro B70", "xpu-battlemage"),
])
def test_names_as_tools_print_them(matrix, query, name, arch):
    g = matrix.find_gpu(query)
    assert (g.name, g.arch) == (name, arch)


@pytest.mark.parametrize("query, name", [
    ("RX 7900 XTX Series", "AMD Radeon RX 7900 XTX"), ("7900xt", "AMD Radeon RX 7900 XT"),
    ("Radeon RX 7900 GRE", "AMD Radeon RX 7900 GRE"), ("Radeon 8060S", "AMD Radeon 8060S (Strix Halo)"),
])
def test_a_family_row_never_answers_for_a_model_it_contains(matrix, query, name):
    """The RX 7900 family row (no memory, one arch) and the 8065S row must not take the names of the models
    next to them: each model keeps its own row (memory, WSL support are per model)."""
    assert matrix.find_gpu(query).name == name


def test_a_printed_gfx_target_stands_in_for_a_name_without_a_model(cli):
    """collect_env prints "AMD Radeon Graphics (gfx906:sramecc+:xnack-)" when libdrm has no name for the
    device (pytorch/pytorch#147626, sgl-project/sglang#30984): the target is the GPU; the bare name stays
    unknown."""
    r = cli(["plan", "--gpu", "AMD Radeon Graphics (gfx906:sramecc+:xnack-)", "--json"])
    assert r.code in (0, 1) and [g["arch"] for g in r.json()["machine"]["gpus"]] == ["gfx906"]
    assert cli(["plan", "--gpu", "AMD Radeon Graphics", "--json"]).code == 2


@pytest.mark.parametrize("query", ["RTX 3090 Laptop GPU", "RTX 4090 Ti", "GPU 0: Foo 9000",
                                   "AMD Radeon Graphics (16GB)", "GeForce 710 GPU", "GeForce RTX 40 Series"])
def test_printed_words_never_make_an_unknown_name_known(cli, query):
    # "Laptop" and "Ti" tell models apart and are never taken off (no RTX 3090 Laptop or RTX 4090 Ti exists,
    # and the desktop RTX 3090 / RTX 4090 must not answer for them); a listing prefix or memory names nothing
    r = cli(["plan", "--gpu", query, "--json"])
    assert r.code == 2 and "unknown GPU" in r.err, (query, r.out[:200])


@pytest.mark.parametrize("query, arch", [
    ("gfx942:sramecc+:xnack-", "gfx942"),               # the target as collect_env prints it (vllm-project/vllm#14062)
    ("amdgcn-amd-amdhsa--gfx1030", "gfx1030"),          # rocminfo's ISA name (ROCm/legacy-rocm-build#3371)
    ("amdgcn-amd-amdhsa--gfx90c:xnack-", "gfx90c"),
])
def test_an_amd_target_with_its_feature_flags_is_that_target(cli, query, arch):
    r = cli(["plan", "--gpu", query, "--json"])
    assert r.code in (0, 1) and [g["arch"] for g in r.json()["machine"]["gpus"]] == [arch]


# AMD APUs whose GPU has no model name: lscpu and /proc/cpuinfo print the CPU model with "with Radeon
# Graphics" (ROCm/pytorch#786 "Ryzen 7 4800U", NixOS/nixpkgs#207109 "Ryzen 5600G", ROCm/legacy-rocm-build#1799
# "5900HX iGPU", HardAndHeavy/comfyui-rocm-docker#3 "Ryzen 5 3400G", guinmoon/rocm7_builds#1 "Ryzen 6900HX"):
# the CPU model names the die, and gpu-chips.toml's APU rows give its target. Expected targets are LLVM's
# AMDGPUUsage processor table and AMD's model numbering, not envcheck's output.
@pytest.mark.parametrize("query, arch", [
    ("AMD Ryzen 7 4800U with Radeon Graphics", "gfx90c"),         # Renoir
    ("AMD Ryzen 7 PRO 4750U with Radeon Graphics", "gfx90c"),     # Renoir PRO
    ("AMD Ryzen 5 5600G with Radeon Graphics", "gfx90c"),         # Cezanne desktop
    ("AMD Ryzen 9 5900HX with Radeon Graphics", "gfx90c"),        # Cezanne laptop
    ("AMD Ryzen 5 5500U with Radeon Graphics", "gfx90c"),         # Lucienne
    ("AMD Ryzen 5 7530U with Radeon Graphics", "gfx90c"),         # Barcelo-R
    ("AMD Ryzen 9 6900HX with Radeon Graphics", "gfx1035"),       # Rembrandt
    ("AMD Ryzen 7 7735HS with Radeon Graphics", "gfx1035"),       # Rembrandt-R
    ("AMD Ryzen 5 7520U with Radeon Graphics", "gfx1037"),        # Mendocino
    ("Ryzen 5 3400G", "gfx902"),                                  # Picasso desktop
    ("AMD Ryzen 5 2400G with Radeon Vega Graphics", "gfx902"),    # Raven Ridge
    ("AMD Ryzen 7 7700X 8-Core Processor", "gfx1036"),            # Raphael (IBM/text-generation-inference#45)
    ("AMD Ryzen 9 9950X3D 16-Core Processor", "gfx1036"),         # Granite Ridge
    ("AMD Ryzen 9 7945HX with Radeon Graphics", "gfx1036"),       # Dragon Range
])
def test_an_apu_named_by_its_cpu_is_its_igpu(matrix, query, arch):
    g = matrix.find_gpu(query)
    assert (g.vendor, g.arch, g.segment) == ("amd", arch, "integrated"), g
    res = plan_for(matrix, gpus=[query])
    assert res.chosen is None and res.status == "no_official_build"


@pytest.mark.parametrize("query", ["AMD Ryzen 7 5800X", "AMD Ryzen 7 2700X", "AMD Ryzen 5 5500",
                                   "AMD Ryzen 5 4500", "AMD Ryzen 5 7500F", "AMD Ryzen 5 3600"])
def test_a_cpu_without_an_igpu_stays_unknown(cli, query):
    # desktop parts without graphics (Vermeer, Pinnacle Ridge, Matisse) or with it fused off (5500, 4500, 7500F)
    r = cli(["plan", "--gpu", query, "--json"])
    assert r.code == 2 and "unknown GPU" in r.err


def test_an_apu_that_prints_its_gpu_keeps_that_gpu_row(matrix):
    # Phoenix prints "w/ Radeon 780M Graphics": the GPU row answers, not a CPU-model pattern
    assert matrix.find_gpu("AMD Ryzen 9 7940HS w/ Radeon 780M Graphics").name == matrix.find_gpu("Radeon 780M").name
    from envcheck.errors import UnknownGpuError

    with pytest.raises(UnknownGpuError):  # a Phoenix part named without its GPU is not taken for a Raphael iGPU
        matrix.find_gpu("AMD Ryzen 9 7940HS")


# The PCI database names several products in one entry ("Navi 23 [Radeon RX 6650 XT / 6700S / 6800S]"):
# each is the series words plus its number, and a product asked for by name is that product, not the
# first sibling the GPU rows know (ROCm/legacy-rocm-build#1756: "RX 6700S (laptop GPU)", gfx1032).
@pytest.mark.parametrize("query, name, arch", [
    ("Radeon RX 6700S", "AMD Radeon RX 6700S (Navi 23)", "gfx1032"),
    ("RX 6800S", "AMD Radeon RX 6800S (Navi 23)", "gfx1032"),
    ("RX 6850M XT", "AMD Radeon RX 6850M XT (Navi 22)", "gfx1031"),
])
def test_each_product_of_a_pci_entry_is_itself(matrix, query, name, arch):
    g = matrix.find_gpu(query)
    assert (g.name, g.arch) == (name, arch)


def test_an_igpu_given_beside_a_discrete_gpu_of_its_vendor_stays_unused(cli):
    # ROCm/legacy-rocm-build#4380: an RX 7600 XT (gfx1102) beside the Ryzen 7000 iGPU (rocm-smi: gfx1036);
    # served_gpus documents that integrated GPUs count only when nothing discrete is there
    for igpu in ("gfx1036", "AMD Ryzen 7 7700X 8-Core Processor"):
        plan = cli(["plan", "--gpu", "RX 7600 XT", "--gpu", igpu, "--os", "linux", "--json"]).json()
        assert plan["status"] == "ok" and plan["chosen"]["variant"].startswith("rocm"), igpu
        assert any("stays unused" in a and ("gfx1036" in a or "7700X" in a) for a in plan["assumptions"]), igpu
    plan = cli(["plan", "--gpu", "gfx1036", "--os", "linux", "--json"]).json()
    assert plan["status"] == "no_official_build"  # alone, the iGPU is the one to plan for
