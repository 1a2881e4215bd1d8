"""Batch jobs: products, graph steps, graph algorithms and AMG solves, chained by names, over one or several servers.

A job file (YAML; ``spgemm batch JOBS.yaml`` or ``python -m spgemm.batch JOBS.yaml``)::

    servers: [gpu1:50051, gpu2:50051]   # default: SPGEMM_SERVER, else localhost:50051
    concurrency: 4                      # chains running at once
    retries: 3                          # more attempts of a chain after UNAVAILABLE
    summary: summary.tsv                # one row per job: status, times, GFLOPS, nnz
    inputs:                             # .mtx / .mtx.gz / .npz matrices, .npy / text arrays,
                                        # relative to the job file
      A: graphs/ca-CondMat.mtx.gz
    jobs:
      - {name: L, op: select, a: A, selector: tril, thunk: -1}
      - {name: T, op: mxm, a: L, b: L, semiring: plus_pair, mask: L, output: out/T.mtx.gz}
      - {name: triangles, op: reduce_scalar, a: T}

``op`` is a call of :class:`spgemm.Client` (``multiply``, ``transpose``, ``galerkin``,
``mxm``, ``ewise_add``, ``ewise_mult``, ``apply``, ``select``, ``top_k``,
``reduce_rowwise``, ``reduce_columnwise``, ``reduce_scalar``, ``scale_rows``,
``scale_columns``, ``extract_rows``) or a whole graph algorithm of :mod:`spgemm.algorithms`
(``triangle_count``, ``bfs`` with its ``sources`` and ``hops``, ``markov_clustering``,
``shortest_paths``; a number or an array, written to .npy or text, e.g.
``{name: levels, op: bfs, a: A, sources: [0, 42], output: out/levels.npy}``), or AMG:
``amg`` sets a hierarchy up on ``a`` (keyword arguments of :meth:`Client.amg`; its output
the levels' table), ``amg_solve`` solves with it (``h``) for ``b``, an input array (.npy or
text), to an array ``x``. Operands (``a``, ``b``, ``p``, ``v``, ``mask``, ``h``,
``near_nullspace``, ``x0``) name inputs or other jobs, ``X.T`` for the transpose of a
matrix X; every other key is the call's keyword argument. Jobs chained by names form a chain, which runs on one server
with its intermediates kept there; chains run side by side, at most ``concurrency`` at
once. A job with an ``output`` writes it (.mtx, .mtx.gz or .npz); a job whose output
exists is skipped (a run resumes where the last one stopped) and read from the file
where a later job needs it. A chain failing with UNAVAILABLE (a server shutting down or
gone) is run again from its start on the next server, up to ``retries`` times.

With a ``dask.distributed.Client`` (``run(plan, dask=client)``), each chain is a task
on the Dask workers: reading the inputs, writing the outputs and any ``post`` function
run there, each worker talking to the spgemmd servers.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import dataclasses
import gzip
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence

import numpy as np
import scipy.io
import scipy.sparse as sp

from . import _address, algorithms
from .errors import SpgemmError, Unavailable

__all__ = ["Plan", "Job", "JobResult", "load", "run", "main"]

# What a name stands for: a matrix (kept on the server), an array (numpy, in this
# process: .npy or text files), an AMG hierarchy (kept on the server), a number.
MATRIX, ARRAY, HIERARCHY, NUMBER = "matrix", "array", "hierarchy", "number"

#: Calls a job may name: which of its keys are operands, and of what kind (every other
#: key is the call's keyword argument).
OPERANDS: Dict[str, Dict[str, str]] = {
    "multiply": {"a": MATRIX, "b": MATRIX},
    "transpose": {"a": MATRIX},
    "galerkin": {"p": MATRIX, "a": MATRIX},
    "mxm": {"a": MATRIX, "b": MATRIX, "mask": MATRIX},
    "ewise_add": {"a": MATRIX, "b": MATRIX},
    "ewise_mult": {"a": MATRIX, "b": MATRIX},
    "apply": {"a": MATRIX},
    "select": {"a": MATRIX},
    "top_k": {"a": MATRIX},
    "reduce_rowwise": {"a": MATRIX},
    "reduce_columnwise": {"a": MATRIX},
    "reduce_scalar": {"a": MATRIX},
    "scale_rows": {"a": MATRIX, "v": MATRIX},
    "scale_columns": {"a": MATRIX, "v": MATRIX},
    "extract_rows": {"a": MATRIX},
    "triangle_count": {"a": MATRIX},
    "bfs": {"a": MATRIX},
    "markov_clustering": {"a": MATRIX},
    "shortest_paths": {"a": MATRIX},
    "amg": {"a": MATRIX, "near_nullspace": ARRAY},
    "amg_solve": {"h": HIERARCHY, "b": ARRAY, "x0": ARRAY},
}

#: What a job gives where it is not a matrix.
RESULTS = {
    "reduce_scalar": NUMBER,
    "triangle_count": ARRAY,
    "bfs": ARRAY,
    "markov_clustering": ARRAY,
    "shortest_paths": ARRAY,
    "amg": HIERARCHY,
    "amg_solve": ARRAY,
}

#: Jobs that run a whole graph algorithm of spgemm.algorithms.
ALGORITHMS: Dict[str, Callable[..., Any]] = {
    "triangle_count": algorithms.triangle_count,
    "bfs": algorithms.bfs_levels,
    "markov_clustering": algorithms.markov_clustering,
    "shortest_paths": algorithms.shortest_paths,
}
#: Files of arrays (and of a hierarchy's levels: text).
TEXT_SUFFIXES = (".txt", ".tsv", ".csv")
ARRAY_SUFFIXES = (".npy",) + TEXT_SUFFIXES

SUMMARY_COLUMNS = ["job", "op", "status", "server", "attempts", "time_ms", "compute_ms", "gflops", "nnz", "value",
                   "output", "error"]


@dataclasses.dataclass
class Job:
    name: str
    op: str
    operands: Dict[str, str]  # key -> name (an input or a job), "X.T" for X transposed
    args: Dict[str, Any]
    output: Optional[str] = None

    def sources(self) -> List[str]:
        return [_base(n) for n in self.operands.values()]


@dataclasses.dataclass
class Plan:
    inputs: Dict[str, str]
    jobs: List[Job]
    servers: List[str]
    concurrency: int = 4
    retries: int = 3
    summary: Optional[str] = None


@dataclasses.dataclass
class JobResult:
    job: str
    op: str
    status: str  # "done", "skipped" (its output existed), "failed"
    server: str = ""
    attempts: int = 0
    time_ms: float = 0.0
    compute_ms: float = 0.0
    gflops: float = 0.0
    nnz: int = 0
    value: Optional[float] = None  # reduce_scalar's, or what `post` returned
    output: str = ""
    error: str = ""


def _base(name: str) -> str:
    return name[:-2] if name.endswith(".T") else name


def _resolve(path: str, base: str) -> str:
    return path if os.path.isabs(path) else os.path.normpath(os.path.join(base, path))


def load(path: str, servers: Optional[Sequence[str]] = None) -> Plan:
    """Reads and checks a job file (paths relative to it); `servers` overrides the file's."""
    import yaml

    with open(path) as f:
        doc = yaml.safe_load(f) or {}
    base = os.path.dirname(os.path.abspath(path))
    return plan_of(doc, base, servers)


