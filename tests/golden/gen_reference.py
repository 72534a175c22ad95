#!/usr/bin/env python3
"""Regenerate the scapy RoCEv2 reference frames used by the golden tests.

Writes two files:
  scapy_reference.pcap  Ethernet frames (linktype 1, microsecond pcap, fixed timestamps)
  scapy_reference.json  manifest {"generator": "scapy <ver>", "frames": [{"name", "desc"}, ...]};
                        entry i describes pcap frame i, in the schema our Rust tests deserialize.

Why scapy: its `contrib.roce` layer (BTH, AETH, CNPPadding) is a RoCEv2 implementation written
independently of ours. The frames are built with scapy's own layers, and scapy computes the IP
and UDP lengths, the IPv4 header checksum and the ICRC (BTH.icrc left as None). Extension headers
scapy lacks (RETH, ImmDt, IETH, AtomicETH, AtomicAckETH, DETH) are packed with struct as Raw
bytes. Our builder must reproduce every frame byte for byte from its description and our parser
must recover the description from the frame.

Coverage: every RC, UC, UD opcode and CNP, x IPv4/IPv6, x with/without one 802.1Q tag, x pad
0..3 for opcodes with a payload. The other fields come from a seeded random.Random, so the output
is identical on every run. No Ethernet minimum-size padding is added; UDP checksum is 0.

Usage (from any directory):
  python3 tests/golden/gen_reference.py            # writes next to this script
  python3 tests/golden/gen_reference.py OUT_DIR    # writes into OUT_DIR
"""
import ipaddress
import json
import os
import random
import struct
import sys

import scapy
from scapy.all import Dot1Q, Ether, IP, IPv6, PcapWriter, Raw, UDP, load_contrib, raw

load_contrib("roce")
from scapy.contrib.roce import AETH, BTH, CNPPadding  # noqa: E402

SEED = 0x526F4345  # "RoCE"
ROCE_PORT = 4791
BASE_TIME = 1_700_000_000

# Low opcode bits shared by RC and UC: (name, extension headers, carries payload)
_SEND_WRITE = {
    0x00: ("send_first", (), True),
    0x01: ("send_middle", (), True),
    0x02: ("send_last", (), True),
    0x03: ("send_last_with_immediate", ("immdt",), True),
    0x04: ("send_only", (), True),
    0x05: ("send_only_with_immediate", ("immdt",), True),
    0x06: ("rdma_write_first", ("reth",), True),
    0x07: ("rdma_write_middle", (), True),
    0x08: ("rdma_write_last", (), True),
    0x09: ("rdma_write_last_with_immediate", ("immdt",), True),
    0x0A: ("rdma_write_only", ("reth",), True),
    0x0B: ("rdma_write_only_with_immediate", ("reth", "immdt"), True),
}
_RC_ONLY = {
    0x0C: ("rdma_read_request", ("reth",), False),
    0x0D: ("rdma_read_response_first", ("aeth",), True),
    0x0E: ("rdma_read_response_middle", (), True),
    0x0F: ("rdma_read_response_last", ("aeth",), True),
    0x10: ("rdma_read_response_only", ("aeth",), True),
    0x11: ("acknowledge", ("aeth",), False),
    0x12: ("atomic_acknowledge", ("aeth", "atomic_ack_eth"), False),
    0x13: ("compare_swap", ("atomic_eth",), False),
    0x14: ("fetch_add", ("atomic_eth",), False),
    0x16: ("send_last_with_invalidate", ("ieth",), True),
    0x17: ("send_only_with_invalidate", ("ieth",), True),
}
# opcode -> (frame name prefix, extension headers in wire order, carries payload)
OPCODES = {}
for _op, (_n, _h, _p) in sorted({**_SEND_WRITE, **_RC_ONLY}.items()):
    OPCODES[_op] = ("rc_" + _n, _h, _p)
for _op, (_n, _h, _p) in _SEND_WRITE.items():
    OPCODES[0x20 | _op] = ("uc_" + _n, _h, _p)
OPCODES[0x64] = ("ud_send_only", ("deth",), True)
OPCODES[0x65] = ("ud_send_only_with_immediate", ("deth", "immdt"), True)
OPCODES[0x81] = ("cnp", (), False)

