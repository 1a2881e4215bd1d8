#!/usr/bin/env python3
"""One table of spgemmd against every peer, per matrix: spgemm-bench's TSV (our
methods and cuSPARSE) merged with peer_runs.py's (OpSparse, spECK, nsparse or
whichever drivers ran); the peers' columns stay empty where that TSV is absent.

    python3 bench/peers_summary.py bench.tsv [--peers peers.tsv] [--manifest MANIFEST.tsv ...] \\
        [--tsv h100-peers.tsv] [--markdown h100-peers.md]

Columns: matrix, class, flops, nnz(C), auto ms, each of our other methods' ms,
cuSPARSE (its fastest ALG), each peer's ms, best peer / auto (> 1: auto is
faster), the memory floor (bytes of A, B and C at 3.0 TB/s), auto / floor,
auto's workspace in bytes per nnz(C) beyond A, B and C, whether auto's result
was checked, and what did not succeed. Then geometric means: overall, per
class, per peer, and the matrices below 1.0. Prints the summary (and writes
the markdown table with it).
"""
import argparse
import csv
import math
import os
import sys

PEER_ORDER = ["OpSparse", "spECK", "nsparse"]  # the repository lorentzbf/OpSparse holds all three

# Classes for the tables: generator kinds, then the shared matrices (their
# MANIFEST has no class), then the corpus MANIFEST's classes, coarsened.
GENERATOR_CLASSES = {
    "poisson2d5": "stencil", "poisson2d9": "stencil", "poisson3d7": "stencil", "poisson3d13": "stencil",
    "poisson3d19": "stencil", "poisson3d27": "stencil", "elasticity3d": "FEM", "femblocks": "FEM",
    "rmat": "power-law graph", "kron": "power-law graph", "chunglu": "power-law graph", "er": "uniform random",
    "band": "banded", "circuit": "circuit", "tall": "rectangular",
}
SHARED_CLASSES = {
    "wiki-Vote": "graph", "p2p-Gnutella31": "graph", "ca-CondMat": "graph", "email-Enron": "graph",
    "soc-Epinions1": "graph", "web-NotreDame": "graph", "hep-th": "graph", "cage11": "other",
    "delaunay_n16": "mesh/road", "ct2010": "mesh/road", "luxembourg_osm": "mesh/road", "cs4": "mesh/road",
    "bcsstk16": "FEM", "bcsstk13": "FEM", "cryg2500": "FEM", "bayer10": "economics", "mbeacxc": "economics",
    "rajat01": "circuit",
}
CORPUS_CLASSES = {
    "FEM/structural": "FEM", "FEM/mesh": "FEM", "CFD": "FEM", "electromagnetics/MHD": "FEM",
    "optimization (KKT)": "FEM", "mesh": "mesh/road", "random-geometric": "mesh/road", "road": "mesh/road",
    "graphics/vision": "mesh/road", "social": "graph", "web": "graph", "citation": "graph", "collaboration": "graph",
    "biological": "graph", "word-association": "graph", "economics": "economics", "economics/finance": "economics",
    "LP/optimization": "rectangular",
}


def base_name(matrix):
    """The matrix without spgemm-bench's suffixes: 'fast0507/aat' -> 'fast0507'."""
    return matrix.split("/")[0]


def class_of(matrix, manifest_classes):
    base = base_name(matrix)
    kind = base.split(":")[0]
    if ":" in base and kind in GENERATOR_CLASSES:
        return GENERATOR_CLASSES[kind]
    if base in manifest_classes:
        return manifest_classes[base]
    return SHARED_CLASSES.get(base, "other")


def read_manifest_classes(paths):
    classes = {}
    for path in paths:
        with open(path) as f:
            for r in csv.DictReader(f, delimiter="\t"):
                if r.get("class"):
                    classes[r["name"]] = CORPUS_CLASSES.get(r["class"], r["class"])
    return classes


def number(text):
    try:
        x = float(text)
    except (TypeError, ValueError):
        return math.nan
    return x if math.isfinite(x) else math.nan


def geomean(values):
    values = [v for v in values if v > 0 and math.isfinite(v)]
    return (math.exp(sum(math.log(v) for v in values) / len(values)), len(values)) if values else (math.nan, 0)


def short_status(status):
    if status.startswith("mismatch") or "duplicate" in status:
        return "wrong"
    return status.split(":")[0] if status else ""


class matrix_row:
    def __init__(self, name):
        self.name = name
        self.flops = math.nan
        self.nnz_c = math.nan
        self.rows = math.nan
        self.floor = math.nan
        self.ours = {}  # method -> ms (ok rows only)
        self.cusparse = (math.nan, "")  # fastest ALG: ms, name
        self.peers = {}  # library -> ms
        self.notes = []
        self.auto_status = ""
        self.auto_peak = math.nan


