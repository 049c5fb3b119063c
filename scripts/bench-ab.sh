#!/usr/bin/env bash
# bench-ab.sh: `chatq bench` throughput of two chatq binaries side by side:
# A (before) and B (after), interleaved A B, B A, … (the order swapped every
# round) against one redis-server, for each pattern given. It prints, for
# each step, the median ops/s of A and of B over the rounds, and the median
# of the per-round ratios B/A with their spread (min–max).
#
#   scripts/bench-ab.sh OLD_CHATQ NEW_CHATQ REDIS_URL [ROUNDS] [PATTERN...]
#   scripts/bench-ab.sh /tmp/chatq-before ./chatq redis://127.0.0.1:6379 10 queue list chat
#
# BENCH_ARGS adds flags to every run (default: --clients 10 --requests 5000).
# Use a server of your own: each run writes under chatq-bench: and deletes
# its keys after.
set -euo pipefail
usage='usage: bench-ab.sh OLD_CHATQ NEW_CHATQ REDIS_URL [ROUNDS] [PATTERN...]'
a=${1:?$usage} b=${2:?$usage} url=${3:?$usage}
rounds=${4:-10}
shift $(($# < 4 ? $# : 4))
patterns=("$@")
[ ${#patterns[@]} -gt 0 ] || patterns=(queue list chat)
read -r -a extra <<<"${BENCH_ARGS:---clients 10 --requests 5000}"
for bin in "$a" "$b"; do
	[ -x "$bin" ] || { echo "bench-ab: error: $bin is not an executable chatq" >&2; exit 2; }
done
runs=$(mktemp)
trap 'rm -f "$runs"' EXIT
run() { # binary label round pattern
	"$1" --url "$url" -o json bench "$4" "${extra[@]}" |
		jq -r --arg who "$2" --arg r "$3" '.[] | [$who, $r, .pattern + "/" + .step, .ops_per_sec] | @tsv'
}
for r in $(seq "$rounds"); do
	for p in "${patterns[@]}"; do
		if ((r % 2)); then run "$a" A "$r" "$p"; run "$b" B "$r" "$p"; else run "$b" B "$r" "$p"; run "$a" A "$r" "$p"; fi
	done
done >"$runs"
[ -s "$runs" ] || { echo "bench-ab: error: no bench output" >&2; exit 1; }
echo "$rounds rounds, interleaved, ${extra[*]}; median [min–max]"
printf '%-14s %-16s %-16s %s\n' step 'A ops/s' 'B ops/s' 'B/A'
python3 - "$runs" <<'PY'
import sys, statistics, collections
ops = collections.defaultdict(dict)
for line in open(sys.argv[1]):
    who, r, step, v = line.split("\t")
    ops[step].setdefault(who, {})[r] = float(v)
for step, by in sorted(ops.items()):
    a, b = by.get("A", {}), by.get("B", {})
    ratios = sorted(b[r] / a[r] for r in a if r in b and a[r] > 0)
    if not ratios:
        continue
    print(f"{step:<14} {statistics.median(a.values()):<16.0f} {statistics.median(b.values()):<16.0f} "
          f"{statistics.median(ratios):.3f} [{ratios[0]:.3f}–{ratios[-1]:.3f}]")
PY
