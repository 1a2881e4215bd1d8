#!/usr/bin/env python3
"""The server's per-phase timeline of kept products, from spgemmd's log.

    service_timeline.py SPGEMMD_LOG [SERVICE_MD]

Reads the `multiply` lines of a text-format log (one per call, with the phase
times spgemmd logs: docs/operations.md) and prints, per product kept on the
server, the median of each phase in ms. SERVICE_MD (spgemm-service-bench
--markdown) names the products by their nnz(C); without it they go by nnz.
The first two calls of each product (the bench's warm-ups) are left out.
"""
import re
import statistics
import sys

PHASES = ["total", "request", "queue", "admit", "estimate", "handoff", "compute", "engine", "release", "keep", "reply"]
WARMUPS = 2


def names_by_nnz(markdown_path):
    names = {}
    with open(markdown_path) as f:
        for line in f:
            m = re.match(r"^(\S+): n \d+, nnz\(A\) \d+, nnz\(C\) (\d+),", line)
            if m:
                names.setdefault(m.group(2), m.group(1))
    return names


def main(argv):
    if len(argv) not in (2, 3):
        sys.exit(__doc__)
    names = names_by_nnz(argv[2]) if len(argv) == 3 else {}
    calls = {}  # nnz -> [fields], in log order
    with open(argv[1]) as f:
        for line in f:
            if " event=multiply " not in line or " kept=true " not in line or " code=ok " not in line:
                continue
            fields = dict(re.findall(r"(\w+)=(\S+)", line))
            calls.setdefault(fields["nnz"], []).append(fields)
    print("%-22s %5s " % ("product (kept)", "calls") + " ".join("%8s" % p for p in PHASES))
    for nnz, rows in calls.items():
        timed = rows[WARMUPS:] or rows
        medians = [statistics.median(float(r[p + "_ms"]) for r in timed) for p in PHASES]
        print("%-22s %5d " % (names.get(nnz, "nnz " + nnz)[:22], len(timed)) + " ".join("%8.4f" % v for v in medians))


if __name__ == "__main__":
    main(sys.argv)
