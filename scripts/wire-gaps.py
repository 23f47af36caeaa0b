#!/usr/bin/env python3
"""Inter-token gaps on the wire, from a packet capture of an OpenAI-compatible streaming server.

The referee for the serving accuracy bar (docs/performance.md, "Serving"): the capture's kernel
timestamps say when each response segment went over loopback, independently of the server's own
record and of the client. Capture the server's side of the connections, then read the file:

    tcpdump -i lo -nn -B 131072 -s 0 --time-stamp-precision=nano -w cap.pcap 'tcp src port 8011'
    python3 scripts/wire-gaps.py cap.pcap

A response starts with a segment beginning "HTTP/1.1"; its content events are the chunks with a
non-empty "content". It prints the p50 and p99 of the gaps between consecutive content events
(events in one segment have a gap of 0), and of the gaps by itl_ms's definition (docs/metrics.md):
a segment is one delivery whose gap is spread over the events it carries. Standard library only.
"""
import collections
import struct
import sys


def segments(path):
    """Yields (client port, time in seconds, TCP payload) for each non-empty segment."""
    with open(path, "rb") as f:
        head = f.read(24)
        magic = struct.unpack("<I", head[:4])[0]
        if magic not in (0xA1B2C3D4, 0xA1B23C4D):
            sys.exit(f"{path}: not a little-endian pcap file (magic {magic:#x})")
        if struct.unpack("<I", head[20:24])[0] != 1:
            sys.exit(f"{path}: link type is not Ethernet (capture on lo with tcpdump -i lo)")
        scale = 1e9 if magic == 0xA1B23C4D else 1e6
        while True:
            h = f.read(16)
            if len(h) < 16:
                return
            sec, frac, incl, _ = struct.unpack("<IIII", h)
            d = f.read(incl)
            ip = d[14:]
            if not ip or ip[0] >> 4 != 4:
                continue
            tcp = ip[(ip[0] & 15) * 4:]
            payload = tcp[(tcp[12] >> 4) * 4:]
            if payload:
                yield struct.unpack(">H", tcp[2:4])[0], sec + frac / scale, payload


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else float("nan")


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    conns = collections.defaultdict(list)
    for port, t, payload in segments(sys.argv[1]):
        conns[port].append((t, payload))
    raw, deliveries, responses = [], [], 0
    for segs in conns.values():
        events, prev = None, None
        for t, payload in segs:
            if payload.startswith(b"HTTP/1.1"):
                events, prev = [], None
                responses += 1
            if events is None:
                continue
            n = payload.count(b'"content":"') - payload.count(b'"content":""')
            if n == 0:
                continue
            if events:
                raw.append((t - events[-1]) * 1e3)
            raw.extend([0.0] * (n - 1))
            events.extend([t] * n)
            if prev is not None:
                deliveries.extend([(t - prev) * 1e3 / n] * n)
            prev = t
    print(f"{responses} responses")
    print(f"per event:     n={len(raw)} p50 {pct(raw, .5):.3f} ms  p99 {pct(raw, .99):.3f} ms")
    print(f"per delivery:  n={len(deliveries)} p50 {pct(deliveries, .5):.3f} ms  p99 {pct(deliveries, .99):.3f} ms")


if __name__ == "__main__":
    main()