def plan_of(doc: Dict[str, Any], base: str = ".", servers: Optional[Sequence[str]] = None) -> Plan:
    """A Plan from a job file's content (relative paths from `base`); checks names and chains."""
    inputs = {str(k): _resolve(str(v), base) for k, v in (doc.get("inputs") or {}).items()}
    jobs: List[Job] = []
    kinds = {k: ARRAY if v.endswith(ARRAY_SUFFIXES) else MATRIX for k, v in inputs.items()}
    for raw in doc.get("jobs") or []:
        spec = dict(raw)
        name, op = str(spec.pop("name", "")), str(spec.pop("op", ""))
        if not name or name in kinds:
            raise ValueError("spgemm batch: every job needs a name of its own (got %r)" % name)
        if op not in OPERANDS:
            raise ValueError("spgemm batch: job %s: unknown op %r (known: %s)" % (name, op, ", ".join(OPERANDS)))
        operands = {k: str(spec.pop(k)) for k in OPERANDS[op] if k in spec}
        if not operands.keys() & {"a", "p", "h"}:
            raise ValueError("spgemm batch: job %s: %s needs its operand %s" % (name, op, next(iter(OPERANDS[op]))))
        for key, ref in operands.items():
            if _base(ref) not in kinds:
                raise ValueError("spgemm batch: job %s: %r is no input nor an earlier job" % (name, ref))
            want, got = OPERANDS[op][key], kinds[_base(ref)]
            if got != want or (ref.endswith(".T") and want != MATRIX):
                raise ValueError("spgemm batch: job %s: its %s must be a %s; %s is a%s %s"
                                 % (name, key, want, ref, "n" if got[0] in "aeiou" else "", got))
        output = spec.pop("output", None)
        kinds[name] = RESULTS.get(op, MATRIX)
        suffixes = {ARRAY: ARRAY_SUFFIXES, HIERARCHY: TEXT_SUFFIXES}.get(kinds[name])
        if output and suffixes and not str(output).endswith(suffixes):
            raise ValueError("spgemm batch: job %s: a %s writes %s files, not %r" % (name, op, ", ".join(suffixes), output))
        jobs.append(Job(name, op, operands, spec, _resolve(str(output), base) if output else None))
    listed = list(servers or doc.get("servers") or [_address.default_address()])
    summary = doc.get("summary")
    return Plan(inputs, jobs, [_address.with_default_port(s) for s in listed], int(doc.get("concurrency", 4)),
                int(doc.get("retries", 3)), _resolve(str(summary), base) if summary else None)


