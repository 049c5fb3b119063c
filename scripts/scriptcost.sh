#!/usr/bin/env bash
# Server time per call of pkg/delayq's scripts, before and after a change of
# them: the package's benchmarks are built twice, with the .lua files of REV
# and with those of the work tree (the Go code is the work tree's in both),
# and run in turn (A B, B A, …) against one local redis-server that logs
# every call in SLOWLOG. Prints, per script, the median over the rounds of
# each run's mean µs per call (calls between the 10th and 90th percentile),
# the min–max, and the median of the per-round differences.
#
#   scripts/scriptcost.sh REV [BENCH]     # BENCH: a benchmark name, default PollAck
#   ROUNDS=10 N=3000 PORT=21260 scripts/scriptcost.sh HEAD~1 PollAckReceipt
#
# Needs redis-server, redis-cli (7.0 or later: SLOWLOG GET -1, --json) and
# python3. Measurement only, not a test.
set -euo pipefail
cd "$(dirname "$0")/.."
rev=${1:?usage: scripts/scriptcost.sh REV [BENCH]}
bench=${2:-PollAck}
ROUNDS=${ROUNDS:-10}
N=${N:-3000}
. scripts/ownredis.sh

# The old binary: the work tree with REV's scripts.
mkdir -p "$tmp/old" "$tmp/lua/old" "$tmp/lua/new"
git ls-files -z | xargs -0 cp --parents -t "$tmp/old"
for f in pkg/delayq/*.lua; do
  git show "$rev:$f" >"$tmp/old/$f" 2>/dev/null || rm -f "$tmp/old/$f"
  cp "$tmp/old/$f" "$tmp/lua/old/" 2>/dev/null || true
  cp "$f" "$tmp/lua/new/"
done
(cd "$tmp/old" && go test -c -o "$tmp/old.test" ./pkg/delayq)
go test -c -o "$tmp/new.test" ./pkg/delayq

start_own_redis scriptcost.sh --slowlog-log-slower-than 0 --slowlog-max-len 1000000

echo "$ROUNDS rounds of Benchmark$bench ${N}x, $(cut -d' ' -f1-3 /proc/loadavg) load average at the start"
: >"$tmp/runs.jsonl"
for round in $(seq "$ROUNDS"); do
  for v in $( ((round % 2)) && echo "old new" || echo "new old"); do
    redis-cli -p "$port" SLOWLOG RESET >/dev/null
    CHATQ_TEST_REDIS_URL="redis://127.0.0.1:$port/0" "$tmp/$v.test" -test.run '^$' \
      -test.bench "^Benchmark$bench\$/redis" -test.benchtime "${N}x" >/dev/null
    redis-cli -p "$port" --json -2 SLOWLOG GET -1 | python3 -c '
import json, statistics, sys
v, r, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
by = {}
for e in json.load(sys.stdin):
    a = e[3]
    if a and a[0].upper() == "EVALSHA":
        by.setdefault(a[1], []).append(e[2])
for sha, d in by.items():
    if len(d) >= n // 2:
        d.sort()
        print(json.dumps({"v": v, "round": r, "sha": sha, "mean": statistics.mean(d[len(d) // 10:len(d) * 9 // 10])}))
' "$v" "$round" "$N" >>"$tmp/runs.jsonl"
  done
done
python3 - "$tmp" <<'PY'
import glob, hashlib, json, os, statistics, sys
tmp = sys.argv[1]
names = {}
for v in ("old", "new"):
    # Since the prelude, a script is sent as queue.lua followed by its file.
    pre = f"{tmp}/lua/{v}/queue.lua"
    pre = open(pre, "rb").read() if os.path.exists(pre) else b""
    for f in glob.glob(f"{tmp}/lua/{v}/*.lua"):
        body = open(f, "rb").read()
        for src in (body, pre + body):
            names.setdefault(hashlib.sha1(src).hexdigest(), os.path.basename(f))
d = {}
for l in open(f"{tmp}/runs.jsonl"):
    x = json.loads(l)
    d.setdefault(names.get(x["sha"], x["sha"][:8]), {}).setdefault(x["round"], {})[x["v"]] = x["mean"]
print("| script | before µs/call | after µs/call | after − before, paired by round |")
print("| --- | --: | --: | --: |")
for n, rs in sorted(d.items()):
    rs = [r for r in rs.values() if "old" in r and "new" in r]
    old = [r["old"] for r in rs]; new = [r["new"] for r in rs]; diff = [r["new"] - r["old"] for r in rs]
    f = lambda xs: f"{statistics.median(xs):.1f} ({min(xs):.1f}–{max(xs):.1f})"
    print(f"| {n} | {f(old)} | {f(new)} | {statistics.median(diff):+.1f} ({min(diff):+.1f}…{max(diff):+.1f}) |")
PY