def read_bench(path):
    rows, methods = {}, []
    with open(path) as f:
        for r in csv.DictReader(f, delimiter="\t"):
            m = rows.setdefault(r["matrix"], matrix_row(r["matrix"]))
            algo, ok = r["algorithm"], r["status"] == "ok"
            m.flops = number(r["flops"])
            m.rows = number(r["n"])
            if math.isnan(m.floor):
                m.floor = number(r.get("floor_ms"))
            if ok and math.isnan(m.nnz_c):
                m.nnz_c = number(r["nnz_c"])
            if algo == "auto":
                m.auto_status = r["status"]
                m.auto_peak = number(r["peak_bytes"])
            if not ok:
                m.notes.append(f"{algo}: {r['status'][:60]}")
            elif algo.startswith("cusparse-"):
                ms = number(r["ms"])
                if math.isnan(m.cusparse[0]) or ms < m.cusparse[0]:
                    m.cusparse = (ms, algo[len("cusparse-"):])
            else:
                m.ours[algo] = number(r["ms"])
            if not algo.startswith("cusparse-") and algo != "auto" and algo not in methods:
                methods.append(algo)
    return rows, methods


def read_peers(path, rows):
    libraries = []
    if not path or not os.path.exists(path):
        return libraries
    with open(path) as f:
        for r in csv.DictReader(f, delimiter="\t"):
            if r["library"] not in libraries:
                libraries.append(r["library"])
            m = rows.get(r["matrix"])
            if m is None:
                continue
            if r["status"] == "ok":
                m.peers[r["library"]] = number(r["ms"])
            else:
                m.peers[r["library"]] = short_status(r["status"])
                m.notes.append(f"{r['library']}: {r['status'][:60]}")
    known = [p for p in PEER_ORDER if p in libraries]
    return known + [p for p in libraries if p not in known]


def read_previous(path, rows, libraries):
    """Peer timings from an earlier merged table (this script's --tsv: LIBRARY_ms columns) for the matrices
    the peers TSV left without them: the peers' code does not change between our runs, so one run of
    theirs serves later runs of ours on the same GPU."""
    if not path or not os.path.exists(path):
        return libraries
    with open(path) as f:
        for r in csv.DictReader(f, delimiter="\t"):
            m = rows.get(r["matrix"])
            if m is None:
                continue
            for column, text in r.items():
                if not column.endswith("_ms") or column[:-3] not in PEER_ORDER or column[:-3] in m.peers:
                    continue
                library = column[:-3]
                if library not in libraries:
                    libraries.append(library)
                x = number(text)
                m.peers[library] = x if not math.isnan(x) else (text or math.nan)
    known = [p for p in PEER_ORDER if p in libraries]
    return known + [p for p in libraries if p not in known]


def workspace_per_entry(m, f32):
    """auto's peak beyond C, per entry of C (the peak counts workspace + C, not A and B)."""
    if not (m.nnz_c > 0) or math.isnan(m.auto_peak):
        return math.nan
    c_bytes = (m.rows + 1) * 8 + m.nnz_c * (4 + (4 if f32 else 8))
    return max(0.0, m.auto_peak - c_bytes) / m.nnz_c


def fmt_ms(x):
    if isinstance(x, str):
        return x
    if math.isnan(x):
        return ""
    return f"{x:.3f}" if x < 10 else f"{x:.2f}" if x < 1000 else f"{x:.1f}"


