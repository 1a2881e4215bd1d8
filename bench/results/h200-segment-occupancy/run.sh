#!/bin/bash
set -u
mkdir -p /tmp/g && tar xzf .device-g/g.tgz -C /tmp/g
G=/tmp/g/.device-g; cd $G
export LD_LIBRARY_PATH=$G/lib:/usr/local/cuda/lib64
R=$OUT/g; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/env.txt
start=$SECONDS
SPGEMM_MATRICES=$G/m/s SPGEMM_REQUIRE_MATRICES=1 timeout 200 bin/gpu_tests > $R/gpu_tests.log 2>&1
echo "gpu tests rc=$? in $((SECONDS - start)) s: $(grep -E '^\[  PASSED|^\[  FAILED  \] [0-9]' $R/gpu_tests.log | tr '\n' ' ')"
grep -E '^\[  FAILED  \] [A-Z]' $R/gpu_tests.log | head
REAL=""
for m in astro-ph bcsstk33 bio-CE-CX bio-WormNet-v3-benchmark c-39 ca-CondMat ca-HepPh EAT_RS ego-Facebook ego-Twitter email-Enron HEP-th-new mbeacxc musae_facebook orani678 pilot87 rajat01 soc-anybeat soc-Epinions1 sts4098 web-indochina-2004 web-NotreDame web-spam wiki-Vote; do
  f=$(ls m/s/$m.mtx.gz m/c/$m.mtx.gz 2>/dev/null | head -1)
  [[ $m == pilot87 ]] && f=$f/aat
  REAL="$REAL $f"
done
GEN="rmat:16:16 rmat:17:16 rmat:18:16 chunglu:300000:16:2.2 chunglu:500000:16:2.5 chunglu:500000:16:3.0 kron:16:16:0.57:0.19:0.19 kron:17:16:0.45:0.15:0.15 kron:18:8:0.35:0.25:0.25 circuit:500000:4:4:10000 tall:200000:2000:8/ata chunglu:500000:16:2.5/f32 rmat:16:16/f32"
B="--algorithms auto --repeats 5 --warmups 1 --method-seconds 1"
run() {  # name binary env-width inputs check
  local name=$1 bin=$2 w=$3 check=$4; shift 4
  SPGEMM_SEGMENT_MAX_WIDTH=$w timeout 150 bin/$bin "$@" $B $check --tsv $R/$name.tsv > $R/$name.log 2>&1 || echo "$name: rc=$?"
}
run new-1 bench-new 0 --check $REAL
run base-1 bench-base 0 --no-check $REAL
for w in 2048 1024 512 256 128; do run w$w bench-new $w --no-check $REAL; done
run base-2 bench-base 0 --no-check $REAL
run new-2 bench-new 0 --no-check $REAL
echo "real done at $((SECONDS - start)) s"
run gnew bench-new 0 --check $GEN
run gbase bench-base 0 --no-check $GEN
echo "gen done at $((SECONDS - start)) s"
cd $R && awk -F'\t' 'FNR == 1 { n = FILENAME; sub(/\.tsv$/, "", n); cols[++k] = n; next } { m = $2; if (!(m in seen)) { seen[m] = 1; order[++r] = m } t[m, n] = $8; if ($12 != "ok" && $12 != "") bad = bad " " n ":" m ":" $12 }
  END { printf "%-26s", "matrix"; for (i = 1; i <= k; ++i) printf " %8s", cols[i]; print ""; for (j = 1; j <= r; ++j) { printf "%-26s", substr(order[j], 1, 26); for (i = 1; i <= k; ++i) printf " %8s", t[order[j], cols[i]]; print "" } if (bad != "") print "NOT OK:" bad }' base-1.tsv base-2.tsv new-1.tsv new-2.tsv w2048.tsv w1024.tsv w512.tsv w256.tsv w128.tsv gbase.tsv gnew.tsv | tee table.txt
cd $OUT && tar czf g.tgz g && rm -rf g
