#!/usr/bin/env bash
# callgrind.sh [REF...] -- ARGS...: the instructions (valgrind --tool=callgrind,
# Ir) that `chatq ARGS` executes, for chatq built at each git REF (default:
# main and the work tree), ROUNDS times each (default 15), interleaved, with
# the median, min and max per build. Instruction counts do not depend on the
# machine's load; they vary by a few percent from run to run (map seeds,
# the scheduler), hence the rounds. GOMAXPROCS=1 and no async preemption
# keep callgrind working and the counts steadier. A server: CHATQ_URL.
#   CHATQ_URL=redis://127.0.0.1:6379/0 scripts/callgrind.sh main WORKTREE -- ping
set -euo pipefail
cd "$(dirname "$0")/.."
refs=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do refs+=("$1"); shift; done
[ "${1:-}" = "--" ] && shift
args=("$@")
[ ${#args[@]} -gt 0 ] || args=(ping)
[ ${#refs[@]} -gt 0 ] || refs=(main WORKTREE)
rounds=${ROUNDS:-15}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
bins=()
for ref in "${refs[@]}"; do
  bin="$dir/chatq-${ref//\//_}"
  if [ "$ref" = WORKTREE ]; then
    go build -o "$bin" .
  else
    mkdir -p "$dir/src-$ref" && git archive "$ref" | tar -x -C "$dir/src-$ref"
    (cd "$dir/src-$ref" && go build -o "$bin" .)
  fi
  bins+=("$bin")
done
for r in $(seq "$rounds"); do
  for b in "${bins[@]}"; do
    GOMAXPROCS=1 GODEBUG=asyncpreemptoff=1 valgrind --tool=callgrind --callgrind-out-file="$dir/out" \
      "$b" "${args[@]}" >/dev/null 2>&1 || true
    echo "$(basename "$b") $(awk '/^summary:/ {print $2}' "$dir/out")" >>"$dir/counts"
  done
done
for b in "${bins[@]}"; do
  n=$(basename "$b")
  awk -v n="$n" '$1 == n {print $2}' "$dir/counts" | sort -n | awk -v n="$n" \
    '{a[NR]=$1} END {m = (NR % 2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2; printf "%s: median %d, min %d, max %d (%d runs)\n", n, m, a[1], a[NR], NR}'
done
