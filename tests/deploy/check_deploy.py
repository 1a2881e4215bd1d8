#!/usr/bin/env python3
"""Offline checks of the deployment files (issue 7). No Docker engine runs in
CI, so these check what the image build would do against this build tree.

  check_deploy.py dockerfile --source S --build B [--spgemmd BIN]
      The Dockerfile's build stage runs .ci/install-deps.sh and the cmake/ctest
      commands of tests/run.sh; the runtime stage is non-root, exposes the
      ports, health-checks over grpc.health.v1 and sets only real SPGEMMD_* flags.
  check_deploy.py libraries --source S --build B
      Runs deploy/docker/gather-libs.sh exactly as the Dockerfile does on the
      binaries it ships (from this build tree) into a temporary /opt/spgemm:
      every library ldd lists is in the base set or was gathered, and the
      copied binaries resolve them from ../lib through their RPATH.
  check_deploy.py manifests --source S --build B [--spgemmd BIN]
      docker-compose.yml, Prometheus, Grafana provisioning and dashboard, and
      the Kubernetes manifests parse and hold the required objects and fields;
      the dashboard's metrics are ones server/ exports.
  check_deploy.py probe --source S --build B --spgemmd BIN --probe BIN
      Starts spgemmd with the Kubernetes ConfigMap's settings: without
      credentials it refuses to serve; with those deploy/make-credentials.sh
      makes (at the ConfigMap's paths' place) it serves TLS, the image's health
      probe says SERVING (address and TLS from SPGEMMD_*, as in the
      HEALTHCHECK), the live /metrics has every metric the dashboard queries,
      and after SIGTERM the server exits 0 and the probe fails.
"""
import argparse
import glob
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL: " + msg)


def ok(msg):
    print("ok: " + msg)


def check(cond, msg):
    if cond:
        ok(msg)
    else:
        fail(msg)
    return cond


# ---------------------------------------------------------------- helpers ----

def load_yaml_docs(path):
    import yaml  # python3-yaml (apt) or pyyaml (pip): .ci/install-deps.sh installs both
    with open(path) as f:
        return [d for d in yaml.safe_load_all(f) if d is not None]


