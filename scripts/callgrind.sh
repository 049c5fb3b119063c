#!/usr/bin/env bash
# callgrind.sh [REF...] -- ARGS...: the instructions (valgrind --tool=callgrind,
# Ir) that `chatq ARGS` executes, for chatq built at each git REF (default:
# main and the work tree; a path to a built binary is taken as it is),
# ROUNDS times each (default 15), interleaved, with
# the median, min and max per build. Instruction counts do not depend on the
# machine's load; they vary by a few percent from run to run (map seeds,
# the scheduler), hence the rounds. GOMAXPROCS=1 and no async preemption
# keep callgrind working and the counts steadier. A server: CHATQ_URL.
# REFERENCE, when set, is a command counted too, in each round (redis-cli
# doing the same as chatq ARGS), and the binaries' sizes are printed.
#   CHATQ_URL=redis://127.0.0.1:6379/0 scripts/callgrind.sh main WORKTREE -- ping
#   REFERENCE='redis-cli -p 6379 ping' CHATQ_URL=… scripts/callgrind.sh main WORKTREE -- ping
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
  if [ -f "$ref" ] && [ -x "$ref" ]; then
    cp "$ref" "$bin" # a binary built already
  elif [ "$ref" = WORKTREE ]; then
    go build -o "$bin" .
  else
    mkdir -p "$dir/src-$ref" && git archive "$ref" | tar -x -C "$dir/src-$ref"
    (cd "$dir/src-$ref" && go build -o "$bin" .)
  fi
  bins+=("$bin")
done
names=()
for b in "${bins[@]}"; do names+=("$(basename "$b")"); done
[ -z "${REFERENCE:-}" ] || names+=(reference)
for r in $(seq "$rounds"); do
  for b in "${bins[@]}"; do
    # A run that fails is not counted: valgrind stops some runs on an
    # instruction it does not know (RDTSCP, in the kernel's vDSO clock on
    # some machines), and a crash's traceback counts millions more.
    if GOMAXPROCS=1 GODEBUG=asyncpreemptoff=1 valgrind --tool=callgrind --callgrind-out-file="$dir/out" \
      "$b" "${args[@]}" >/dev/null 2>&1; then
      echo "$(basename "$b") $(awk '/^summary:/ {print $2}' "$dir/out")" >>"$dir/counts"
    else
      echo "$(basename "$b") failed" >>"$dir/failed"
    fi
  done
  if [ -n "${REFERENCE:-}" ]; then
    # shellcheck disable=SC2086 # REFERENCE is a command line
    if valgrind --tool=callgrind --callgrind-out-file="$dir/out" $REFERENCE >/dev/null 2>&1; then
      echo "reference $(awk '/^summary:/ {print $2}' "$dir/out")" >>"$dir/counts"
    else
      echo "reference failed" >>"$dir/failed"
    fi
  fi
done
for b in "${bins[@]}"; do
  echo "$(basename "$b"): $(stat -c %s "$b") bytes"
done
for n in "${names[@]}"; do
  echo "$n: $(awk -v n="$n" '$1 == n' "$dir/failed" 2>/dev/null | wc -l) runs failed, not counted; counts: $(awk -v n="$n" '$1 == n {printf "%s ", $2}' "$dir/counts")"
  awk -v n="$n" '$1 == n {print $2}' "$dir/counts" | sort -n | awk -v n="$n" \
    '{a[NR]=$1} END {m = (NR % 2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2; printf "%s: median %d, min %d, max %d (%d runs)\n", n, m, a[1], a[NR], NR}'
done
