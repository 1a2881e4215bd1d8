"""CUDA IPC product timings of one client build against one server: CuPy in, CuPy out, and CuPy's own A @ A."""
import cProfile, io, os, pstats, statistics, sys, time
import numpy as np, scipy.io, scipy.sparse as sp
import cupy, cupyx.scipy.sparse as csp
import spgemm

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
from spec_matrices import load  # noqa: E402  (bench/spec_matrices.py)

address, label, paths = sys.argv[1], sys.argv[2], sys.argv[3:]


def median_ms(f, n=15):
    f(); f()
    t = []
    for _ in range(n):
        t0 = time.perf_counter(); f(); t.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(t)


with spgemm.Client(address) as c:
    for path in paths:
        name, a = load(path)
        ref = a @ a
        da = csp.csr_matrix(a)
        dc = c.multiply(da)
        assert isinstance(dc, csp.csr_matrix)
        err = abs(dc.get() - ref).max() if ref.nnz else 0.0
        assert err <= 1e-9 * max(1.0, abs(ref).max()), name
        ipc = median_ms(lambda: c.multiply(da))

        def dev():
            da @ da
            cupy.cuda.get_current_stream().synchronize()

        try:
            cupy_ms = median_ms(dev)
        except Exception as e:  # cuSPARSE's SpGEMM runs out of its resources on some
            print(name, "CuPy:", str(e)[:120], file=sys.stderr)
            cupy_ms = float("nan")
        print("%s\t%s\t%d\t%.3f\t%.3f" % (label, name, ref.nnz, ipc, cupy_ms), flush=True)
        if os.environ.get("PROFILE") == name:
            pr = cProfile.Profile(); pr.enable()
            for _ in range(10):
                c.multiply(da)
            pr.disable(); out = io.StringIO()
            pstats.Stats(pr, stream=out).sort_stats("tottime").print_stats(14)
            print(out.getvalue()[-3500:], file=sys.stderr)
