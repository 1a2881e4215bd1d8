"""bench/run_ab_device.sh and bench/ab_summary.py on stand-in builds: every
variant timed each round, the first round checked but the baseline's, the
suites' verdicts gathered, one table with the ratios to the baseline, and
the AMG rounds where the builds have their bench, in a second table."""
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import unittest

BENCH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench")

# A stand-in spgemm-bench: writes one row per input to --tsv, its ms from the
# build's name (FAST: 1.0 ms, else 2.0; "broken" inputs fail), and records
# whether it was asked to check.
STAND_IN = textwrap.dedent("""\
    #!{python}
    import sys
    args = sys.argv[1:]
    tsv = args[args.index("--tsv") + 1]
    inputs = args[args.index("--tsv") + 2:]  # the inputs come last
    with open(tsv, "w") as f:
        f.write("gpu\\tmatrix\\tn\\tnnz_a\\tnnz_c\\tflops\\talgorithm\\tms\\tfloor_ms\\tgflops\\tpeak_bytes\\tstatus\\n")
        for a in inputs:
            status = "failed: wrong" if "broken" in a else "ok"
            f.write("H100\\t%s\\t1\\t1\\t1\\t2\\thash\\t{ms}\\t0.1\\t1\\t8\\t%s\\n" % (a, status))
    with open(tsv + ".calls", "a") as f:
        f.write("{name} %s\\n" % ("--check" in args))
""")

SUITE = "#!/bin/sh\\necho '[  PASSED  ] 3 tests.'\\nexit {rc}\\n"

# A stand-in spgemm-amg-bench: one row per problem (the pyramid from the
# build's name, cuSPARSE's pyramid unless --no-cusparse), a phases line each,
# and a record of whether cuSPARSE was asked for.
AMG_STAND_IN = textwrap.dedent("""\
    #!{python}
    import sys
    args = sys.argv[1:]
    tsv = args[args.index("--tsv") + 1]
    problems = args[:args.index("--repeats")]
    vendor = "--no-cusparse" not in args
    with open(tsv, "w") as f:
        f.write("problem\\tpyramid_ms\\tpyramid_numeric_ms\\tsetup_ms\\tresetup_ms\\tcusparse_pyramid_ms\\tstatus\\n")
        for p in problems:
            f.write("%s\\t{ms}\\t1.0\\t10.0\\t4.0\\t%s\\tok\\n" % (p, "8.0" if vendor else ""))
            print("%s L0 R(AQ): transpose 0.1 ms" % p)
    with open(CALLS, "a") as f:
        f.write("{name} amg %s\\n" % vendor)
""")