def fmt(x, spec):
    return "" if isinstance(x, float) and math.isnan(x) else format(x, spec)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("bench_tsv")
    p.add_argument("--peers", help="peer_runs.py's TSV (absent: no peer columns filled)")
    p.add_argument("--previous", help="an earlier table of this script (--tsv): peer timings where --peers has none")
    p.add_argument("--manifest", action="append", default=[], help="a MANIFEST.tsv with name and class columns")
    p.add_argument("--tsv")
    p.add_argument("--markdown")
    a = p.parse_args()

    rows, methods = read_bench(a.bench_tsv)
    libraries = read_previous(a.previous, rows, read_peers(a.peers, rows))
    classes = read_manifest_classes(a.manifest)

    header = (["matrix", "class", "flops", "nnz_c", "auto_ms"] + [f"{x}_ms" for x in methods] +
              ["cusparse_ms", "cusparse_alg"] + [f"{x}_ms" for x in libraries] +
              ["best_peer", "best_peer_over_auto", "floor_ms", "auto_over_floor", "workspace_bytes_per_nnz_c",
               "checked", "not_ok"])
    table, brief = [], []
    ratios, per_class, per_peer, workspace = {}, {}, {}, {}
    for m in rows.values():
        cls = class_of(m.name, classes)
        auto = m.ours.get("auto", math.nan)
        timed = {"cuSPARSE": m.cusparse[0], **{k: v for k, v in m.peers.items() if not isinstance(v, str)}}
        timed = {k: v for k, v in timed.items() if not math.isnan(v)}
        best_name, best = min(timed.items(), key=lambda kv: kv[1]) if timed else ("", math.nan)
        ratio = best / auto if auto > 0 else math.nan
        if not math.isnan(ratio):
            ratios[m.name] = ratio
            per_class.setdefault(cls, []).append(ratio)
        for k, v in timed.items():
            if auto > 0:
                per_peer.setdefault(k, []).append(v / auto)
        ws = workspace_per_entry(m, m.name.endswith("/f32") or "/f32/" in m.name)
        if not math.isnan(ws):
            workspace[m.name] = ws
        over_floor = auto / m.floor if m.floor > 0 else math.nan
        table.append([m.name, cls, fmt(m.flops, ".3g"), fmt(m.nnz_c, ".0f"), fmt_ms(auto)] +
                     [fmt_ms(m.ours.get(x, math.nan)) for x in methods] + [fmt_ms(m.cusparse[0]), m.cusparse[1]] +
                     [fmt_ms(m.peers.get(x, math.nan)) for x in libraries] +
                     [best_name, fmt(ratio, ".2f"), fmt(m.floor, ".3g"), fmt(over_floor, ".1f"), fmt(ws, ".1f"),
                      "yes" if m.auto_status == "ok" else "no", "; ".join(m.notes)])
        brief.append(f"{m.name[:24]:<24} {cls[:11]:<11} {fmt(m.flops, '.2e'):>8} {fmt_ms(auto):>8} "
                     f"{fmt_ms(m.cusparse[0]):>8} " + " ".join(f"{fmt_ms(m.peers.get(x, math.nan))[:8]:>8}"
                                                            for x in libraries) +
                     f" {best_name[:8]:>8} {fmt(ratio, '.2f'):>6} {fmt(m.floor, '.3g'):>7} {fmt(over_floor, '.1f'):>6}")

    g, n = geomean(ratios.values())
    below = sorted((r, name) for name, r in ratios.items() if r < 1.0)
    summary = [f"best peer / auto, geometric mean over {n} matrices: {fmt(g, '.2f')}; below 1.0 on {len(below)}" +
               (": " + ", ".join(f"{name} {r:.2f}" for r, name in below) if below else ""),
               "per class: " + ", ".join(f"{c} {fmt(geomean(v)[0], '.2f')} ({len(v)})"
                                         for c, v in sorted(per_class.items())),
               "per peer (peer ms / auto ms): " + ", ".join(f"{k} {fmt(geomean(per_peer[k])[0], '.2f')} "
                                                            f"({len(per_peer[k])})"
                                                            for k in ["cuSPARSE"] + libraries if k in per_peer)]
    if not libraries:
        summary.append("no peer results (no peers TSV, or no drivers ran): the best peer is cuSPARSE")
    per_method = {x: geomean([m.ours[x] / m.ours["auto"] for m in rows.values()
                              if x in m.ours and m.ours.get("auto", math.nan) > 0])
                  for x in methods}
    if per_method:
        summary.append("per method (method ms / auto ms, < 1: faster than auto): " +
                       ", ".join(f"{x} {fmt(g, '.2f')} ({k})" for x, (g, k) in per_method.items()))
    # The planner's misses: a method of ours more than 10% faster than auto on a matrix.
    misses = []
    for m in rows.values():
        auto = m.ours.get("auto", math.nan)
        faster = [(v, x) for x, v in m.ours.items() if x != "auto" and v > 0 and auto > 1.1 * v]
        if faster:
            v, x = min(faster)
            misses.append(f"{m.name} {x} {fmt_ms(v)} vs {fmt_ms(auto)}")
    summary.append(f"auto more than 10% slower than a method of ours on {len(misses)}" +
                   (": " + ", ".join(misses) if misses else ""))
    if workspace:
        over = [f"{name} {w:.1f}" for name, w in sorted(workspace.items(), key=lambda kv: -kv[1]) if w > 12]
        worst = max(workspace, key=workspace.get)
        summary.append(f"auto's workspace beyond A, B and C: at most {workspace[worst]:.1f} bytes per nnz(C) ({worst}); "
                       f"above 12 on {len(over)}" + (": " + ", ".join(over) if over else ""))

    if a.tsv:
        with open(a.tsv, "w", newline="") as f:
            w = csv.writer(f, delimiter="\t", lineterminator="\n")
            w.writerow(header)
            w.writerows(table)
    if a.markdown:
        with open(a.markdown, "w") as f:
            f.write("| " + " | ".join(header) + " |\n| " + " | ".join("---" for _ in header) + " |\n")
            for t in table:
                f.write("| " + " | ".join(c.replace("|", "\\|") for c in t) + " |\n")
            f.write("\n" + "\n".join(f"- {s}" for s in summary) + "\n")
    print(f"{'matrix':<24} {'class':<11} {'flops':>8} {'auto':>8} {'cuSPARSE':>8} " +
          " ".join(f"{x[:8]:>8}" for x in libraries) + f" {'best':>8} {'ratio':>6} {'floor':>7} {'xfloor':>6}")
    print("\n".join(brief))
    print("\n".join(summary))


if __name__ == "__main__":
    sys.exit(main())
