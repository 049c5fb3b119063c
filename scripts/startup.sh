#!/usr/bin/env bash
# startup.sh: what one `chatq ping` process costs against redis-cli doing
# the same, and against the Go floor under it (docs/performance.md,
# "Start-up"). It starts a redis-server on a free loopback port (PORT= to
# choose), builds chatq and three floor programs with CGO_ENABLED=0, and
# prints for each: the binary's size, user-space instructions (callgrind,
# the median of ROUNDS runs; independent of the machine's load), page
# faults and context switches (perf stat, when there is one), the
# allocations its packages' inits make (GODEBUG=inittrace=1), then
# tools/interleave's wall and CPU times, N rounds (default 60), RUNS times
# (default 3), with `uptime` before each run.
#
#   scripts/startup.sh
#   CHATQ_BIN=/tmp/chatq ROUNDS=7 N=100 RUNS=5 scripts/startup.sh
#
# The floors: pingfloor (go-redis: HELLO, PING, print; tools/pingfloor),
# pingfloor -signals (the same with Ctrl-C/SIGTERM caught as chatq's Main
# does), and pingfloor-deps (that, with every third-party package chatq
# links imported for its init: what the dependencies cost at start-up
# without a line of chatq's own code). Needs redis-server, redis-cli, Go,
# valgrind; perf is optional.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-5}
N=${N:-60}
RUNS=${RUNS:-3}
dir=$(mktemp -d)
gen=""
cleanup() {
  [ -z "${pid:-}" ] || kill "$pid" 2>/dev/null || true
  [ -z "$gen" ] || rm -rf "$gen"
  rm -rf "$dir"
}
trap cleanup EXIT

export CGO_ENABLED=0
if [ -n "${CHATQ_BIN:-}" ]; then cp "$CHATQ_BIN" "$dir/chatq"; else go build -o "$dir/chatq" .; fi
go build -o "$dir/pingfloor" ./tools/pingfloor
go build -o "$dir/interleave" ./tools/interleave
# pingfloor-deps: pingfloor plus a blank import of every third-party
# package chatq links (their internal packages come with them).
gen=$(mktemp -d "$PWD/tools/startup-deps-XXXX")
cp tools/pingfloor/main.go "$gen/"
{
  echo "package main"
  echo "import ("
  go list -deps -f '{{if not .Standard}}{{.ImportPath}}{{end}}' . |
    grep -v '^github.com/chatq-dev/chatq' | grep -v '/internal\(/\|$\)' | sed 's/.*/\t_ "&"/'
  echo ")"
} >"$gen/deps.go"
go build -o "$dir/pingfloor-deps" "./tools/$(basename "$gen")"
rm -rf "$gen"
gen=""

port=${PORT:-$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')}
redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no >/dev/null &
pid=$!
for _ in $(seq 50); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
url="redis://127.0.0.1:$port/0"

cmds=("redis-cli -p $port ping" "$dir/pingfloor $url" "$dir/pingfloor -signals $url"
  "$dir/pingfloor-deps -signals $url" "$dir/chatq -u $url ping" "$dir/chatq version")
echo "# $(go version | cut -d' ' -f3), $(nproc) cores, redis-server $(redis-server --version | sed 's/.*v=\([^ ]*\).*/\1/')"
echo
echo "| command | binary bytes | instructions (median, min–max) | page faults | context switches | init allocs |"
echo "| --- | --: | --: | --: | --: | --: |"
for c in "${cmds[@]}"; do
  # shellcheck disable=SC2086 # c is a command line
  set -- $c
  size=""
  [ "$1" = redis-cli ] || size=$(stat -c %s "$1")
  counts=()
  for _ in $(seq "$ROUNDS"); do
    # valgrind stops some runs of a Go binary on RDTSCP (scripts/callgrind.sh):
    # such a run is tried again, up to 10 times.
    for _ in $(seq 10); do
      if GOMAXPROCS=1 GODEBUG=asyncpreemptoff=1 valgrind --tool=callgrind --callgrind-out-file="$dir/cg" "$@" >/dev/null 2>&1; then
        counts+=("$(awk '/^summary:/ {print $2}' "$dir/cg")")
        break
      fi
    done
  done
  ins=$(printf '%s\n' "${counts[@]}" | sort -n | awk '{a[NR]=$1} END {printf "%d (%d–%d)", a[int((NR+1)/2)], a[1], a[NR]}')
  faults="" switches=""
  if command -v perf >/dev/null; then
    read -r faults switches < <(perf stat -x, -r 10 -e page-faults,context-switches "$@" 2>&1 >/dev/null |
      awk -F, '$3 == "page-faults" {f=$1} $3 == "context-switches" {s=$1} END {print f, s}')
  fi
  allocs=""
  [ "$1" = redis-cli ] || allocs=$(GODEBUG=inittrace=1 "$@" 2>&1 >/dev/null | awk '/^init / {a += $10} END {print a}')
  echo "| \`${c//$dir\//}\` | $size | $ins | $faults | $switches | $allocs |"
done
echo
for r in $(seq "$RUNS"); do
  echo "run $r: $(uptime | sed 's/.*load/load/')"
  "$dir/interleave" -n "$N" "${cmds[@]}" | sed "s|$dir/||g"
  echo
done