class AbScripts(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.dir = os.path.join(self.tmp, "pkg")
        os.makedirs(os.path.join(self.dir, "bin"))
        os.makedirs(os.path.join(self.dir, "matrices"))
        for f in ("run_ab_device.sh", "ab_summary.py", "device_env.sh"):
            shutil.copy(os.path.join(BENCH, f), self.dir)
        self.calls = os.path.join(self.tmp, "calls")

    def tearDown(self):
        shutil.rmtree(self.tmp)

    def variant(self, name, ms, suite_rc=None):
        path = os.path.join(self.dir, "bin", "spgemm-bench-" + name)
        with open(path, "w") as f:
            f.write(STAND_IN.format(python=sys.executable, ms=ms, name=name).replace(
                'tsv + ".calls"', repr(self.calls)))
        os.chmod(path, 0o755)
        if suite_rc is not None:
            suite = os.path.join(self.dir, "bin", "gpu-tests-" + name)
            with open(suite, "w") as f:
                f.write(SUITE.replace("\\n", "\n").format(rc=suite_rc))
            os.chmod(suite, 0o755)
        with open(os.path.join(self.dir, "variants.txt"), "a") as f:
            f.write(name + "\n")

    def amg_variant(self, name, ms):
        path = os.path.join(self.dir, "bin", "spgemm-amg-bench-" + name)
        with open(path, "w") as f:
            f.write(AMG_STAND_IN.format(python=sys.executable, ms=ms, name=name).replace("CALLS", repr(self.calls)))
        os.chmod(path, 0o755)

    def run_ab(self, inputs, **env):
        with open(os.path.join(self.dir, "inputs.txt"), "w") as f:
            f.write("\n".join(inputs) + "\n")
        out = os.path.join(self.tmp, "out")
        e = dict(os.environ, OUT=out, **env)
        p = subprocess.run(["bash", os.path.join(self.dir, "run_ab_device.sh"), self.dir], env=e,
                           capture_output=True, text=True, timeout=60)
        return p, out

    def test_rounds_checks_and_table(self):
        self.variant("before", "2.0")
        self.variant("after", "1.0", suite_rc=0)
        p, out = self.run_ab(["er:100:4", "matrices/m.mtx.gz/aat"])
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertEqual(sorted(os.listdir(out)), ["ab.md", "ab.tsv", "environment.txt", "gpu_tests.txt"])
        with open(self.calls) as f:
            calls = f.read().split("\n")
        # two rounds of both, in turn; only the new build's first round checked
        self.assertEqual(calls[:4], ["before False", "after True", "before False", "after False"])
        with open(os.path.join(out, "ab.md")) as f:
            table = f.read()
        self.assertIn("| er:100:4 | hash | 2.000 | 1.000 | 2.00 |", table)
        self.assertIn("| m/aat | hash | 2.000 | 1.000 | 2.00 |", table)
        self.assertIn("after against before: 2.000x in geometric mean over 2; slower beyond 3% on 0", table)
        with open(os.path.join(out, "gpu_tests.txt")) as f:
            self.assertIn("== after: exit 0", f.read())

    def test_amg_rounds_and_their_table(self):
        self.variant("before", "2.0")
        self.amg_variant("before", "4.0")
        self.variant("after", "1.0")
        self.amg_variant("after", "2.0")
        p, out = self.run_ab(["er:100:4"], AMG_PROBLEMS="poisson3d7:20 poisson2d5:32", TESTS="none")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertEqual(sorted(os.listdir(out)),
                         ["ab.md", "ab.tsv", "amg-phases.txt", "amg.tsv", "environment.txt", "gpu_tests.txt"])
        with open(self.calls) as f:
            calls = [c for c in f.read().split("\n") if " amg " in c]
        # two rounds of both in turn, cuSPARSE's pyramid in the first only
        self.assertEqual(calls, ["before amg True", "after amg True", "before amg False", "after amg False"])
        with open(os.path.join(out, "amg-phases.txt")) as f:
            phases = f.read()
        self.assertIn("== after, round 2\npoisson3d7:20 L0 R(AQ): transpose 0.1 ms", phases)
        with open(os.path.join(out, "ab.md")) as f:
            table = f.read()
        self.assertIn("| poisson3d7:20 | before | 4.00 | 1.00 | 10.00 | 4.00 | 2.50 | 2.00 | 1.00 |", table)
        self.assertIn("| poisson3d7:20 | after | 2.00 | 1.00 | 10.00 | 4.00 | 2.50 | 4.00 | 2.00 |", table)

    def test_a_failed_result_or_suite_fails_the_run(self):
        self.variant("base", "1.0")
        self.variant("new", "1.5", suite_rc=1)
        p, out = self.run_ab(["er:100:4", "broken:1"], ROUNDS="1")
        self.assertEqual(p.returncode, 1)
        with open(os.path.join(out, "ab.md")) as f:
            table = f.read()
        self.assertIn("new against base: 0.667x in geometric mean over 1; slower beyond 3% on 1: er:100:4 0.67",
                      table)
        self.assertIn("not ok: broken:1 (base): failed: wrong; broken:1 (new): failed: wrong", table)
        with open(os.path.join(out, "gpu_tests.txt")) as f:
            self.assertIn("== new: exit 1", f.read())


if __name__ == "__main__":
    unittest.main()
