#!/usr/bin/env python3
"""The tables of bench/run_scale_device.sh from its rows (scale.tsv: run,
matrix, mode, measure, value, unit): OUT/h100-outofcore.tsv (products in row
panels against the in-core product) and OUT/multigpu.tsv (one GPU against
two), each where its stage ran; a short table of each on stdout.

    scale_summary.py SCALE_TSV OUT GPU_NAME
"""
import collections
import os
import sys


def load(path):
    rows = collections.OrderedDict()
    with open(path) as f:
        for line in f:
            run, matrix, mode, measure, value, unit = line.rstrip("\n").split("\t")
            rows.setdefault((run, matrix, mode), {})[measure] = value if unit == "text" else float(value)
    return rows


def fmt(v, digits=3):
    return "-" if v is None else ("%.*g" % (digits, v) if isinstance(v, float) else str(v))


def peak(m):
    return max((v for k, v in m.items() if k.startswith("peak_over_budget:")), default=None)


def write(path, header, lines):
    with open(path, "w") as f:
        f.write("\t".join(header) + "\n")
        for line in lines:
            f.write("\t".join(fmt(v, 6) for v in line) + "\n")
    print("  ".join(header))
    for line in lines:
        print("  ".join(fmt(v) for v in line))
    print("(%s)\n" % path)


def outofcore(rows, out, gpu):
    in_core = {m: v.get("gflops_compute") for (run, m, mode), v in rows.items() if run == "in core"}
    lines = []
    for (run, matrix, mode), m in rows.items():
        if run != "panels":
            continue
        base = in_core.get(matrix) or next(iter(in_core.values()), None)  # else the in-core product beside
        ratio = m["gflops"] / base if base and "gflops" in m else None
        lines.append([gpu, matrix, mode, m.get("wall"), m.get("gflops"), base, ratio, m.get("result_gbps"),
                      m.get("nnz"), peak(m), m.get("where", ""), m.get("method", m.get("failed", ""))])
    for (run, matrix, mode), m in rows.items():
        if run == "in core":
            lines.insert(0, [gpu, matrix, "in core, kept", m.get("wall"), m.get("gflops"), m.get("gflops_compute"), 1.0,
                             m.get("result_gbps"), m.get("nnz"), peak(m), m.get("where", ""), m.get("method", "")])
    if lines:
        write(os.path.join(out, "h100-outofcore.tsv"),
              ["gpu", "matrix", "mode", "wall_s", "gflops", "in_core_gflops", "of_in_core", "result_gbps", "nnz",
               "peak_over_budget", "kept_where", "method"], lines)


def multigpu(rows, out, gpu):
    one = {(m, mode): v for (run, m, mode), v in rows.items() if run == "1 GPU"}
    two = {(m, mode): v for (run, m, mode), v in rows.items() if run == "2 GPUs"}
    lines = []
    for key, a in one.items():
        b = two.get(key)
        if b is None:
            continue
        matrix, mode = key
        if mode == "jobs":
            lines.append([gpu, matrix, mode, a.get("jobs_per_s"), b.get("jobs_per_s"),
                          b["jobs_per_s"] / a["jobs_per_s"] if a.get("jobs_per_s") else None, "jobs/s", ""])
            continue
        same = ""
        if mode == "streamed":
            if a.get("hash") == b.get("hash") and a.get("nnz") == b.get("nnz"):
                same = "identical"
            elif a.get("structure_hash") is not None and a.get("structure_hash") == b.get("structure_hash"):
                # rmerge plans each panel by its longest row: sums may round apart
                same = "same structure, values differ"
            else:
                same = "DIFFERENT"
        elif mode == "kept":
            same = "same nnz" if a.get("nnz") == b.get("nnz") else "DIFFERENT nnz"
        lines.append([gpu, matrix, mode, a.get("wall"), b.get("wall"),
                      a["wall"] / b["wall"] if a.get("wall") and b.get("wall") else None, "s", same])
    if lines:
        write(os.path.join(out, "multigpu.tsv"),
              ["gpu", "what", "mode", "one_gpu", "two_gpus", "speedup", "unit", "results"], lines)


def main():
    path, out, gpu = sys.argv[1], sys.argv[2], sys.argv[3].split(",")[0].strip()
    if not os.path.exists(path):
        print("no rows in %s" % path)
        return 1
    rows = load(path)
    outofcore(rows, out, gpu)
    multigpu(rows, out, gpu)
    failed = [(r, m, mode, v["failed"]) for (r, m, mode), v in rows.items() if "failed" in v]
    for f in failed:
        print("FAILED %s %s %s: %s" % f)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