# -- files -------------------------------------------------------------------


def read_matrix(path: str) -> sp.csr_array:
    if path.endswith(".npz"):
        return sp.csr_array(sp.load_npz(path))
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        m = scipy.io.mmread(f)
    return sp.csr_array(m, dtype=np.float64 if m.dtype != np.float32 else np.float32)


def read_array(path: str) -> np.ndarray:
    if path.endswith(".npy"):
        return np.load(path)
    return np.loadtxt(path, delimiter="," if path.endswith(".csv") else None)


@contextlib.contextmanager
def _replacing(path: str) -> Iterator[Any]:
    """A binary file to write `path`'s content into: a hidden file beside it, renamed to
    it once complete (no partial outputs)."""
    os.makedirs(os.path.dirname(os.path.abspath(path)) or ".", exist_ok=True)
    folder, name = os.path.split(os.path.abspath(path))
    tmp = os.path.join(folder, "." + name + ".partial")
    with open(tmp, "wb") as f:
        yield f
    os.replace(tmp, path)


def write_matrix(path: str, m: sp.sparray) -> None:
    with _replacing(path) as f:
        if path.endswith(".npz"):
            sp.save_npz(f, sp.csr_matrix(m))
        elif path.endswith(".gz"):
            with gzip.open(f, "wb") as g:
                scipy.io.mmwrite(g, sp.coo_matrix(m))
        else:
            scipy.io.mmwrite(f, sp.coo_matrix(m))


def write_array(path: str, value: Any, header: str = "") -> None:
    """A number or an array as .npy, else as text (tab-separated: .tsv, .txt; commas: .csv;
    `header` as its first line, after "# ")."""
    array = np.atleast_1d(np.asarray(value))
    with _replacing(path) as f:
        if path.endswith(".npy"):
            np.save(f, array)
        else:
            integral = np.issubdtype(array.dtype, np.integer)
            np.savetxt(f, array, fmt="%d" if integral else "%.17g", delimiter="," if path.endswith(".csv") else "\t",
                       header=header)


# -- chains ------------------------------------------------------------------


