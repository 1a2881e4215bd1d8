"""Python wire downloads of kept results with and without the client's malloc thresholds (spgemm._malloc).

    python wire_malloc.py ADDRESS ROUNDS SPEC...

Per SPEC (bench/spec_matrices.py), the product A*A is kept on the server; then, ROUNDS times,
a fresh client process per arm (SPGEMM_MALLOC_TUNING=0 and =1, in turn) downloads it 7 times
and reports its median GB/s of payload and its own CPU and page faults per download.
"""
import os, resource, statistics, subprocess, sys, time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", ".."))

ARM = r"""
import resource, statistics, sys, time, spgemm
with spgemm.Client(sys.argv[1], transfer="wire", timeout=600, progress=False) as c:
    info = c.describe(sys.argv[2]); nbytes = 8 * (info.shape[0] + 1) + 12 * info.nnz
    c.download(sys.argv[2])  # warm-up (and the thresholds, where they are set)
    t = []; r0 = resource.getrusage(resource.RUSAGE_SELF)
    for _ in range(7):
        t0 = time.perf_counter(); m = c.download(sys.argv[2]); t.append(time.perf_counter() - t0)
        assert m.nnz == info.nnz
    r1 = resource.getrusage(resource.RUSAGE_SELF)
    print(nbytes / statistics.median(t) / 1e9, (r1.ru_utime - r0.ru_utime) / 7e-3, (r1.ru_stime - r0.ru_stime) / 7e-3,
          (r1.ru_minflt - r0.ru_minflt) / 7)
"""


def main():
    import spgemm
    from spec_matrices import load

    address, rounds, specs = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    print("result\tnnz\tMB\ttuning\tGB/s per round\tmedian GB/s\tclient user ms\tclient sys ms\tpage faults (per download, medians)")
    for spec in specs:
        name, a = load(spec)
        with spgemm.Client(address, transfer="wire", timeout=600, progress=False) as c:
            with c.upload(a) as r:
                kept = c.multiply(r, r, keep=True)
                mb = (8 * (kept.shape[0] + 1) + 12 * kept.nnz) / 1e6
                runs = {"0": [], "1": []}
                for _ in range(rounds):
                    for arm in ("0", "1"):
                        env = dict(os.environ, SPGEMM_MALLOC_TUNING=arm)
                        out = subprocess.run([sys.executable, "-c", ARM, address, kept.handle], env=env,
                                             capture_output=True, text=True, check=True).stdout.split()
                        runs[arm].append([float(x) for x in out])
                kept.delete()
        for arm in ("0", "1"):
            col = list(zip(*runs[arm]))
            print("%s²\t%d\t%.1f\t%s\t%s\t%.2f\t%.0f\t%.0f\t%.0f" % (
                name, kept.nnz, mb, "off" if arm == "0" else "on", ", ".join("%.2f" % g for g in col[0]),
                statistics.median(col[0]), statistics.median(col[1]), statistics.median(col[2]), statistics.median(col[3])),
                flush=True)


main()