def real_flags(source, spgemmd=None):
    """spgemmd's flags: from `spgemmd --help` when the binary exists, else config.cpp."""
    flags = set()
    if spgemmd and os.path.exists(spgemmd):
        out = subprocess.run([spgemmd, "--help"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             text=True, timeout=30).stdout
        flags = set(re.findall(r"^\s+--([a-z0-9_]+) \(", out, re.M))
        if not flags:
            fail("`spgemmd --help` listed no flags")
    cfg = os.path.join(source, "server", "ops", "config.cpp")
    if os.path.exists(cfg):
        src_flags = set(re.findall(r"ABSL_FLAG\(\s*[\w:]+\s*,\s*(\w+)\s*,", open(cfg).read()))
        if flags and src_flags and flags != src_flags:
            fail(f"--help flags {sorted(flags)} differ from config.cpp's {sorted(src_flags)}")
        flags = flags or src_flags
    if not flags:
        fail("no spgemmd flags found (no binary, no server/ops/config.cpp)")
    return flags


def check_env_keys(keys, flags, where):
    bad = []
    for k in keys:
        m = re.fullmatch(r"SPGEMMD_([A-Z0-9_]+)", k)
        if m and m.group(1).lower() in flags:
            continue
        if not k.startswith("SPGEMMD_"):
            continue  # other variables (NVIDIA_*, PATH) are not spgemmd's
        bad.append(k)
    check(not bad, f"{where}: every SPGEMMD_* variable names a spgemmd flag" + (f" (not: {bad})" if bad else ""))


def parse_dockerfile(path):
    """[(stage_name, instruction, args)], continuation lines joined, comments dropped."""
    lines = open(path).read().split("\n")
    logical, cur = [], ""
    for line in lines:
        s = line.strip()
        if s.startswith("#") and (cur or not s.startswith("# syntax")):
            continue
        if not s and not cur:
            continue
        if line.rstrip().endswith("\\"):
            cur += line.rstrip()[:-1] + " "
            continue
        cur += line
        if cur.strip():
            logical.append(cur.strip())
        cur = ""
    out, stage, global_args = [], None, {}
    for l in logical:
        if l.startswith("#"):
            continue
        instr, _, args = l.partition(" ")
        instr = instr.upper()
        if instr == "FROM":
            m = re.search(r"\bAS\s+(\S+)\s*$", args, re.I)
            stage = m.group(1) if m else args
        elif instr == "ARG" and stage is None:
            k, _, v = args.partition("=")
            global_args[k.strip()] = v.strip().strip('"')
        out.append((stage, instr, args.strip()))
    return out, global_args


def shell_commands(script):
    """Simple shell commands of a script, each a token list (comments, if/then/fi stripped)."""
    text = re.sub(r"\\\n", " ", script)
    cmds = []
    for line in text.split("\n"):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        for part in re.split(r";|&&|\|\|", line):
            try:
                toks = shlex.split(part, comments=True)
            except ValueError:
                toks = part.split()
            while toks and toks[0] in ("then", "else", "do", "if", "fi", "done"):
                if toks[0] == "if":
                    toks = []  # the condition: not a command we compare
                    break
                toks = toks[1:]
            if toks:
                cmds.append(toks)
    return cmds


def read_dockerfile(source):
    return parse_dockerfile(os.path.join(source, "Dockerfile"))


def build_stage_runs(df):
    return [args for stage, instr, args in df if stage == "build" and instr == "RUN"]


def shipped_binaries(df):
    """Paths (relative to the build tree) the build stage copies to /opt/spgemm/bin."""
    for args in build_stage_runs(df):
        for cmd in shell_commands(args):
            if cmd[0] == "cp" and cmd[-1].rstrip("/") == "/opt/spgemm/bin":
                return [p for p in cmd[1:-1] if not p.startswith("-")]
    return []


def gather_invocation(df):
    for args in build_stage_runs(df):
        for cmd in shell_commands(args):
            if any(t.endswith("deploy/docker/gather-libs.sh") for t in cmd):
                return cmd
    return None


# ------------------------------------------------------------- dockerfile ----

def cmd_dockerfile(a):
    df, gargs = read_dockerfile(a.source)
    stages = [(s, args) for s, instr, args in df if instr == "FROM"]
    names = [s for s, _ in stages]
    froms = {s: args for s, args in stages}
    check("build" in names and "runtime" in names, f"stages 'build' and 'runtime' exist (have {names})")
    check(names and names[-1] == "runtime", "the last stage (the default target) is 'runtime'")
    check("CPU_ONLY" in gargs and gargs["CPU_ONLY"] == "0", "ARG CPU_ONLY defaults to 0 (the GPU image)")
    check(re.match(r"13\.", gargs.get("CUDA_VERSION", "")) is not None,
          f"CUDA_VERSION is a CUDA 13 release ({gargs.get('CUDA_VERSION')})")
    check("devel" in froms.get("build-base-0", "") and froms["build-base-0"].startswith("nvidia/cuda:"),
          "the GPU build stage is an nvidia/cuda devel image")
    check("runtime" in froms.get("runtime-base-0", "") and froms["runtime-base-0"].startswith("nvidia/cuda:"),
          "the GPU runtime stage is an nvidia/cuda runtime image")
    strip = lambda s: re.sub(r"-(devel|runtime)-", "-X-", s.split(" AS ")[0])
    check(strip(froms.get("build-base-0", "a")) == strip(froms.get("runtime-base-0", "b")),
          "the runtime image matches the devel image (same CUDA version and OS)")
    check(froms.get("build-base-1", "").startswith("debian:12") and froms.get("runtime-base-1", "").startswith("debian:12"),
          "CPU_ONLY=1 builds and runs on Debian 12, the install script's target")
    check(froms.get("build", "").startswith("build-base-${CPU_ONLY}")
          and froms.get("runtime", "").startswith("runtime-base-${CPU_ONLY}"),
          "CPU_ONLY selects the build and runtime bases")

    # The install script: the same one CI runs, copied in before it runs.
    runs = build_stage_runs(df)
    install_cmds = [c for r in runs for c in shell_commands(r) if ".ci/install-deps.sh" in c]
    check(any(c[:2] == ["bash", ".ci/install-deps.sh"] or "SPGEMM_SKIP_PIP=1" in c[:1] and c[1:3] == ["bash", ".ci/install-deps.sh"]
              for c in install_cmds), "the build stage runs `bash .ci/install-deps.sh`")
    ci_run = open(os.path.join(a.source, ".ci", "run")).read()
    check(any(c[:2] == ["bash", ".ci/install-deps.sh"] for c in shell_commands(ci_run)),
          ".ci/run runs the same script (`bash .ci/install-deps.sh`)")
    if any("SPGEMM_SKIP_PIP=1" in c for c in install_cmds):
        check("SPGEMM_SKIP_PIP" in open(os.path.join(a.source, ".ci", "install-deps.sh")).read(),
              "install-deps.sh honours SPGEMM_SKIP_PIP, which the Dockerfile sets")
    copies = [args for s, instr, args in df if s == "build" and instr == "COPY"]
    check(any(".ci/install-deps.sh" in c.split()[0] for c in copies),
          "the build stage copies .ci/install-deps.sh in before running it")

    # The cmake/ctest commands: tests/run.sh's, in order, token for token.
    run_sh = shell_commands(open(os.path.join(a.source, "tests", "run.sh")).read())
    want = [c for c in run_sh if c[0] in ("cmake", "ctest") or re.match(r"\w+=\$\(", c[0])]
    have = [c for r in runs for c in shell_commands(r) if c[0] in ("cmake", "ctest") or re.match(r"\w+=\$\(", c[0])]
    check(bool(want), f"tests/run.sh has cmake commands ({len(want)})")
    extra_ok = {"$CMAKE_ARGS", "${CMAKE_ARGS}"}
    i = 0
    for w in want:
        while i < len(have) and have[i][0] != w[0]:
            i += 1
        if i == len(have):
            if w[0] == "ctest":
                ok("the Dockerfile runs ctest only on request (RUN_TESTS=1): none found unconditionally")
                continue
            fail(f"the Dockerfile lacks tests/run.sh's command: {' '.join(w)}")
            continue
        h = have[i]
        same = h == w or (h[:len(w)] == w and all(t in extra_ok for t in h[len(w):]))
        check(same, f"Dockerfile `{' '.join(h)}` == tests/run.sh `{' '.join(w)}`")
        i += 1
    stray = [c for c in have if c[0] == "cmake" and not any(c[:len(w)] == w for w in want)]
    check(not stray, "the Dockerfile runs no other cmake commands" + (f" (has {stray})" if stray else ""))

    # What the runtime gets, from this build tree's paths.
    bins = shipped_binaries(df)
    check("build/server/spgemmd" in bins, f"the image ships build/server/spgemmd (ships {bins})")
    for b in bins:
        rel = b[len("build/"):] if b.startswith("build/") else b
        p = os.path.join(a.build, rel)
        check(os.path.isfile(p) and os.access(p, os.X_OK), f"{b} exists in this build tree ({p})")
    gi = gather_invocation(df)
    check(gi is not None and "/opt/spgemm/lib" in gi and "/opt/spgemm/bin/*" in gi,
          "the build stage gathers the libraries of /opt/spgemm/bin/* into /opt/spgemm/lib")
    rcopy = [args for s, instr, args in df if s == "runtime" and instr == "COPY"]
    check(any("--from=build" in c and "/opt/spgemm" in c for c in rcopy),
          "the runtime stage copies /opt/spgemm (binaries and gathered libraries) from the build stage")

    rt = [(instr, args) for s, instr, args in df if s == "runtime"]
    users = [args for instr, args in rt if instr == "USER"]
    check(users and users[-1].split(":")[0] not in ("0", "root"), f"the runtime runs as a non-root user ({users})")
    exposed = " ".join(args for instr, args in rt if instr == "EXPOSE").split()
    check("50051" in exposed and "9464" in exposed, f"EXPOSE 50051 and 9464 ({exposed})")
    hc = [args for instr, args in rt if instr == "HEALTHCHECK"]
    check(hc and "spgemmd-health-probe" in hc[0], "HEALTHCHECK runs the grpc.health.v1 probe")
    check("spgemmd-health-probe" in " ".join(bins), "the image ships the health probe")
    ep = [args for instr, args in rt if instr == "ENTRYPOINT"]
    check(ep and json.loads(ep[0])[0].endswith("/spgemmd"), f"ENTRYPOINT is spgemmd ({ep})")
    env_keys = []
    for instr, args in rt:
        if instr == "ENV":
            env_keys += re.findall(r"(?:^|\s)([A-Za-z_][A-Za-z0-9_]*)=", args)
    flags = real_flags(a.source, a.spgemmd)
    check_env_keys(env_keys, flags, "Dockerfile ENV")
    check(not [args for instr, args in rt if instr == "CMD" and "--" in args],
          "settings come from the environment (no flags baked into CMD)")

    di = os.path.join(a.source, ".dockerignore")
    if check(os.path.exists(di), ".dockerignore exists"):
        pats = [l.strip() for l in open(di) if l.strip() and not l.startswith("#")]
        check(any(p.strip("/").startswith("build") for p in pats) and ".git" in pats,
              ".dockerignore keeps build trees and .git out of the context")
        import fnmatch
        needed = [".ci/install-deps.sh", "tests/run.sh", "CMakeLists.txt", "deploy/docker/gather-libs.sh",
                  "deploy/docker/health_probe.cpp", "server/main.cpp"]
        for n in needed:
            hit = [p for p in pats if not p.startswith("!") and
                   (fnmatch.fnmatch(n, p.strip("/")) or n.startswith(p.strip("/").rstrip("*") + "/"))]
            check(not hit, f".dockerignore keeps {n} in the context" + (f" (excluded by {hit})" if hit else ""))


# -------------------------------------------------------------- libraries ----

BASE = re.compile(r"^(linux-vdso|linux-gate|ld-linux[^ ]*|ld64|libc|libm|libpthread|libdl|librt|libresolv|libutil|"
                  r"libanl|libnsl|libmvec|libstdc\+\+|libgcc_s|libcuda|libnvidia-[^ ]*)\.so")


def ldd(path):
    r = subprocess.run(["ldd", path], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    entries = []
    for line in r.stdout.splitlines():
        line = line.strip()
        m = re.match(r"(\S+) => (not found|\S+)", line)
        if m:
            entries.append((m.group(1), m.group(2)))
        elif line.startswith("/"):
            p = line.split()[0]
            entries.append((os.path.basename(p), p))
        elif line:
            entries.append((line.split()[0], ""))
    return r.returncode, entries


def cmd_libraries(a):
    df, _ = read_dockerfile(a.source)
    bins = shipped_binaries(df)
    gi = gather_invocation(df)
    if not check(bins and gi, "the Dockerfile names the binaries it ships and runs gather-libs.sh"):
        return
    provided = []
    for i, t in enumerate(gi):
        if t == "--provided" and i + 1 < len(gi):
            provided.append(gi[i + 1])
        elif t.startswith("--provided="):
            provided.append(t.split("=", 1)[1])
    tmp = tempfile.mkdtemp(prefix="spgemm-image-")
    try:
        bindir, libdir = os.path.join(tmp, "bin"), os.path.join(tmp, "lib")
        os.makedirs(bindir)
        for b in bins:
            src = os.path.join(a.build, b[len("build/"):])
            shutil.copy2(src, bindir)
        script = os.path.join(a.source, "deploy", "docker", "gather-libs.sh")
        cmd = ["bash", script] + sum((["--provided", p] for p in provided), []) + [libdir] + \
              sorted(glob.glob(os.path.join(bindir, "*")))
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        print(r.stdout, end="")
        check(r.returncode == 0, "gather-libs.sh, run as the Dockerfile runs it, succeeds")
        gathered = set(os.listdir(libdir)) if os.path.isdir(libdir) else set()
        for b in bins:
            name = os.path.basename(b)
            original = os.path.join(a.build, b[len("build/"):])
            rpath = subprocess.run(["readelf", "-d", original], stdout=subprocess.PIPE, text=True).stdout
            check("$ORIGIN/../lib" in rpath, f"{name} has RPATH $ORIGIN/../lib")
            _, entries = ldd(original)
            missing, unresolved = [], []
            for soname, path in entries:
                if BASE.match(soname):
                    continue
                if path == "not found":
                    unresolved.append(soname)
                elif any(path.startswith(p) for p in provided):
                    continue
                elif soname not in gathered:
                    missing.append(f"{soname} ({path})")
            check(not unresolved, f"{name}: ldd resolves every library" + (f" (not found: {unresolved})" if unresolved else ""))
            check(not missing, f"{name}: every library ldd lists beyond the base set was gathered "
                               f"({len(entries)} listed)" + (f"; missing {missing}" if missing else ""))
            # The copy in bin/ must find the gathered libraries through its RPATH.
            _, copied = ldd(os.path.join(bindir, name))
            stray = [f"{s} => {p}" for s, p in copied
                     if not BASE.match(s) and not any(p.startswith(x) for x in provided)
                     and not os.path.realpath(p).startswith(os.path.realpath(libdir) + os.sep)]
            check(not stray, f"{name}: copied to bin/, resolves every gathered library from ../lib"
                             + (f" (elsewhere: {stray})" if stray else ""))
        r = subprocess.run([os.path.join(bindir, "spgemmd"), "--help"], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, timeout=30)
        check("--listen" in r.stdout, "the gathered spgemmd runs (--help)")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# -------------------------------------------------------------- manifests ----

def exported_metrics(source):
    """Metric names server/ exports, with a histogram's _bucket/_sum/_count series."""
    names, hist = set(), set()
    for p in glob.glob(os.path.join(source, "server", "**", "*.cpp"), recursive=True):
        text = open(p).read()
        names |= set(re.findall(r'"(spgemmd_[a-z0-9_]+)"', text))
        hist |= set(re.findall(r'describe\(\s*"(spgemmd_[a-z0-9_]+)"\s*,\s*"histogram"', text))
    for h in hist:
        names |= {h + "_bucket", h + "_sum", h + "_count"}
    return names


def dashboard_metrics(dash):
    exprs = []

    def walk(o):
        if isinstance(o, dict):
            for k, v in o.items():
                if k in ("expr", "definition") and isinstance(v, str):
                    exprs.append(v)
                elif k == "query" and isinstance(v, str):
                    exprs.append(v)
                else:
                    walk(v)
        elif isinstance(o, list):
            for x in o:
                walk(x)
    walk(dash)
    return exprs, sorted({m for e in exprs for m in re.findall(r"\b(spgemmd_[a-z0-9_]+)", e)})


def cmd_manifests(a):
    import yaml
    flags = real_flags(a.source, a.spgemmd)
    dep = os.path.join(a.source, "deploy")

    # docker-compose.yml
    compose = load_yaml_docs(os.path.join(dep, "docker-compose.yml"))[0]
    svcs = compose.get("services", {})
    check({"spgemmd", "prometheus", "grafana"} <= set(svcs), f"compose has spgemmd, prometheus, grafana ({sorted(svcs)})")
    sd = svcs.get("spgemmd", {})
    devs = (((sd.get("deploy") or {}).get("resources") or {}).get("reservations") or {}).get("devices") or []
    check(any("gpu" in (d.get("capabilities") or []) and d.get("driver") == "nvidia" for d in devs),
          "compose: spgemmd reserves NVIDIA GPUs (deploy.resources.reservations.devices)")
    ctx = os.path.normpath(os.path.join(dep, (sd.get("build") or {}).get("context", ".")))
    check(os.path.exists(os.path.join(ctx, (sd.get("build") or {}).get("dockerfile", "Dockerfile"))),
          "compose: spgemmd builds the repository's Dockerfile")
    ports = [str(p) for p in sd.get("ports", [])]
    check(any(p.endswith(":50051") for p in ports) and any(p.endswith(":9464") for p in ports),
          f"compose: spgemmd publishes 50051 and 9464 ({ports})")
    env = sd.get("environment") or {}
    env_keys = list(env) if isinstance(env, dict) else [e.split("=")[0] for e in env]
    check_env_keys(env_keys, flags, "compose spgemmd environment")
    if isinstance(env, dict):
        top_secrets = compose.get("secrets") or {}
        used = [s if isinstance(s, str) else s.get("source") for s in sd.get("secrets") or []]
        for var in ("SPGEMMD_TLS_CERT", "SPGEMMD_TLS_KEY", "SPGEMMD_TOKENS_FILE"):
            path = str(env.get(var, ""))
            name = path[len("/run/secrets/"):] if path.startswith("/run/secrets/") else None
            check(name in used and "file" in (top_secrets.get(name) or {}),
                  f"compose: {var} is a secret of spgemmd's, from a file ({path})")
    grace = float(env.get("SPGEMMD_GRACE_SECONDS", 20)) if isinstance(env, dict) else 20
    sgp = str(sd.get("stop_grace_period", "10s"))
    check(sgp.endswith("s") and float(sgp[:-1]) > grace, f"compose: stop_grace_period {sgp} > grace {grace}s")
    for name in ("prometheus", "grafana"):
        for v in svcs.get(name, {}).get("volumes", []):
            hostpath = str(v).split(":")[0]
            if hostpath.startswith("."):
                check(os.path.exists(os.path.join(dep, hostpath)), f"compose: {name} mounts {hostpath}, which exists")

    # Prometheus
    prom = load_yaml_docs(os.path.join(dep, "prometheus", "prometheus.yml"))[0]
    targets = [t for sc in prom.get("scrape_configs", []) for s in sc.get("static_configs", []) for t in s.get("targets", [])]
    check("spgemmd:9464" in targets, f"prometheus scrapes spgemmd:9464 ({targets})")

    # Grafana provisioning and the dashboard
    ds = load_yaml_docs(os.path.join(dep, "grafana", "provisioning", "datasources", "prometheus.yml"))[0]
    dsl = ds.get("datasources", [])
    check(any(d.get("type") == "prometheus" and d.get("url") == "http://prometheus:9090" for d in dsl),
          "grafana: a Prometheus datasource at http://prometheus:9090")
    prov = load_yaml_docs(os.path.join(dep, "grafana", "provisioning", "dashboards", "spgemmd.yml"))[0]
    paths = [p.get("options", {}).get("path") for p in prov.get("providers", [])]
    mounts = [str(v).split(":")[1] for v in svcs.get("grafana", {}).get("volumes", []) if ":" in str(v)]
    check(any(p in mounts for p in paths), f"grafana: the dashboard provider reads a mounted folder ({paths})")
    dashes = glob.glob(os.path.join(dep, "grafana", "dashboards", "*.json"))
    check(bool(dashes), "a dashboard JSON is in deploy/grafana/dashboards/")
    exported = exported_metrics(a.source)
    check(bool(exported), f"server/ exports metrics ({len(exported)} series names)")
    for p in dashes:
        with open(p) as f:
            dash = json.load(f)
        exprs, used = dashboard_metrics(dash)
        check(len(exprs) >= 10, f"{os.path.basename(p)}: {len(exprs)} queries")
        unknown = [m for m in used if m not in exported]
        check(not unknown, f"{os.path.basename(p)}: every metric queried is exported by server/"
                           + (f" (not exported: {unknown}; add it to the server or drop the panel)" if unknown else ""))
        ids = [pl.get("id") for pl in dash.get("panels", [])]
        check(len(ids) == len(set(ids)), "dashboard panel ids are unique")
        text = " ".join(exprs)
        for what, pat in [("jobs", "spgemmd_jobs_total"), ("latency", "spgemmd_phase_seconds_bucket"),
                          ("GFLOPS", "flops"), ("queue depth", "spgemmd_queue_depth"),
                          ("cache", "spgemmd_cache_bytes"), ("device memory", "spgemmd_device_memory_")]:
            check(pat in text, f"dashboard shows {what} ({pat})")
        gen = os.path.join(dep, "grafana", "make_dashboard.py")
        if os.path.exists(gen) and os.path.basename(p) == "spgemmd.json":
            r = subprocess.run([sys.executable, "-c",
                                "import runpy,json,sys; g=runpy.run_path(sys.argv[1]); print(json.dumps(g['dashboard'], sort_keys=True))",
                                gen], stdout=subprocess.PIPE, text=True)
            check(r.returncode == 0 and json.loads(r.stdout) == dash,
                  "spgemmd.json is what make_dashboard.py writes (rerun it after editing)")

    # Kubernetes
    k8s = os.path.join(dep, "k8s")
    kust = load_yaml_docs(os.path.join(k8s, "kustomization.yaml"))[0]
    objs = {}
    for r in kust.get("resources", []):
        rp = os.path.join(k8s, r)
        if check(os.path.exists(rp), f"kustomization resource {r} exists"):
            for d in load_yaml_docs(rp):
                check("apiVersion" in d and "kind" in d and "name" in d.get("metadata", {}),
                      f"{r}: {d.get('kind')} has apiVersion, kind, metadata.name")
                objs.setdefault(d.get("kind"), []).append(d)
    schema_check(k8s, kust)
    render_check(k8s)
    for extra in glob.glob(os.path.join(k8s, "*.yaml")):
        for d in load_yaml_docs(extra):
            objs.setdefault("_all", []).append(d)
    deps = objs.get("Deployment", [])
    if not check(len(deps) == 1, "one Deployment"):
        return
    d = deps[0]
    check(d["apiVersion"] == "apps/v1", "Deployment apiVersion apps/v1")
    pod = d["spec"]["template"]
    pod_labels = pod["metadata"].get("labels", {})
    sel = d["spec"]["selector"].get("matchLabels", {})
    check(sel and all(pod_labels.get(k) == v for k, v in sel.items()), "Deployment selector matches its pod labels")
    c = pod["spec"]["containers"][0]
    res = c.get("resources", {})
    gpu_lim = res.get("limits", {}).get("nvidia.com/gpu")
    check(gpu_lim is not None and int(gpu_lim) >= 1, f"the container's limits request nvidia.com/gpu ({gpu_lim})")
    check(all(k in res.get("requests", {}) for k in ("cpu", "memory")) and "memory" in res.get("limits", {}),
          "the container has cpu/memory requests and a memory limit")
    grpc_ports = [p["containerPort"] for p in c.get("ports", []) if p.get("name") == "grpc"]
    check(grpc_ports == [50051], f"container port 'grpc' is 50051 ({grpc_ports})")
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        command = (c.get(probe, {}).get("exec") or {}).get("command") or [""]
        check(command[0].endswith("/spgemmd-health-probe") and not any(a.startswith("--addr") for a in command),
              f"{probe} runs the image's health probe (gRPC health over TLS, address from SPGEMMD_LISTEN)")
    sc = pod["spec"].get("securityContext", {})
    df, _ = read_dockerfile(a.source)
    uid = [args for s, instr, args in df if s == "runtime" and instr == "USER"][-1].split(":")[0]
    check(sc.get("runAsNonRoot") is True and str(sc.get("runAsUser")) == uid,
          f"pods run as non-root, as the image's user {uid}")
    cms = {m["metadata"]["name"]: m for m in objs.get("ConfigMap", [])}
    refs = [e["configMapRef"]["name"] for e in c.get("envFrom", []) if "configMapRef" in e]
    check(refs and all(r in cms for r in refs), f"envFrom names the ConfigMap ({refs})")
    cm_env = {}
    for r in refs:
        cm_env.update(cms.get(r, {}).get("data", {}))
    check(cm_env and all(k.startswith("SPGEMMD_") for k in cm_env), "the ConfigMap's keys are SPGEMMD_* settings")
    check_env_keys(list(cm_env), flags, "ConfigMap")
    mounts = {m["name"]: m["mountPath"] for m in c.get("volumeMounts", [])}
    secrets = {v["name"]: v["secret"].get("secretName") for v in pod["spec"].get("volumes", []) if "secret" in v}
    secret_dirs = [mounts[n] for n in secrets if n in mounts]
    check(bool(secret_dirs), f"the pod mounts a Secret ({secrets})")
    for var in ("SPGEMMD_TLS_CERT", "SPGEMMD_TLS_KEY", "SPGEMMD_TOKENS_FILE"):
        path = cm_env.get(var, "")
        check(any(path.startswith(d.rstrip("/") + "/") for d in secret_dirs),
              f"ConfigMap {var} ({path}) is a file of the mounted Secret")
    check(sc.get("fsGroup") == sc.get("runAsGroup"), "fsGroup lets the server's group read the Secret's files")
    grace = float(cm_env.get("SPGEMMD_GRACE_SECONDS", 20))
    check(pod["spec"].get("terminationGracePeriodSeconds", 30) > grace,
          f"terminationGracePeriodSeconds > SPGEMMD_GRACE_SECONDS ({grace})")
    listen_port = cm_env.get("SPGEMMD_LISTEN", "0.0.0.0:50051").rsplit(":", 1)[1]
    metrics_port = cm_env.get("SPGEMMD_METRICS_LISTEN", "0.0.0.0:9464").rsplit(":", 1)[1]
    check(listen_port == "50051", "the ConfigMap's SPGEMMD_LISTEN port is the probed port")
    ann = pod["metadata"].get("annotations", {})
    has_sm = any(o.get("kind") == "ServiceMonitor" for o in objs.get("_all", []))
    check((ann.get("prometheus.io/scrape") == "true" and ann.get("prometheus.io/port") == metrics_port) or has_sm,
          "Prometheus finds the pods (scrape annotations on the metrics port, or a ServiceMonitor)")
    kimages = [i["name"] for i in kust.get("images", [])]
    check(c["image"].split(":")[0] in kimages, "kustomization sets the Deployment's image")

    svcs_k = objs.get("Service", [])
    headless = [s for s in svcs_k if s["spec"].get("clusterIP") == "None"]
    check(len(headless) >= 1, "a headless Service (clusterIP: None) for client-side load balancing")
    for s in headless:
        check(all(pod_labels.get(k) == v for k, v in s["spec"]["selector"].items()),
              "the headless Service selects the spgemmd pods")
        check(any(p.get("port") == 50051 for p in s["spec"].get("ports", [])), "the headless Service has port 50051")
    pdbs = objs.get("PodDisruptionBudget", [])
    check(len(pdbs) == 1 and pdbs[0]["apiVersion"] == "policy/v1", "a policy/v1 PodDisruptionBudget")
    for p in pdbs:
        check(("minAvailable" in p["spec"]) != ("maxUnavailable" in p["spec"]), "the PDB sets minAvailable or maxUnavailable")
        check(all(pod_labels.get(k) == v for k, v in p["spec"]["selector"]["matchLabels"].items()),
              "the PDB selects the spgemmd pods")


def schema_check(k8s, kust):
    """Strict validation against the Kubernetes API schemas, offline, where the
    PyPI package kubernetes-validate is installed (it bundles the schemas)."""
    try:
        import kubernetes_validate
    except ImportError:
        print("skip: schema validation (pip package kubernetes-validate not installed)")
        return
    version = kubernetes_validate.latest_version()
    for r in kust.get("resources", []) + ["servicemonitor.yaml"]:
        rp = os.path.join(k8s, r)
        if not os.path.exists(rp):
            continue
        for d in load_yaml_docs(rp):
            try:
                kubernetes_validate.validate(d, version, strict=True)
                ok(f"{r}: {d.get('kind')} is valid against the Kubernetes {version} schema (strict)")
            except kubernetes_validate.SchemaNotFoundError:
                print(f"skip: {r}: no bundled schema for {d.get('apiVersion')} {d.get('kind')}")
            except kubernetes_validate.ValidationError as e:
                fail(f"{r}: {d.get('kind')} fails the Kubernetes {version} schema: {e.message} at {list(e.path)}")


def render_check(k8s):
    """`kubectl kustomize` (offline) renders the kustomization, where kubectl exists."""
    kubectl = shutil.which("kubectl")
    if not kubectl:
        print("skip: kubectl kustomize (kubectl not installed)")
        return
    r = subprocess.run([kubectl, "kustomize", k8s], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       timeout=60)
    if r.returncode != 0:
        fail(f"kubectl kustomize {k8s} fails: {r.stdout.strip()[:400]}")
        return
    import yaml
    kinds = sorted(d.get("kind") for d in yaml.safe_load_all(r.stdout) if d)
    check(all(d.get("metadata", {}).get("namespace") == "spgemm"
              for d in yaml.safe_load_all(r.stdout) if d and d.get("kind") != "Namespace"),
          f"kubectl kustomize renders {kinds}, all in namespace spgemm")


# ------------------------------------------------------------------ probe ----

def wait_for_file(path, proc, seconds):
    end = time.time() + seconds
    while time.time() < end:
        if os.path.exists(path) and open(path).read().strip():
            return int(open(path).read().strip())
        if proc.poll() is not None:
            return None
        time.sleep(0.1)
    return None


def cmd_probe(a):
    cm = load_yaml_docs(os.path.join(a.source, "deploy", "k8s", "configmap.yaml"))[0]["data"]
    tmp = tempfile.mkdtemp(prefix="spgemm-probe-")
    env = dict(os.environ)
    env.update({k: str(v) for k, v in cm.items()})
    # The ConfigMap's settings, but on free ports (the wildcard address, as in
    # the pod; metrics on loopback) and the CPU backend.
    env.update({"SPGEMMD_LISTEN": "0.0.0.0:0", "SPGEMMD_METRICS_LISTEN": "127.0.0.1:0",
                "SPGEMMD_BACKEND": "cpu", "SPGEMMD_GRACE_SECONDS": "2",
                "SPGEMMD_PORT_FILE": os.path.join(tmp, "port"),
                "SPGEMMD_METRICS_PORT_FILE": os.path.join(tmp, "mport")})
    bare = {k: v for k, v in env.items() if k not in ("SPGEMMD_TLS_CERT", "SPGEMMD_TLS_KEY", "SPGEMMD_TOKENS_FILE")}
    r = subprocess.run([a.spgemmd], env=bare, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=60)
    check(r.returncode == 2 and "refusing to serve 0.0.0.0:0" in r.stdout,
          f"without credentials spgemmd refuses the pod's address (rc={r.returncode}: {r.stdout.strip()[:200]})")
    # The credentials deploy/make-credentials.sh makes, where the Secret's files would be.
    creds = os.path.join(tmp, "credentials")
    r = subprocess.run(["bash", os.path.join(a.source, "deploy", "make-credentials.sh"), creds],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=60)
    if not check(r.returncode == 0 and "admin token: " in r.stdout, "deploy/make-credentials.sh makes credentials"):
        print(r.stdout)
        return
    token = r.stdout.split("admin token: ", 1)[1].split()[0]
    for var in ("SPGEMMD_TLS_CERT", "SPGEMMD_TLS_KEY", "SPGEMMD_TOKENS_FILE"):
        env[var] = os.path.join(creds, os.path.basename(cm[var]))
    log = open(os.path.join(tmp, "log"), "w+")
    proc = subprocess.Popen([a.spgemmd], env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        port = wait_for_file(os.path.join(tmp, "port"), proc, 30)
        if not check(port is not None, "spgemmd starts with the ConfigMap's settings (SPGEMMD_* env)"):
            log.seek(0)
            print(log.read())
            return
        # The pod's environment: the address and TLS of the server's own settings.
        penv = dict(env, SPGEMMD_LISTEN=f"0.0.0.0:{port}")
        r = subprocess.run([a.probe, "--timeout=5"], env=penv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, timeout=30)
        check(r.returncode == 0 and "SERVING" in r.stdout,
              f"the probe (address and TLS from SPGEMMD_*, port {port}) says SERVING: rc={r.returncode} {r.stdout.strip()}")
        r = subprocess.run([a.probe, f"--addr=127.0.0.1:{port}", "--ca=" + os.path.join(creds, "ca.crt")],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=30)
        check(r.returncode == 0, f"the probe checking the certificate against the credentials' CA: rc={r.returncode} "
                                 f"{r.stdout.strip()}")
        r = subprocess.run([a.probe, f"--addr=127.0.0.1:{port}", "--timeout=3"], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, timeout=30, env=dict(os.environ, SPGEMMD_TLS_CERT=""))
        check(r.returncode == 2, f"a plaintext probe gets no answer from the TLS port: rc={r.returncode}")
        r = subprocess.run([a.probe, f"--addr=127.0.0.1:{port}", "--service=no.such.Service"], env=penv,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=30)
        check(r.returncode == 1, f"the probe fails (rc 1) for an unknown service: rc={r.returncode}")
        cli = os.path.normpath(os.path.join(os.path.dirname(a.probe), "..", "..", "client", "spgemm"))
        if check(os.path.exists(cli), f"the CLI is built beside the probe ({cli})"):
            base = [cli, "--server", f"127.0.0.1:{port}", "--tls", "--ca", os.path.join(creds, "ca.crt")]
            r = subprocess.run(base + ["--token", token, "status"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True, timeout=30)
            check(r.returncode == 0, f"the CLI with the admin token over TLS reads the status: rc={r.returncode} "
                                     f"{r.stdout.strip()[:200]}")
            r = subprocess.run(base + ["status"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               timeout=30, env=dict(os.environ, SPGEMM_TOKEN=token))
            check(r.returncode == 0, f"the CLI takes the token from SPGEMM_TOKEN: rc={r.returncode}")
            r = subprocess.run(base + ["status"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               timeout=30, env={k: v for k, v in os.environ.items() if k != "SPGEMM_TOKEN"})
            check(r.returncode != 0 and "UNAUTHENTICATED" in r.stdout.upper(),
                  f"the CLI without a token is refused: rc={r.returncode} {r.stdout.strip()[:200]}")

        mport = wait_for_file(os.path.join(tmp, "mport"), proc, 10)
        body = urllib.request.urlopen(f"http://127.0.0.1:{mport}/metrics", timeout=10).read().decode()
        live = set()
        for name, typ in re.findall(r"^# TYPE (\S+) (\S+)", body, re.M):
            live.add(name)
            if typ == "histogram":
                live |= {name + "_bucket", name + "_sum", name + "_count"}
        for p in glob.glob(os.path.join(a.source, "deploy", "grafana", "dashboards", "*.json")):
            _, used = dashboard_metrics(json.load(open(p)))
            unknown = [m for m in used if m not in live]
            check(not unknown, f"{os.path.basename(p)}: every metric queried is on the live /metrics"
                               + (f" (absent: {unknown})" if unknown else ""))

        proc.send_signal(signal.SIGTERM)
        try:
            rc = proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            rc = None
        check(rc == 0, f"spgemmd exits 0 on SIGTERM (rc={rc})")
        r = subprocess.run([a.probe, f"--addr=127.0.0.1:{port}", "--timeout=2"], env=penv, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, timeout=30)
        check(r.returncode == 2, f"the probe fails (rc 2) once the server is gone: rc={r.returncode}")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        log.close()
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("what", choices=["dockerfile", "libraries", "manifests", "probe"])
    ap.add_argument("--source", required=True)
    ap.add_argument("--build", required=True)
    ap.add_argument("--spgemmd")
    ap.add_argument("--probe")
    ap.add_argument("--binary", action="append", default=[], help="ignored: the Dockerfile names the binaries")
    a = ap.parse_args()
    {"dockerfile": cmd_dockerfile, "libraries": cmd_libraries, "manifests": cmd_manifests, "probe": cmd_probe}[a.what](a)
    if failures:
        print(f"\n{len(failures)} check(s) failed:")
        for f in failures:
            print("  - " + f)
        return 1
    print("\nall checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