def chains(plan: Plan) -> List[List[Job]]:
    """The jobs that must run, grouped into chains (jobs tied by names), each in file order.

    A job runs where its output is missing, or where it has none and is the end of a
    chain (its result is only reported) or a job that runs needs it; an AMG setup also
    where a job that runs needs it (its output, the levels' table, is no hierarchy).
    """
    by_name = {j.name: j for j in plan.jobs}
    needed: Dict[str, bool] = {}
    users: Dict[str, List[str]] = {j.name: [] for j in plan.jobs}
    for j in plan.jobs:
        for s in j.sources():
            if s in users:
                users[s].append(j.name)
    for j in reversed(plan.jobs):
        used = any(needed[u] for u in users[j.name])
        if j.output:
            needed[j.name] = not os.path.exists(j.output) or (used and RESULTS.get(j.op) == HIERARCHY)
        else:
            needed[j.name] = not users[j.name] or used
    parent = {j.name: j.name for j in plan.jobs}

    def root(n: str) -> str:
        while parent[n] != n:
            parent[n] = parent[parent[n]]
            n = parent[n]
        return n

    for j in plan.jobs:
        if not needed[j.name]:
            continue
        for s in j.sources():
            if s in by_name and needed[s]:
                parent[root(s)] = root(j.name)
    groups: Dict[str, List[Job]] = {}
    for j in plan.jobs:
        if needed[j.name]:
            groups.setdefault(root(j.name), []).append(j)
    return list(groups.values())


def _call(client: Any, job: Job, operand: Callable[[str], Any]) -> Any:
    """Runs `job` on `client`; its result kept on the server (a float for reduce_scalar, the
    algorithm's number or array for the algorithms)."""
    ops = {k: operand(v) for k, v in job.operands.items()}
    args = dict(job.args)
    if job.op in ALGORITHMS:
        return ALGORITHMS[job.op](client, ops["a"], **args)
    if job.op == "amg":
        return client.amg(ops["a"], ops.get("near_nullspace"), **args)
    if job.op == "amg_solve":
        x, info = ops["h"].solve(ops["b"], ops.get("x0"), **args)
        if not info.converged:
            raise ValueError("spgemm batch: job %s: CG did not converge in %d iterations (relative residual %.3g)"
                             % (job.name, info.iterations, info.residuals[-1] if info.residuals else float("nan")))
        return x, info
    if job.op == "reduce_scalar":
        return client.reduce_scalar(ops["a"], **args)
    if job.op in ("multiply", "mxm"):  # a product is mxm over plus_times: it takes transposed operands
        a = ops.pop("a")
        return client.mxm(a, ops.pop("b", a), keep=True, **ops, **args)
    if job.op in ("galerkin", "transpose"):
        positional = [ops.pop(k) for k in OPERANDS[job.op] if k in ops]
        return getattr(client, job.op)(*positional, keep=True, **args)
    positional = [ops.pop(k) for k in OPERANDS[job.op] if k in ops]
    return getattr(client, job.op)(*positional, keep=True, **args)


def run_chain(chain: List[Job], inputs: Dict[str, str], outputs: Dict[str, str], servers: List[str], first: int,
              retries: int, post: Optional[Callable[[str, Any], Any]] = None,
              semaphore: Any = None) -> List[JobResult]:
    """Runs one chain on servers[first], the next servers after an UNAVAILABLE (up to `retries` more
    times); what each job gave. `outputs`: every job's output file (results of jobs outside the chain
    come from there). Picklable: the task Dask runs on a worker."""
    from .client import Client
    from .graph import transposed

    held = semaphore if semaphore is not None else contextlib.nullcontext()
    attempt = 0
    with held:
        while True:
            server = servers[(first + attempt) % len(servers)]
            results: List[JobResult] = []  # of the jobs done on this attempt
            try:
                with Client(server, progress=False) as client:
                    _run_on(client, server, chain, inputs, outputs, post, transposed, results)
                for r in results:
                    r.attempts = attempt + 1
                return results
            except Unavailable as e:
                if attempt >= retries:
                    return _failed(chain, server, attempt + 1, e)
                attempt += 1
                time.sleep(min(0.25 * 2 ** attempt, 5.0))
            except (SpgemmError, OSError, ValueError) as e:
                done = {r.job for r in results}
                for r in results:
                    r.attempts = attempt + 1
                return results + _failed([j for j in chain if j.name not in done], server, attempt + 1, e)


