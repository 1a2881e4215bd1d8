#!/usr/bin/env python3
"""Runs the peer drivers (other SpGEMM libraries, built by the developer and
kept out of the project) on the matrices spgemm-export-mtx wrote, and collects
their results in one TSV for peers_summary.py. See bench/README.md.

    python3 bench/peer_runs.py --drivers DIR --manifest manifest.tsv --tsv peers.tsv

Every executable in DIR is a driver: `DRIVER --name` prints its library's
name; `DRIVER [--repeats N] [--warmups N] A.mtx[,B.mtx] ...` prints, per input,

    spgemm-peer <TAB> LIBRARY <TAB> INPUT <TAB> STATUS <TAB> MS <TAB> NNZ_C

(STATUS ok, mismatch: ..., failed: ... or skipped: ...; MS the median of the
whole multiply, allocation of C included; NA where unknown). A driver that
dies, or prints nothing for --timeout seconds, is started again on the inputs
after the one it was on, which is recorded as failed. Inputs in f32 are left
out: the peers multiply in f64.

Output columns: library matrix status ms nnz_c.
"""
import argparse
import csv
import os
import queue
import signal
import subprocess
import sys
import threading
import time

PREFIX = "spgemm-peer\t"


def read_manifest(path):
    """(name, driver argument) per f64 input of spgemm-export-mtx's manifest."""
    inputs = []
    with open(path) as f:
        for line in f:
            fields = line.rstrip("\n").split("\t")
            if len(fields) != 4 or fields[1] != "f64":
                continue
            name, _, a, b = fields
            inputs.append((name, a if a == b else f"{a},{b}"))
    return inputs


def library_name(driver):
    try:
        out = subprocess.run([driver, "--name"], capture_output=True, text=True, timeout=120).stdout.strip()
        return out.splitlines()[-1] if out else os.path.basename(driver)
    except (OSError, subprocess.SubprocessError):
        return os.path.basename(driver)


class driver_process:
    """One run of a driver on a list of inputs; its output lines come through a queue."""

    def __init__(self, driver, args, log):
        self.proc = subprocess.Popen([driver] + args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                     start_new_session=True)
        self.lines = queue.Queue()
        self.last_other = ""  # the last line that is not a result: the reason a library gave for failing
        threading.Thread(target=self._read, args=(log,), daemon=True).start()

    def _read(self, log):
        for line in self.proc.stdout:
            log.write(line)
            log.flush()
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)

    def kill(self):
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait()

    def exit_text(self):
        code = self.proc.wait()
        return f"signal {-code}" if code < 0 else f"exit {code}"


def run_driver(driver, inputs, options, log):
    """{name: (status, ms, nnz_c)} for every input."""
    results = {}
    pending = list(inputs)
    deadline = time.monotonic() + options.budget

    def skip_pending():
        for name, _ in pending:
            results[name] = (f"skipped: the driver's budget of {options.budget:.0f} s was spent", "NA", "NA")
        pending.clear()

    while pending:
        args = ["--repeats", str(options.repeats), "--warmups", str(options.warmups)] + [arg for _, arg in pending]
        run = driver_process(driver, args, log)
        while pending:
            wait = min(options.timeout, deadline - time.monotonic())
            try:
                line = run.lines.get(timeout=max(wait, 0))
            except queue.Empty:
                run.kill()
                if time.monotonic() >= deadline:
                    skip_pending()
                else:
                    results[pending.pop(0)[0]] = (f"failed: no result within {options.timeout:.0f} s", "NA", "NA")
                break
            if line is None:  # the driver ended before its last input
                why = run.exit_text()
                detail = f" after: {run.last_other[:120]}" if run.last_other else ""
                results[pending.pop(0)[0]] = (f"failed: driver ended ({why}){detail}", "NA", "NA")
                break
            if not line.startswith(PREFIX):
                if line.strip():
                    run.last_other = line.strip()
                continue
            fields = line.split("\t")
            if len(fields) != 6 or fields[2] != pending[0][1]:
                continue
            status = fields[3]
            if status == "failed: std::exception" and run.last_other:
                status = f"failed: {run.last_other[:160]}"  # OpSparse prints its CUDA error, then throws
            results[pending.pop(0)[0]] = (status, fields[4], fields[5])
            run.last_other = ""
            if status.startswith("failed"):
                break  # the driver exits after a failure; it starts again on the rest
        run.kill()
        if pending and time.monotonic() >= deadline:
            skip_pending()
    return results


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--drivers", required=True, help="folder of driver executables (absent or empty: no peers)")
    p.add_argument("--manifest", required=True, help="spgemm-export-mtx's manifest")
    p.add_argument("--tsv", required=True, help="output: library matrix status ms nnz_c")
    p.add_argument("--logs", help="folder for each driver's output (LIBRARY.log)")
    p.add_argument("--repeats", type=int, default=9)
    p.add_argument("--warmups", type=int, default=2)
    p.add_argument("--timeout", type=float, default=180, help="seconds a driver may spend on one input")
    p.add_argument("--budget", type=float, default=3600, help="seconds per driver; inputs left then are skipped")
    options = p.parse_args()

    inputs = read_manifest(options.manifest)
    drivers = []
    if os.path.isdir(options.drivers):
        drivers = sorted(os.path.join(options.drivers, f) for f in os.listdir(options.drivers))
        drivers = [d for d in drivers if os.path.isfile(d) and os.access(d, os.X_OK)]
    if options.logs:
        os.makedirs(options.logs, exist_ok=True)
    with open(options.tsv, "w", newline="") as out:
        tsv = csv.writer(out, delimiter="\t", lineterminator="\n")
        tsv.writerow(["library", "matrix", "status", "ms", "nnz_c"])
        for driver in drivers:
            library = library_name(driver)
            log_path = os.path.join(options.logs, f"{library}.log") if options.logs else os.devnull
            started = time.monotonic()
            with open(log_path, "w") as log:
                results = run_driver(driver, inputs, options, log)
            for name, _ in inputs:
                tsv.writerow([library, name, *results[name]])
            out.flush()
            ok = sum(1 for r in results.values() if r[0] == "ok")
            print(f"{library}: {ok} of {len(inputs)} inputs ok, {time.monotonic() - started:.0f} s", flush=True)
    if not drivers:
        print(f"no peer drivers in {options.drivers}: peers.tsv holds its header only")


if __name__ == "__main__":
    sys.exit(main())