# Manifest key order for the extension headers (wire order is given per opcode above).
DESC_EXT_ORDER = ("reth", "aeth", "immdt", "ieth", "atomic_eth", "atomic_ack_eth", "deth")


def rand_mac(rng):
    b = bytearray(rng.randbytes(6))
    b[0] = (b[0] & 0xFC) | 0x02  # locally administered unicast
    return ":".join("%02x" % x for x in b)


def rand_ipv6(rng):
    if rng.random() < 0.5:  # short form, so "::" compression is exercised
        return str(ipaddress.IPv6Address((0xFD00 << 112) | rng.getrandbits(16)))
    return str(ipaddress.IPv6Address((0xFD << 120) | rng.getrandbits(120)))


def payload_len(rng, pad):
    """A payload length whose pad count is `pad`: mostly 0..~70 bytes, sometimes 256/1024-ish."""
    if rng.random() < 0.1:
        return rng.choice((256, 1024)) - pad
    return 4 * rng.randrange(18) + (-pad & 3)


def make_desc(rng, opcode, v6, vlan, pad):
    _, headers, has_payload = OPCODES[opcode]
    def u64(): return rng.getrandbits(64)
    def u32(): return rng.getrandbits(32)
    def u24(): return rng.getrandbits(24)
    def flag(): return rng.random() < 0.5

    eth = {"dst": rand_mac(rng), "src": rand_mac(rng), "vlan": None}
    if vlan:
        eth["vlan"] = {"pcp": rng.randrange(8), "dei": flag(), "vid": rng.randrange(4096)}
    if v6:
        ip = {"v6": {"src": rand_ipv6(rng), "dst": rand_ipv6(rng), "dscp": rng.randrange(64),
                     "ecn": rng.randrange(4), "flow_label": rng.getrandbits(20),
                     "hop_limit": rng.randrange(256)}}
    else:
        ip = {"v4": {"src": str(ipaddress.IPv4Address((10 << 24) | u24())),
                     "dst": str(ipaddress.IPv4Address((10 << 24) | u24())),
                     "dscp": rng.randrange(64), "ecn": rng.randrange(4), "ttl": rng.randrange(256),
                     "ident": rng.getrandbits(16), "dont_frag": flag()}}
    udp = {"src_port": rng.getrandbits(16), "dst_port": ROCE_PORT}
    bth = {"opcode": opcode, "solicited": flag(), "mig_req": flag(), "tver": 0,
           "pkey": rng.getrandbits(16), "fecn": flag(), "becn": flag(), "dest_qp": u24(),
           "ack_req": flag(), "psn": u24()}
    if opcode == 0x81:  # CNP: typical values from Annex A17.9.3, only DestQP varies
        bth.update(solicited=False, mig_req=False, pkey=0xFFFF, fecn=False, becn=True,
                   ack_req=False, psn=0)
    desc = {"eth": eth, "ip": ip, "udp": udp, "bth": bth}
    values = {
        "reth": lambda: {"va": u64(), "rkey": u32(), "dma_len": u32()},
        "aeth": lambda: {"syndrome": rng.choice((0x1F, 0x60, 0x2E, rng.getrandbits(8))),
                         "msn": u24()},
        "immdt": u32,
        "ieth": u32,
        "atomic_eth": lambda: {"va": u64(), "rkey": u32(), "swap_add": u64(), "compare": u64()},
        "atomic_ack_eth": lambda: {"orig": u64()},
        "deth": lambda: {"qkey": u32(), "src_qp": u24()},
    }
    for h in DESC_EXT_ORDER:
        if h in headers:
            desc[h] = values[h]()
    desc["payload"] = rng.randbytes(payload_len(rng, pad)).hex() if has_payload else ""
    return desc


def pack_ext(desc, h):
    """Big-endian bytes of one extension header scapy has no layer for."""
    v = desc[h]
    if h == "reth":
        return struct.pack("!QII", v["va"], v["rkey"], v["dma_len"])
    if h in ("immdt", "ieth"):
        return struct.pack("!I", v)
    if h == "atomic_eth":
        return struct.pack("!QIQQ", v["va"], v["rkey"], v["swap_add"], v["compare"])
    if h == "atomic_ack_eth":
        return struct.pack("!Q", v["orig"])
    if h == "deth":
        return struct.pack("!IB", v["qkey"], 0) + v["src_qp"].to_bytes(3, "big")
    raise ValueError(h)


