#!/usr/bin/env bash
# Measures chatq against Redis itself, in one run on one local redis-server,
# and prints the tables of docs/performance.md (markdown) on stdout.
#
#   scripts/perf.sh            # everything (several minutes)
#   REQUESTS=20000 scripts/perf.sh
#
# Needs redis-server, redis-cli and redis-benchmark (Debian: redis-server,
# redis-tools), hyperfine for the process timings, and node + npm ci in
# testdata/interop/rsmq for the rsmq comparison. Nothing is timed against a
# fixed threshold: every figure is a ratio to a reference from the same run.
set -euo pipefail
cd "$(dirname "$0")/.."

REQUESTS=${REQUESTS:-50000}
tmp=$(mktemp -d)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
redis-server --bind 127.0.0.1 --port "$port" --save '' --appendonly no --dir "$tmp" --daemonize no --logfile "$tmp/redis.log" &
redis_pid=$!
trap 'kill $redis_pid 2>/dev/null; wait $redis_pid 2>/dev/null; rm -rf "$tmp"' EXIT
for _ in $(seq 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done

go build -o "$tmp/chatq" .
url="redis://127.0.0.1:$port/0"
chatq() { "$tmp/chatq" --url "$url" "$@"; }
rcli() { redis-cli -p "$port" "$@"; }

# ops/s of one `chatq bench` step (tab-separated output: STEP ... OPS/S is column 7).
bench_ops() { # pattern step clients pipeline [extra flags]
  local pattern=$1 step=$2 clients=$3 pipeline=$4; shift 4
  chatq bench "$pattern" -c "$clients" -P "$pipeline" -n "$REQUESTS" "$@" |
    awk -F'\t' -v s="$pattern $step" '$1 == s { printf "%.0f", $7 }'
}
# requests per second of one redis-benchmark command.
rb_ops() { # clients pipeline command...
  local clients=$1 pipeline=$2; shift 2
  redis-benchmark -p "$port" -c "$clients" -P "$pipeline" -n "$REQUESTS" --csv "$@" |
    awk -F'","' 'NR == 2 { printf "%.0f", $(NF - 6) }'
}
sha() { rcli SCRIPT LOAD "$(cat "$1")"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

echo "Redis $(redis-server --version | awk '{print $3}' | cut -d= -f2), $(nproc) cores, $(go version | awk '{print $3}'), $REQUESTS requests per cell."
echo
echo "## chatq bench against redis-benchmark running the same script"
echo
echo "| operation | clients | pipeline | chatq ops/s | redis-benchmark ops/s | ratio |"
echo "| --- | --: | --: | --: | --: | --: |"

# The reference state for redis-benchmark: chat 1 with a sender and a reader,
# and an empty list, under the prefix rb:.
chatq --prefix rb: chat create --from sender --to reader --id 1 >/dev/null
payload=$(printf 'x%.0s' $(seq 16))
send_sha=$(sha pkg/chat/send.lua)
fetch_sha=$(sha pkg/chat/fetch.lua)
push_sha=$(sha pkg/shardlist/push.lua)
pop_sha=$(sha pkg/shardlist/pop.lua)
declare -A ref=(
  [ping ping]="PING"
  [chat send]="EVALSHA $send_sha 3 rb:chat:{1} rb:msgs:{1} rb:ids:{1} sender ,\"sender\":\"sender\",\"message\":\"$payload\"} rb:chat:sent 1"
  [chat pending]="EVALSHA $fetch_sha 3 rb:chat:{1} rb:msgs:{1} rb:ids:{1} reader mark 0"
  [list push]="EVALSHA $push_sha 2 rb:{bench}:first rb:{bench}:last right 512 MARKER $payload"
  [list pop]="EVALSHA $pop_sha 2 rb:{bench}:first rb:{bench}:last left 1 MARKER"
)
for op in "ping ping" "chat send" "chat pending" "list push" "list pop"; do
  for cp in "1 1" "50 1" "50 16"; do
    read -r clients pipeline <<<"$cp"
    read -r pattern step <<<"$op"
    ours=$(bench_ops "$pattern" "$step" "$clients" "$pipeline")
    # shellcheck disable=SC2086 # the reference command is split on purpose
    theirs=$(rb_ops "$clients" "$pipeline" ${ref[$op]})
    echo "| $op | $clients | $pipeline | $ours | $theirs | $(ratio "$ours" "$theirs") |"
  done
done
rcli --scan --pattern 'rb:*' | xargs -r redis-cli -p "$port" DEL >/dev/null
