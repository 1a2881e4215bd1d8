"""bench/peer_runs.py and bench/peers_summary.py on stand-in drivers and a
stand-in spgemm-bench TSV: restarts after a crash, a failure or a hang; f32
inputs left out; one table with our ratio to the best peer, with and without
peer results."""
import csv
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

BENCH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench")

# A driver as bench/README.md describes them: an input whose path says
# "crash" kills it without a line, "fail" prints a failure and exits 3,
# "hang" prints nothing; others take 2.0 ms ("slow": 9.0 ms).
DRIVER = textwrap.dedent("""\
    #!{python}
    import os, signal, sys, time
    args = sys.argv[1:]
    if args == ["--name"]:
        print("{name}")
        sys.exit(0)
    inputs = [a for i, a in enumerate(args) if not a.startswith("--") and not args[i - 1].startswith("--")]
    for arg in inputs:
        if "crash" in arg:
            print("an illegal memory access was encountered", flush=True)
            os.kill(os.getpid(), signal.SIGSEGV)
        if "hang" in arg:
            time.sleep(60)
        if "fail" in arg:
            print("spgemm-peer\\t{name}\\t" + arg + "\\tfailed: out of memory\\tNA\\tNA", flush=True)
            sys.exit(3)
        ms = "9.0" if "slow" in arg else "2.0"
        print("spgemm-peer\\t{name}\\t" + arg + "\\tok\\t" + ms + "\\t100", flush=True)
""")

BENCH_TSV = """gpu\tmatrix\tn\tnnz_a\tnnz_c\tflops\talgorithm\tms\tfloor_ms\tgflops\tpeak_bytes\tstatus
H100\tm1\t10\t30\t100\t1000\tauto\t1.0\t0.01\t1\t2088\tok
H100\tm1\t10\t30\t100\t1000\thash\t1.5\t0.01\t1\t2088\tok
H100\tm1\t10\t30\t100\t1000\tcusparse-alg1\t4.0\t0.01\t1\t9000\tok
H100\tm1\t10\t30\t100\t1000\tcusparse-alg2\t3.0\t0.01\t1\t9000\tok
H100\tslow/aat\t10\t30\t100\t1000\tauto\t4.0\t0.01\t1\t2088\tok
H100\tslow/aat\t10\t30\t100\t1000\thash\t5.0\t0.01\t1\t2088\tok
H100\tslow/aat\t10\t30\t100\t1000\tcusparse-alg1\tNA\t0.01\tNA\tNA\tfailed: CUSPARSE_STATUS_INSUFFICIENT_RESOURCES
H100\tpoisson3d7:10/f32\t1000\t6400\t100\t1000\tauto\t0.5\t0.01\t1\t2088\tok
"""


def write_driver(folder, name):
    path = os.path.join(folder, name.lower())
    with open(path, "w") as f:
        f.write(DRIVER.format(python=sys.executable, name=name))
    os.chmod(path, 0o755)