def _failed(jobs: List[Job], server: str, attempts: int, e: Exception) -> List[JobResult]:
    return [JobResult(j.name, j.op, "failed", server, attempts, error=str(e).splitlines()[0] if str(e) else type(e).__name__)
            for j in jobs]


def _run_on(client: Any, server: str, chain: List[Job], inputs: Dict[str, str], outputs: Dict[str, str],
            post: Optional[Callable[[str, Any], Any]], transposed: Callable[[Any], Any],
            results: List[JobResult]) -> None:
    """Runs the chain's jobs in order, appending what each gave to `results`."""
    held: Dict[str, Any] = {}  # name -> RemoteMatrix or Hierarchy on this server
    arrays: Dict[str, Any] = {}  # name -> an array or number here
    try:
        def operand(ref: str) -> Any:
            name = _base(ref)
            if name in arrays:
                return arrays[name]
            if name not in held:
                path = inputs.get(name) or outputs.get(name)
                if path is None:
                    raise ValueError("spgemm batch: %s has neither a file nor a result" % name)
                if path.endswith(ARRAY_SUFFIXES):
                    arrays[name] = read_array(path)
                    return arrays[name]
                held[name] = client.upload(read_matrix(path), name=name)
            return transposed(held[name]) if ref.endswith(".T") else held[name]

        for job in chain:
            started = time.perf_counter()
            result = _call(client, job, operand)
            r = JobResult(job.name, job.op, "done", server)
            r.time_ms = (time.perf_counter() - started) * 1e3
            kind = RESULTS.get(job.op, MATRIX)
            if job.op == "amg":
                r.value, r.compute_ms = result.operator_complexity, result.setup_ms["total"]
            elif job.op == "amg_solve":
                result, info = result
                r.value, r.compute_ms = info.iterations, info.solve_ms
            elif job.op in ("reduce_scalar", "triangle_count"):
                r.value = result
            if kind in (MATRIX, HIERARCHY):
                held[job.name] = result
            else:
                arrays[job.name] = result
            if kind == MATRIX:
                r.nnz = result.nnz
            stats = client.last_stats
            if stats is not None and (kind == MATRIX or job.op == "reduce_scalar"):  # the call's own
                r.compute_ms, r.gflops = stats.compute_ms, stats.gflops
            if job.output or post is not None:
                local = result.fetch() if kind == MATRIX else result
                if job.output:
                    _write_output(job, local)
                    r.output = job.output
                if post is not None:
                    r.value = post(job.name, local)
            results.append(r)
    finally:
        for m in reversed(list(held.values())):  # a hierarchy before the matrix it was set up from
            with contextlib.suppress(SpgemmError):
                m.delete()


def _write_output(job: Job, local: Any) -> None:
    kind = RESULTS.get(job.op, MATRIX)
    if kind == HIERARCHY:
        table = [[i, level.rows, level.nnz, level.block_size] for i, level in enumerate(local.levels)]
        write_array(job.output, np.array(table, dtype=np.int64), header="level rows nnz block_size")
    elif kind == ARRAY:
        write_array(job.output, local)
    elif kind == NUMBER:
        write_matrix(job.output, sp.csr_array((1, 1)) if local is None else sp.csr_array([[local]]))
    else:
        write_matrix(job.output, local)


# -- the run -----------------------------------------------------------------


