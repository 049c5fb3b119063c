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
sha() { rcli SCRIPT LOAD "$(cat "$@")"; }
# The list scripts are state.lua and the script, after a line that sets
# `legacy`, as pkg/shardlist builds them.
listsha() { rcli SCRIPT LOAD "local legacy = 'count'
$(cat pkg/shardlist/state.lua "$@")"; }
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
push_sha=$(listsha pkg/shardlist/push.lua)
pop_sha=$(listsha pkg/shardlist/pop.lua)
qpush_sha=$(sha pkg/delayq/push.lua)
qrecv_sha=$(sha pkg/delayq/receive.lua)
qack_sha=$(sha pkg/delayq/ack.lua)
chatq --prefix rb: queue create bench --vt 1h >/dev/null
declare -A ref=(
  [ping ping]="PING"
  [chat send]="EVALSHA $send_sha 3 rb:chat:{1} rb:msgs:{1} rb:ids:{1} sender ,\"sender\":\"sender\",\"message\":\"$payload\"} rb:chat:sent 1"
  [chat pending]="EVALSHA $fetch_sha 4 rb:chat:{1} rb:msgs:{1} rb:ids:{1} rb:seen:{reader} reader mark 0 1"
  [list push]="EVALSHA $push_sha 5 rb:{bench}:first rb:{bench}:last rb:{bench}:mid rb:{bench}:size rb:{bench}:ver 512 0 right 100 $payload"
  [list pop]="EVALSHA $pop_sha 5 rb:{bench}:first rb:{bench}:last rb:{bench}:mid rb:{bench}:size rb:{bench}:ver left 1 MARKER 100"
  [queue push]="EVALSHA $qpush_sha 2 rb:rsmq:bench rb:rsmq:bench:Q abcdefghij__rand_int__ default 0 16 $payload rb:rsmq:rt:bench"
  [queue poll]="EVALSHA $qrecv_sha 2 rb:rsmq:bench rb:rsmq:bench:Q 1 3600000 0 none none"
  [queue ack]="EVALSHA $qack_sha 2 rb:rsmq:bench rb:rsmq:bench:Q abcdefghij__rand_int__"
)
for op in "ping ping" "chat send" "chat pending" "list push" "list pop" "queue push" "queue poll" "queue ack"; do
  for cp in "1 1" "50 1" "50 16"; do
    read -r clients pipeline <<<"$cp"
    read -r pattern step <<<"$op"
    ours=$(bench_ops "$pattern" "$step" "$clients" "$pipeline")
    # shellcheck disable=SC2086 # the reference command is split on purpose
    theirs=$(rb_ops "$clients" "$pipeline" -r 1000000 ${ref[$op]})
    echo "| $op | $clients | $pipeline | $ours | $theirs | $(ratio "$ours" "$theirs") |"
  done
done
rcli --scan --pattern 'rb:*' | xargs -r redis-cli -p "$port" DEL >/dev/null

echo
echo "The redis-benchmark queue ack acks an id that is not there (it cannot know"
echo "the ids its polls received), which costs the server a little less."

if [ -d testdata/interop/rsmq/node_modules ]; then
  echo
  echo "## queue: chatq against the rsmq npm client"
  echo
  echo "| step | clients | chatq ops/s | rsmq ops/s | ratio |"
  echo "| --- | --: | --: | --: | --: |"
  for clients in 1 50; do
    n=$((REQUESTS / 5))
    node testdata/interop/rsmq/bench.js "$url" rsmqbench "$clients" "$n" 16 >"$tmp/rsmq.jsonl"
    chatq bench queue -c "$clients" -n "$n" >"$tmp/chatq.tsv"
    for step in push poll ack; do
      ours=$(awk -F'\t' -v s="queue $step" '$1 == s { printf "%.0f", $7 }' "$tmp/chatq.tsv")
      theirs=$(grep "\"step\":\"$step\"" "$tmp/rsmq.jsonl" | sed 's/.*"ops_per_sec":\([0-9.]*\).*/\1/' | awk '{ printf "%.0f", $1 }')
      echo "| $step | $clients | $ours | $theirs | $(ratio "$ours" "$theirs") |"
    done
  done
fi

if command -v hyperfine >/dev/null; then
  echo
  echo "## One command, one process: chatq against redis-cli (median wall time)"
  echo
  echo "| command | chatq ms | redis-cli ms | ratio |"
  echo "| --- | --: | --: | --: |"
  chatq --prefix hf: chat create --from joe --to jeff --id 1 >/dev/null
  chatq --prefix hf: queue create hf >/dev/null
  rows=(
    "ping|$tmp/chatq --url $url ping|redis-cli -p $port PING"
    "list rpush|$tmp/chatq --url $url --prefix hf: list rpush k x|redis-cli -p $port EVALSHA $push_sha 5 hf:{k}:first hf:{k}:last hf:{k}:mid hf:{k}:size hf:{k}:ver 512 0 right 100 x"
    "chat send|$tmp/chatq --url $url --prefix hf: chat send 1 --from joe hi|redis-cli -p $port EVALSHA $send_sha 3 hf:chat:{1} hf:msgs:{1} hf:ids:{1} joe ,\"sender\":\"joe\",\"message\":\"hi\"} hf:chat:sent 1"
    "queue push|$tmp/chatq --url $url --prefix hf: queue push hf x|redis-cli -p $port EVALSHA $qpush_sha 2 hf:rsmq:hf hf:rsmq:hf:Q abcdefghijabcdefghijab default 0 1 x hf:rsmq:rt:hf"
  )
  for row in "${rows[@]}"; do
    IFS='|' read -r name ours theirs <<<"$row"
    hyperfine -N --warmup 10 --runs 200 --export-json "$tmp/hf.json" "$ours" "$theirs" >/dev/null 2>&1
    read -r a b < <(python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["results"]; print(r[0]["median"]*1000, r[1]["median"]*1000)' "$tmp/hf.json")
    printf '| %s | %.2f | %.2f | %s |\n' "$name" "$a" "$b" "$(ratio "$a" "$b")"
  done
fi

echo
echo "## Scaling with stored data (one client, median latency)"
echo
echo "| operation | stored | p50 ms | p99 ms |"
echo "| --- | --: | --: | --: |"
scale() { # pattern step preload requests
  chatq bench "$1" -c 1 -n "$4" --preload "$3" |
    awk -F'\t' -v s="$1 $2" -v n="$3" '$1 == s { printf "| %s | %s | %s | %s |\n", s, n, $8, $9 }'
}
for k in 1 100 1000 10000; do scale chat pending "$k" 200; done
for n in 1000 10000 100000 1000000; do scale queue poll "$n" 5000; done
for n in 1000 10000 100000 1000000; do scale list pop "$n" 5000; done
for n in 1000 10000 100000 1000000; do scale list push "$n" 5000; done