class PeerScripts(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.tmp = self.dir.name
        self.drivers = os.path.join(self.tmp, "peers")
        os.mkdir(self.drivers)
        # As spgemm-export-mtx writes it: name, precision, A, B.
        self.manifest = os.path.join(self.tmp, "manifest.tsv")
        with open(self.manifest, "w") as f:
            f.write("m1\tf64\t/x/m1.A.mtx\t/x/m1.A.mtx\n"
                    "crash\tf64\t/x/crash.A.mtx\t/x/crash.A.mtx\n"
                    "slow/aat\tf64\t/x/slow.A.mtx\t/x/slow.B.mtx\n"
                    "fail\tf64\t/x/fail.A.mtx\t/x/fail.A.mtx\n"
                    "hang\tf64\t/x/hang.A.mtx\t/x/hang.A.mtx\n"
                    "poisson3d7:10/f32\tf32\t/x/p.A.mtx\t/x/p.A.mtx\n"
                    "last\tf64\t/x/last.A.mtx\t/x/last.A.mtx\n")
        self.bench_tsv = os.path.join(self.tmp, "bench.tsv")
        with open(self.bench_tsv, "w") as f:
            f.write(BENCH_TSV)

    def tearDown(self):
        self.dir.cleanup()

    def run_script(self, *args):
        out = subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=120)
        self.assertEqual(out.returncode, 0, out.stderr)
        return out.stdout

    def peer_runs(self):
        peers_tsv = os.path.join(self.tmp, "peers.tsv")
        self.run_script(os.path.join(BENCH, "peer_runs.py"), "--drivers", self.drivers, "--manifest", self.manifest,
                        "--tsv", peers_tsv, "--timeout", "3", "--logs", os.path.join(self.tmp, "logs"))
        with open(peers_tsv) as f:
            return peers_tsv, list(csv.DictReader(f, delimiter="\t"))

    def test_drivers_restart_after_crashes_failures_and_hangs(self):
        write_driver(self.drivers, "OpSparse")
        _, rows = self.peer_runs()
        status = {r["matrix"]: r["status"] for r in rows}
        self.assertEqual(set(status), {"m1", "crash", "slow/aat", "fail", "hang", "last"})  # no f32
        self.assertEqual(status["m1"], "ok")
        self.assertEqual(status["crash"], "failed: driver ended (signal 11) after: an illegal memory access was "
                                          "encountered")
        self.assertEqual(status["slow/aat"], "ok")
        self.assertEqual(status["fail"], "failed: out of memory")
        self.assertEqual(status["hang"], "failed: no result within 3 s")
        self.assertEqual(status["last"], "ok")
        self.assertEqual([r["ms"] for r in rows if r["matrix"] == "slow/aat"], ["9.0"])
        with open(os.path.join(self.tmp, "logs", "OpSparse.log")) as f:
            self.assertIn("/x/slow.A.mtx,/x/slow.B.mtx", f.read())

    def test_summary_takes_the_best_peer_per_matrix(self):
        write_driver(self.drivers, "OpSparse")
        write_driver(self.drivers, "spECK")
        peers_tsv, _ = self.peer_runs()
        out_tsv = os.path.join(self.tmp, "h100-peers.tsv")
        out_md = os.path.join(self.tmp, "h100-peers.md")
        text = self.run_script(os.path.join(BENCH, "peers_summary.py"), self.bench_tsv, "--peers", peers_tsv,
                               "--tsv", out_tsv, "--markdown", out_md)
        with open(out_tsv) as f:
            rows = {r["matrix"]: r for r in csv.DictReader(f, delimiter="\t")}
        # m1: the peers' 2.0 ms beat cuSPARSE's 3.0 (ALG2); auto 1.0 ms.
        self.assertEqual(rows["m1"]["best_peer_over_auto"], "2.00")
        self.assertEqual(rows["m1"]["cusparse_ms"], "3.000")
        self.assertEqual(rows["m1"]["cusparse_alg"], "alg2")
        self.assertEqual(rows["m1"]["hash_ms"], "1.500")
        self.assertEqual(rows["m1"]["OpSparse_ms"], "2.000")
        self.assertEqual(rows["m1"]["floor_ms"], "0.01")
        self.assertEqual(rows["m1"]["auto_over_floor"], "100.0")
        # C's bytes: 11 offsets * 8 + 100 entries * 12 = 1288 of the 2088 peak.
        self.assertEqual(rows["m1"]["workspace_bytes_per_nnz_c"], "8.0")
        # slow/aat: cuSPARSE failed, the peers' 9.0 ms against auto's 4.0.
        self.assertEqual(rows["slow/aat"]["best_peer_over_auto"], "2.25")
        self.assertIn("cusparse-alg1: failed", rows["slow/aat"]["not_ok"])
        self.assertEqual(rows["poisson3d7:10/f32"]["class"], "stencil")
        self.assertEqual(rows["poisson3d7:10/f32"]["OpSparse_ms"], "")  # the peers run f64 only
        self.assertIn("best peer / auto, geometric mean over 2 matrices: 2.12; below 1.0 on 0", text)
        self.assertIn("cuSPARSE 3.00 (1), OpSparse 2.12 (2), spECK 2.12 (2)", text)
        with open(out_md) as f:
            self.assertIn("| m1 | other |", f.read())

    def test_summary_without_peers_compares_with_cusparse(self):
        out_tsv = os.path.join(self.tmp, "h100-peers.tsv")
        text = self.run_script(os.path.join(BENCH, "peers_summary.py"), self.bench_tsv, "--peers",
                               os.path.join(self.tmp, "absent.tsv"), "--tsv", out_tsv)
        with open(out_tsv) as f:
            rows = {r["matrix"]: r for r in csv.DictReader(f, delimiter="\t")}
        self.assertEqual(rows["m1"]["best_peer"], "cuSPARSE")
        self.assertEqual(rows["m1"]["best_peer_over_auto"], "3.00")
        self.assertEqual(rows["slow/aat"]["best_peer_over_auto"], "")
        self.assertIn("no peer results", text)
        # An empty drivers folder: peer_runs.py writes the header only.
        peers_tsv, rows = self.peer_runs()
        self.assertEqual(rows, [])


if __name__ == "__main__":
    unittest.main()
