#!/usr/bin/env python3
"""Independent check of frames our builder wrote: scapy decodes each frame of a pcap and
recomputes its ICRC. Prints one JSON object per frame:
  {"frame": n, "icrc_ok": bool, "opcode": int, "dqpn": int, "psn": int, "padcount": int,
   "ip_len": int, "vlan": int | null}
Used by tests/scapy_oracle.rs. Usage: scapy_verify.py FILE.pcap
"""
import json
import sys

from scapy.all import IP, UDP, Dot1Q, Ether, IPv6, load_contrib, raw, rdpcap

load_contrib("roce")
from scapy.contrib.roce import BTH  # noqa: E402


def main(path):
    for n, pkt in enumerate(rdpcap(path), 1):
        frame = raw(pkt)
        eth = Ether(frame)
        bth = eth[BTH]
        # The ICRC is the last 4 bytes of the IP packet; scapy recomputes it when asked to
        # rebuild with icrc=None.
        copy = eth.copy()
        del copy[BTH].icrc
        calc = Ether(raw(copy))[BTH].icrc
        ip_len = eth[IP].len if IP in eth else eth[IPv6].plen + 40
        print(json.dumps({
            "frame": n,
            "icrc_ok": bth.icrc == calc,
            "opcode": bth.opcode,
            "dqpn": bth.dqpn,
            "psn": bth.psn,
            "padcount": bth.padcount,
            "ip_len": ip_len,
            "udp_len": eth[UDP].len,
            "vlan": eth[Dot1Q].vlan if Dot1Q in eth else None,
        }))


if __name__ == "__main__":
    main(sys.argv[1])
