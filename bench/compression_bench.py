"""What gRPC message compression saves on a result's download, and what it costs, per matrix.

    python bench/compression_bench.py --server HOST:PORT [matrices/*.mtx.gz] \
        [--generated poisson3d7:60 ...] [--repeats 5] [--links 100,1000,10000] [--tsv out.tsv]

For each A, C = A @ A is kept on the server (any backend), then downloaded
over the wire by the Python client with compression None, "gzip" and
"deflate" (the server compresses its replies on the call's request). Per
download: the median ms of --repeats after one warm-up on the link this runs
on (loopback: the codecs' CPU time is what it measures), and the bytes a
compressed reply carries: each chunk's arrays (offsets, columns, values, as
the server's chunks of 2 MiB hold them) through zlib at its default level,
the level gRPC's gzip and deflate use. `delta` is a candidate the service
does not have: the columns of each row as differences, then zlib at level 1,
values as they are (its bytes only: no time, nothing runs it).

The time at a slower link of L Mbit/s is modelled from both: a download is
as slow as the slower of its measured time here and its bytes through the
link (compression and transfer overlap chunk by chunk). Rows of the TSV:
matrix rows nnz_c raw_mb codec wire_mb ratio ms mbps link_mbit modelled_ms
(mbps: raw megabytes per second here; one row per codec and link).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import zlib
from typing import Dict, List, Tuple

import numpy as np
import scipy.sparse as sp

CHUNK_BYTES = 2 << 20  # the server's default chunk
CODECS = [None, "gzip", "deflate"]
COLUMNS = ["matrix", "rows", "nnz_c", "raw_mb", "codec", "wire_mb", "ratio", "ms", "mbps", "link_mbit",
           "modelled_ms"]


def chunks(c: sp.csr_array) -> List[Tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """C's rows in blocks of about CHUNK_BYTES: (offsets, columns, values) of each."""
    out = []
    indptr = c.indptr.astype(np.int64)
    row = 0
    while row < c.shape[0]:
        # Rows until the block's entries (12 bytes each) and offsets fill a chunk.
        limit = indptr[row] + max(CHUNK_BYTES // 12, 1)
        end = max(int(np.searchsorted(indptr, limit, side="right")) - 1, row + 1)
        end = min(end, c.shape[0])
        lo, hi = indptr[row], indptr[end]
        out.append((indptr[row:end + 1] - lo, c.indices[lo:hi].astype(np.int32), c.data[lo:hi]))
        row = end
    return out


def delta_columns(offsets: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """Each row's columns as differences from the one before, its first as it is."""
    d = cols.copy()
    d[1:] -= cols[:-1]
    starts = offsets[:-1][offsets[:-1] < len(cols)]
    d[starts] = cols[starts]
    return d


def compressed_bytes(blocks: List[Tuple[np.ndarray, np.ndarray, np.ndarray]], delta: bool) -> int:
    """Bytes of the blocks through zlib: as they are (default level), or columns as row differences (level 1)."""
    total = 0
    for offsets, cols, vals in blocks:
        if delta:
            total += len(zlib.compress(offsets.tobytes() + delta_columns(offsets, cols).tobytes(), 1)) + vals.nbytes
        else:
            total += len(zlib.compress(offsets.tobytes() + cols.tobytes() + vals.tobytes()))
    return total


def timed_download(client: "spgemm.Client", handle: str, repeats: int) -> float:
    client.download(handle)
    ms = []
    for _ in range(repeats):
        t = time.perf_counter()
        client.download(handle)
        ms.append(1e3 * (time.perf_counter() - t))
    return statistics.median(ms)


def main() -> int:
    import spgemm  # here: the helpers above run without the client installed (tests/bench)

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from e2e_bench import generated, load  # the same matrices as the end-to-end bench

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("matrices", nargs="*")
    ap.add_argument("--server", required=True, help="HOST:PORT of a running spgemmd")
    ap.add_argument("--generated", nargs="*", default=[], help="specs as e2e_bench.py takes them")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--links", default="100,1000,10000", help="link rates to model, Mbit/s")
    ap.add_argument("--tsv")
    args = ap.parse_args()
    links = [float(x) for x in args.links.split(",")]
    inputs: List[Tuple[str, sp.csr_array]] = [(os.path.basename(p).split(".")[0], load(p)) for p in args.matrices]
    inputs += [(spec, generated(spec)) for spec in args.generated]

    plain = spgemm.Client(args.server, transfer="wire")
    clients: Dict[object, "spgemm.Client"] = {codec: spgemm.Client(args.server, transfer="wire", compression=codec)
                                            for codec in CODECS}
    rows = []
    for name, a in inputs:
        kept = plain.multiply(a, keep=True)
        c = plain.download(kept)
        raw = c.indptr.size * 8 + c.nnz * (4 + c.data.itemsize)
        blocks = chunks(sp.csr_array(c))
        wire = {None: raw, "gzip": compressed_bytes(blocks, False), "deflate": compressed_bytes(blocks, False),
                "delta": compressed_bytes(blocks, True)}
        ms = {codec: timed_download(clients[codec], kept.handle, args.repeats) for codec in CODECS}
        kept.delete()
        for codec in CODECS + ["delta"]:
            for link in links:
                link_ms = wire[codec] * 8 / (link * 1e6) * 1e3
                timed = codec in ms
                rows.append([name, c.shape[0], c.nnz, "%.1f" % (raw / 1e6), codec or "none", "%.1f" % (wire[codec] / 1e6),
                             "%.2f" % (raw / wire[codec]), "%.1f" % ms[codec] if timed else "NA",
                             "%.0f" % (raw / 1e3 / ms[codec]) if timed else "NA", "%.0f" % link,
                             "%.1f" % max(ms[codec], link_ms) if timed else "NA"])
        print("%s: nnz(C) %d, %.1f MB raw; gzip %.2fx in %.1f ms, none %.1f ms, delta %.2fx" %
              (name, c.nnz, raw / 1e6, raw / wire["gzip"], ms["gzip"], ms[None], raw / wire["delta"]), file=sys.stderr)

    if args.tsv:
        with open(args.tsv, "w") as f:
            f.write("\t".join(COLUMNS) + "\n")
            for r in rows:
                f.write("\t".join(str(x) for x in r) + "\n")
    # The short table: modelled ms per link, none against gzip.
    print("| matrix | raw MB | gzip x | " + " | ".join("%g Mbit/s none / gzip ms" % l for l in links) + " |")
    print("|---|---|---|" + "---|" * len(links))
    for name, _ in inputs:
        mine = [r for r in rows if r[0] == name]
        cell = {(r[4], r[9]): r[10] for r in mine}
        ratio = next(r[6] for r in mine if r[4] == "gzip")
        print("| %s | %s | %s | " % (name, mine[0][3], ratio) +
              " | ".join("%s / %s" % (cell[("none", "%.0f" % l)], cell[("gzip", "%.0f" % l)]) for l in links) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