def run(plan: Plan, *, dask: Any = None, progress: Optional[bool] = None,
        post: Optional[Callable[[str, Any], Any]] = None) -> List[JobResult]:
    """Runs the plan's chains, at most plan.concurrency at once (threads, or tasks of the
    `dask` client's workers); writes the summary where the plan names one. Returns a
    JobResult per job, in the file's order (skipped: its output existed)."""
    todo = chains(plan)
    outputs = {j.name: j.output for j in plan.jobs if j.output}
    total = sum(len(c) for c in todo)
    bar = _bar(progress, total)
    got: Dict[str, JobResult] = {}

    def note(results: List[JobResult]) -> None:
        for r in results:
            got[r.job] = r
        if bar is not None:
            bar.update(len(results))

    try:
        if dask is not None:
            from distributed import Semaphore, as_completed as dask_completed

            semaphore = Semaphore(max_leases=max(plan.concurrency, 1), name="spgemm-batch-%d" % os.getpid())
            futures = [dask.submit(run_chain, c, plan.inputs, outputs, plan.servers, i % len(plan.servers),
                                   plan.retries, post, semaphore, pure=False) for i, c in enumerate(todo)]
            for f in dask_completed(futures):
                note(f.result())
        else:
            with ThreadPoolExecutor(max_workers=max(plan.concurrency, 1)) as pool:
                futures = [pool.submit(run_chain, c, plan.inputs, outputs, plan.servers, i % len(plan.servers),
                                       plan.retries, post) for i, c in enumerate(todo)]
                for f in as_completed(futures):
                    note(f.result())
    finally:
        if bar is not None:
            bar.close()
    results = [got.get(j.name) or JobResult(j.name, j.op, "skipped", output=j.output or "") for j in plan.jobs]
    if plan.summary:
        write_summary(plan.summary, results)
    return results


def _bar(progress: Optional[bool], total: int) -> Any:
    show = sys.stderr.isatty() if progress is None else progress
    if not show or total == 0:
        return None
    from tqdm import tqdm

    return tqdm(total=total, unit="job", desc="batch", file=sys.stderr)


def write_summary(path: str, results: List[JobResult]) -> None:
    os.makedirs(os.path.dirname(os.path.abspath(path)) or ".", exist_ok=True)
    with open(path, "w", newline="") as f:
        w = csv.writer(f, delimiter="\t", lineterminator="\n")
        w.writerow(SUMMARY_COLUMNS)
        for r in results:
            row = dataclasses.asdict(r)
            w.writerow(["" if row[c] is None else ("%.3f" % row[c] if isinstance(row[c], float) else row[c])
                        for c in SUMMARY_COLUMNS])


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="spgemm batch", description=__doc__.split("\n\n")[0])
    parser.add_argument("jobs", help="the job file (YAML)")
    parser.add_argument("--server", action="append", help="a server HOST[:PORT] (repeat, or comma-separated); "
                        "overrides the file's servers")
    parser.add_argument("--concurrency", type=int, help="chains running at once (default: the file's, else 4)")
    parser.add_argument("--retries", type=int, help="more attempts of a chain after UNAVAILABLE")
    parser.add_argument("--summary", help="the summary TSV (default: the file's)")
    parser.add_argument("--scheduler", help="a Dask scheduler address: chains run as tasks on its workers")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    servers = [s for group in (args.server or []) for s in group.split(",") if s] or None
    plan = load(args.jobs, servers)
    if args.concurrency is not None:
        plan.concurrency = args.concurrency
    if args.retries is not None:
        plan.retries = args.retries
    if args.summary:
        plan.summary = os.path.abspath(args.summary)
    dask = None
    if args.scheduler:
        from distributed import Client as DaskClient

        dask = DaskClient(args.scheduler)
    try:
        results = run(plan, dask=dask, progress=False if args.no_progress else None)
    finally:
        if dask is not None:
            dask.close()
    failed = [r for r in results if r.status == "failed"]
    counts = {s: sum(r.status == s for r in results) for s in ("done", "skipped", "failed")}
    print("spgemm batch: %(done)d done, %(skipped)d skipped, %(failed)d failed" % counts, file=sys.stderr)
    for r in failed:
        print("  %s (%s): %s" % (r.job, r.op, r.error), file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