def build_frame(desc):
    """The scapy packet for one description; scapy fills in lengths, checksums and the ICRC."""
    eth, b = desc["eth"], desc["bth"]
    frame = Ether(dst=eth["dst"], src=eth["src"])
    if eth["vlan"] is not None:
        v = eth["vlan"]
        frame /= Dot1Q(prio=v["pcp"], dei=int(v["dei"]), vlan=v["vid"])
    if "v4" in desc["ip"]:
        i = desc["ip"]["v4"]
        frame /= IP(version=4, ihl=5, tos=i["dscp"] << 2 | i["ecn"], id=i["ident"],
                    flags="DF" if i["dont_frag"] else 0, frag=0, ttl=i["ttl"], proto=17,
                    src=i["src"], dst=i["dst"])
    else:
        i = desc["ip"]["v6"]
        frame /= IPv6(tc=i["dscp"] << 2 | i["ecn"], fl=i["flow_label"], nh=17,
                      hlim=i["hop_limit"], src=i["src"], dst=i["dst"])
    frame /= UDP(sport=desc["udp"]["src_port"], dport=desc["udp"]["dst_port"], chksum=0)
    payload = bytes.fromhex(desc["payload"])
    pad = -len(payload) & 3
    frame /= BTH(opcode=b["opcode"], solicited=int(b["solicited"]), migreq=int(b["mig_req"]),
                 padcount=pad, version=b["tver"], pkey=b["pkey"], fecn=int(b["fecn"]),
                 becn=int(b["becn"]), resv6=0, dqpn=b["dest_qp"], ackreq=int(b["ack_req"]),
                 resv7=0, psn=b["psn"], icrc=None)
    _, headers, _ = OPCODES[b["opcode"]]
    if b["opcode"] == 0x81:
        return frame / CNPPadding()
    if "aeth" in headers:  # AETH always comes first after the BTH
        frame /= AETH(syndrome=desc["aeth"]["syndrome"], msn=desc["aeth"]["msn"])
    rest = b"".join(pack_ext(desc, h) for h in headers if h != "aeth") + payload + bytes(pad)
    return frame / Raw(rest) if rest else frame


def cases():
    """(name, opcode, v6, vlan, pad) for every combination, in a fixed order."""
    for opcode, (prefix, _, has_payload) in OPCODES.items():
        for v6 in (False, True):
            for vlan in (False, True):
                for pad in (range(4) if has_payload else (0,)):
                    name = "%s_%s%s_pad%d" % (prefix, "v6" if v6 else "v4",
                                              "_vlan" if vlan else "", pad)
                    yield name, opcode, v6, vlan, pad


def main(argv):
    out_dir = argv[1] if len(argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    os.makedirs(out_dir, exist_ok=True)
    rng = random.Random(SEED)
    frames = []
    pcap_path = os.path.join(out_dir, "scapy_reference.pcap")
    # Little-endian microsecond pcap. write_packet() does not emit the file header (scapy would
    # append it at close()), so write it first.
    writer = PcapWriter(pcap_path, linktype=1, endianness="<", nano=False)
    writer.write_header(None)
    try:
        for n, (name, opcode, v6, vlan, pad) in enumerate(cases()):
            desc = make_desc(rng, opcode, v6, vlan, pad)
            pkt = build_frame(desc)
            data = raw(pkt)
            writer.write_packet(data, sec=BASE_TIME + n // 1000, usec=n % 1000 * 1000)
            frames.append({"name": name, "desc": desc})
    finally:
        writer.close()
    manifest = {"generator": "scapy %s" % scapy.__version__, "frames": frames}
    with open(os.path.join(out_dir, "scapy_reference.json"), "w") as f:
        f.write(json.dumps(manifest, indent=1) + "\n")
    print("wrote %d frames to %s and scapy_reference.json" % (len(frames), pcap_path))


if __name__ == "__main__":
    main(sys.argv)
