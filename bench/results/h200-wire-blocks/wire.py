"""Python wire download rate of kept results (TCP loopback and the Unix socket), GB/s of payload."""
import os, statistics, sys, time
import numpy as np, scipy.sparse as sp
import spgemm

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from spec_matrices import load  # noqa: E402  (bench/spec_matrices.py)

addresses, specs = sys.argv[1].split(","), sys.argv[2:]
for spec in specs:
    name, a = load(spec)
    for address in addresses:
        with spgemm.Client(address, transfer="wire", timeout=600, progress=False) as c:
            with c.upload(a) as r:
                kept = c.multiply(r, r, keep=True)
                nbytes = 8 * (kept.shape[0] + 1) + 12 * kept.nnz
                t = []
                for _ in range(5):
                    t0 = time.perf_counter(); m = c.download(kept); t.append(time.perf_counter() - t0)
                assert m.nnz == kept.nnz
                kept.delete()
        print("%s\t%s\t%d\t%.1f MB\t%.2f GB/s (median of 5)" % (name, address.split(":")[0], kept.nnz, nbytes / 1e6,
                                                                nbytes / statistics.median(t) / 1e9), flush=True)
