"""Platform facts from a synthetic /sys and /proc tree (the layout Linux uses), and from nothing."""

from __future__ import annotations

import os

from mltriage.probe import platform_facts
from mltriage.probe.platform_facts import parse_acs_config, parse_lspci_acs

GPU_A, GPU_B = "0000:03:00.0", "0000:04:00.0"
# root port 00:01.0 -> switch upstream 01:00.0 -> downstream ports 02:00.0 / 02:01.0 -> GPUs
CHAIN_A = ["0000:00:01.0", "0000:01:00.0", "0000:02:00.0", GPU_A]
CHAIN_B = ["0000:00:01.0", "0000:01:00.0", "0000:02:01.0", GPU_B]


def config_space(acs_ctrl: int | None) -> bytes:
    """4 KiB config space: AER at 0x100, then (optionally) ACS at 0x148 with ``acs_ctrl``."""
    cfg = bytearray(4096)
    nxt = 0x148 if acs_ctrl is not None else 0
    cfg[0x100:0x104] = (0x0001 | 1 << 16 | nxt << 20).to_bytes(4, "little")
    if acs_ctrl is not None:
        cfg[0x148:0x14C] = (0x000D | 1 << 16).to_bytes(4, "little")
        cfg[0x14E:0x150] = acs_ctrl.to_bytes(2, "little")
    return bytes(cfg)


def make_tree(root, configs: dict[str, bytes], iommu_type: str | None = "DMA-FQ") -> str:
    base = os.path.join(root, "sys/devices/pci0000:00")
    bus = os.path.join(root, "sys/bus/pci/devices")
    os.makedirs(bus)
    for chain in (CHAIN_A, CHAIN_B):
        path = os.path.join(base, *chain)
        os.makedirs(path, exist_ok=True)
        for i, bdf in enumerate(chain):
            dev = os.path.join(base, *chain[:i + 1])
            link = os.path.join(bus, bdf)
            if not os.path.islink(link):
                os.symlink(os.path.relpath(dev, bus), link)
            if bdf in configs:
                with open(os.path.join(dev, "config"), "wb") as f:
                    f.write(configs[bdf])
    groups = os.path.join(root, "sys/kernel/iommu_groups")
    for g in ("0", "1", "2"):
        os.makedirs(os.path.join(groups, g))
    if iommu_type:
        for gpu in (GPU_A, GPU_B):
            os.makedirs(os.path.join(bus, gpu, "iommu_group"))
            with open(os.path.join(bus, gpu, "iommu_group", "type"), "w") as f:
                f.write(iommu_type + "\n")
    os.makedirs(os.path.join(root, "proc"))
    with open(os.path.join(root, "proc/cmdline"), "w") as f:
        f.write("BOOT_IMAGE=/vmlinuz root=/dev/sda1 intel_iommu=on quiet\n")
    with open(os.path.join(root, "proc/cpuinfo"), "w") as f:
        f.write("processor\t: 0\nflags\t\t: fpu vme de pse tsc msr hypervisor lahf_lm\n")
    return str(root)


def test_acs_redirect_on_one_side_of_the_switch(tmp_path):
    redirect = 1 << 0 | 1 << 2 | 1 << 3 | 1 << 4  # SrcValid ReqRedir CmpltRedir UpstreamFwd
    root = make_tree(tmp_path, {"0000:02:00.0": config_space(redirect), "0000:02:01.0": config_space(0),
                                "0000:01:00.0": config_space(redirect)})
    facts = platform_facts.collect([GPU_A, GPU_B], root=root, lspci=lambda b: None)
    pair = facts["acs"]["pairs"][0]
    # only the two downstream ports lie between the GPUs; the shared upstream port does not
    assert [b["bdf"] for b in pair["bridges"]] == ["0000:02:00.0", "0000:02:01.0"]
    assert pair["bridges"][0]["acs"] == "SrcValid ReqRedir CmpltRedir UpstreamFwd"
    assert pair["bridges"][1] == {"bdf": "0000:02:01.0", "acs": "none enabled", "redirect": False}
    assert pair["acs_redirect"] is True
    assert facts["iommu"]["mode"] == "translated" and facts["iommu"]["groups"] == 3
    assert facts["iommu"]["cmdline_flags"] == ["intel_iommu=on"]
    assert facts["virtualization"]["hypervisor"] is True


def test_unreadable_config_falls_back_to_lspci(tmp_path):
    short = bytes(64)  # what a non-root user reads from the config file
    root = make_tree(tmp_path, {"0000:02:00.0": short, "0000:02:01.0": short}, iommu_type="identity")
    # pciutils ls-ecaps.c: "\t\tACSCtl:\tSrcValid%c TransBlk%c ReqRedir%c CmpltRedir%c UpstreamFwd%c EgressCtrl%c DirectTrans%c\n"
    lspci_out = {"0000:02:00.0": "\t\tACSCtl:\tSrcValid+ TransBlk- ReqRedir- CmpltRedir- UpstreamFwd- EgressCtrl- DirectTrans-\n"}
    facts = platform_facts.collect([GPU_A, GPU_B], root=root, lspci=lspci_out.get)
    pair = facts["acs"]["pairs"][0]
    assert pair["bridges"][0]["acs"] == "SrcValid" and pair["bridges"][0]["redirect"] is False
    assert pair["bridges"][1]["acs"] == "unknown"  # no lspci either: unknown, not "off"
    assert pair["acs_redirect"] == "unknown"
    assert facts["iommu"]["mode"] == "passthrough"


def test_nothing_readable_is_unknown(tmp_path):
    facts = platform_facts.collect([GPU_A, GPU_B], root=str(tmp_path))
    assert facts["acs"]["status"] == "unknown"
    assert facts["iommu"]["mode"] == "unknown" and facts["iommu"]["groups"] == "unknown"
    assert facts["virtualization"]["hypervisor"] == "unknown"


def test_config_parsers():
    assert parse_acs_config(config_space(None)) == {"acs": "absent", "redirect": False}
    assert parse_acs_config(config_space(1 << 3))["redirect"] is True
    assert parse_lspci_acs("no acs here") == {"acs": "absent", "redirect": False}
    loop = bytearray(config_space(None))
    loop[0x100:0x104] = (0x0001 | 0x100 << 20).to_bytes(4, "little")  # points at itself
    assert parse_acs_config(bytes(loop))["acs"] == "absent"
