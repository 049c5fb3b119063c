#!/usr/bin/env bash
# Measures chatq against references (redis-benchmark running the same
# script, the rsmq npm client, redis-cli, redis-cli --pipe) on one local
# redis-server, and prints the tables of docs/performance.md (markdown) on
# stdout.
#
# chatq and its reference take turns (A B, B A, A B, …) for ROUNDS rounds,
# so that the load of a shared machine falls on both alike; each cell gives
# the median and the min–max spread of the rounds, the ratio of the two
# medians with the min–max of the rounds' own ratios, and the server's CPU
# per call (used_cpu_user + used_cpu_sys of INFO cpu, over the run).
#
#   scripts/perf.sh                          # everything (about 8 minutes)
#   QUICK=1 scripts/perf.sh                  # smoke run: every section, small
#   ONLY='queue ack' scripts/perf.sh         # cells whose name matches (grep -E)
#   ROUNDS=5 REQUESTS=50000 PORT=21250 CHATQ_BIN=./chatq scripts/perf.sh
#
# Knobs: ROUNDS (default 3), REQUESTS per cell (default 20000), BULK
# messages for the bulk-load row (default 100000), QUICK=1 (2 rounds of
# 2000 requests, scaling up to 10,000 items, 10,000 bulk messages), ONLY (a
# regular expression matched against "<section> <operation>
# <clients>/<pipeline>", e.g. "bench queue", "rsmq", "oneshot", "bulk",
# "scale", "list pop 50/16"), PORT
# for the redis-server it starts (default: a free port), CHATQ_BIN to use a
# built chatq instead of building one.
#
# Needs redis-server, redis-cli and redis-benchmark (Debian: redis-server,
# redis-tools), Go (for chatq and tools/interleave), and node + `npm ci` in
# testdata/interop/rsmq for the rsmq rows. Nothing is timed against a fixed
# threshold: every figure is a ratio to a reference from the same run.
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS=${ROUNDS:-3}
REQUESTS=${REQUESTS:-20000}
SCALE_SIZES="1000 10000 100000 1000000"
CHAT_SIZES="1 100 1000 10000"
BULK=${BULK:-100000}
if [ "${QUICK:-}" = 1 ]; then
  ROUNDS=2 REQUESTS=2000 SCALE_SIZES="1000 10000" CHAT_SIZES="1 100" BULK=10000
fi
ONLY=${ONLY:-}
. scripts/ownredis.sh
start_own_redis perf.sh

if [ -n "${CHATQ_BIN:-}" ]; then
  bin=$CHATQ_BIN
else
  CGO_ENABLED=0 go build -o "$tmp/chatq" .
  bin=$tmp/chatq
fi
url="redis://127.0.0.1:$port/0"
chatq() { "$bin" --url "$url" "$@"; }
rcli() { redis-cli -p "$port" "$@"; }
want() { [ -z "$ONLY" ] || grep -Eq -- "$ONLY" <<<"$1"; }

# The server's CPU so far, in µs (user + sys).
cpu() { rcli INFO cpu | awk -F: '/^used_cpu_(user|sys):/ { s += $2 } END { printf "%.0f", s * 1e6 }'; }
# median min max of the numbers given.
stats() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%s %s %s", m, v[1], v[NR] }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
# "median (min–max)" of integers.
cell() { read -r m lo hi < <(stats "$@"); printf '%.0f (%.0f–%.0f)' "$m" "$lo" "$hi"; }
med() { read -r m _ _ < <(stats "$@"); printf '%s' "$m"; }
# median of values with one decimal.
med1() { printf '%.1f' "$(med "$@")"; }
# The ratio of the medians of two lists (space-separated), with the min–max
# of the per-round ratios.
ratios() { # "a1 a2 ..." "b1 b2 ..."
  local -a a b r=()
  read -ra a <<<"$1"
  read -ra b <<<"$2"
  for i in "${!a[@]}"; do r+=("$(ratio "${a[$i]}" "${b[$i]}")"); done
  read -r _ lo hi < <(stats "${r[@]}")
  printf '%s (%s–%s)' "$(ratio "$(med "${a[@]}")" "$(med "${b[@]}")")" "$lo" "$hi"
}

# Scripts that write start with internal/base/luascript/permitted.lua (allowed),
# as the packages build them. The queue scripts are then queue.lua and the
# script, as pkg/delayq builds them. The list scripts are state.lua and the
# script, after a line that sets `legacy`, as pkg/shardlist builds them.
permitted=internal/base/luascript/permitted.lua
sha() { rcli SCRIPT LOAD "$(cat "$@")"; }
listsha() { rcli SCRIPT LOAD "$(cat $permitted; echo "local legacy = 'count'"; cat pkg/shardlist/state.lua "$@")"; }

echo "Redis $(redis-server --version | awk '{print $3}' | cut -d= -f2), $(nproc) cores, $(go version | awk '{print $3}'), $REQUESTS requests per cell, $ROUNDS rounds, load average $(cut -d' ' -f1-3 /proc/loadavg) at the start."

# --- chatq bench against redis-benchmark running the same script ---------
# One `chatq bench PATTERN` runs each step of the pattern in turn; the
# reference runs each step's script with redis-benchmark. The server CPU
# columns are per call over the whole pattern (all its steps, setup and
# clean-up included for chatq), so that chatq's figure and the reference's
# count the same calls.
chatq --prefix rb: chat create --from sender --to reader --id 1 >/dev/null
chatq --prefix rb: queue create bench --vt 1h >/dev/null
payload=$(printf 'x%.0s' $(seq 16))
send_sha=$(sha $permitted pkg/chat/send.lua)
fetch_sha=$(sha pkg/chat/fetch.lua)
push_sha=$(listsha pkg/shardlist/push.lua)
pop_sha=$(listsha pkg/shardlist/pop.lua)
qpush_sha=$(sha $permitted pkg/delayq/queue.lua pkg/delayq/push.lua)
qrecv_sha=$(sha $permitted pkg/delayq/queue.lua pkg/delayq/receive.lua)
qack_sha=$(sha $permitted pkg/delayq/queue.lua pkg/delayq/ack.lua)
# The queue scripts take the queue's ZSET and hash (and, for receive and
# ack, chatq's index of received messages, <ns>:<q>:R).
declare -A ref=(
  [ping ping]="PING"
  [chat send]="EVALSHA $send_sha 3 rb:chat:{1} rb:msgs:{1} rb:ids:{1} sender ,\"sender\":\"sender\",\"message\":\"$payload\"} rb:chat:sent 1"
  [chat pending]="EVALSHA $fetch_sha 4 rb:chat:{1} rb:msgs:{1} rb:ids:{1} rb:seen:{reader} reader mark 0 1"
  [list push]="EVALSHA $push_sha 5 rb:{bench}:first rb:{bench}:last rb:{bench}:mid rb:{bench}:size rb:{bench}:ver 512 0 right 100 $payload"
  [list pop]="EVALSHA $pop_sha 5 rb:{bench}:first rb:{bench}:last rb:{bench}:mid rb:{bench}:size rb:{bench}:ver left 1 MARKER 100"
  [queue push]="EVALSHA $qpush_sha 2 rb:rsmq:bench rb:rsmq:bench:Q abcdefghij__rand_int__ default 0 16 $payload rb:rsmq:rt:bench"
  [queue poll]="EVALSHA $qrecv_sha 3 rb:rsmq:bench rb:rsmq:bench:Q rb:rsmq:bench:R 1 3600000 0 none none"
  [queue ack]="EVALSHA $qack_sha 3 rb:rsmq:bench rb:rsmq:bench:Q rb:rsmq:bench:R abcdefghij__rand_int__"
)
# Each reference must run its script without an error (redis-benchmark
# counts error replies as requests).
for op in "${!ref[@]}"; do
  # shellcheck disable=SC2086 # the reference command is split on purpose
  if ! out=$(rcli ${ref[$op]//__rand_int__/000000000001} 2>&1) || grep -q '^ERR\|^WRONGTYPE\|^NOSCRIPT\|^CORRUPT' <<<"$out"; then
    echo "perf.sh: the reference for $op fails: $out" >&2
    exit 1
  fi
done
declare -A steps=([ping]="ping" [chat]="send pending" [list]="push pop" [queue]="push poll ack")

echo
echo "## chatq bench against redis-benchmark running the same script"
echo
echo "| operation | clients | pipeline | chatq ops/s | redis-benchmark ops/s | ratio | server µs/call, chatq | server µs/call, redis-benchmark |"
echo "| --- | --: | --: | --: | --: | --: | --: | --: |"
for pattern in ping chat list queue; do
  for cp in "1 1" "50 1" "50 16"; do
    read -r clients pipeline <<<"$cp"
    cells=()
    for step in ${steps[$pattern]}; do
      want "bench $pattern $step $clients/$pipeline" && cells+=("$step")
    done
    [ ${#cells[@]} -gt 0 ] || continue
    declare -A ours=() theirs=()
    ourcpu=() theircpu=()
    for round in $(seq "$ROUNDS"); do
      for side in $( ((round % 2)) && echo "chatq ref" || echo "ref chatq"); do
        if [ "$side" = chatq ]; then
          c0=$(cpu)
          chatq bench "$pattern" -c "$clients" -P "$pipeline" -n "$REQUESTS" >"$tmp/bench.tsv"
          c1=$(cpu)
          n=$(awk -F'\t' '{ s += $6 } END { print s }' "$tmp/bench.tsv")
          ourcpu+=("$(awk -v c=$((c1 - c0)) -v n="$n" 'BEGIN { printf "%.1f", c / n }')")
          for step in "${cells[@]}"; do
            ours[$step]+="$(awk -F'\t' -v s="$pattern $step" '$1 == s { printf "%.0f", $7 }' "$tmp/bench.tsv") "
          done
        else
          c0=$(cpu) n=0
          for step in ${steps[$pattern]}; do
            # shellcheck disable=SC2086 # the reference command is split on purpose
            ops=$(redis-benchmark -p "$port" -c "$clients" -P "$pipeline" -n "$REQUESTS" -r 1000000 --csv ${ref[$pattern $step]} |
              awk -F'","' 'NR == 2 { printf "%.0f", $(NF - 6) }')
            theirs[$step]+="$ops "
            n=$((n + REQUESTS))
          done
          c1=$(cpu)
          theircpu+=("$(awk -v c=$((c1 - c0)) -v n="$n" 'BEGIN { printf "%.1f", c / n }')")
        fi
      done
    done
    for step in "${cells[@]}"; do
      # shellcheck disable=SC2086 # split on purpose
      echo "| $pattern $step | $clients | $pipeline | $(cell ${ours[$step]}) | $(cell ${theirs[$step]}) | $(ratios "${ours[$step]}" "${theirs[$step]}") | $(med1 "${ourcpu[@]}") | $(med1 "${theircpu[@]}") |"
    done
    unset ours theirs
  done
done
rcli --scan --pattern 'rb:*' | xargs -r redis-cli -p "$port" DEL >/dev/null

echo
echo "The redis-benchmark queue ack acks an id that is not there (it cannot know"
echo "the ids its polls received), which costs the server a little less."

# --- chatq against the rsmq npm client ------------------------------------
if [ -d testdata/interop/rsmq/node_modules ] && want "rsmq"; then
  echo
  echo "## queue: chatq against the rsmq npm client"
  echo
  echo "| step | clients | chatq ops/s | rsmq ops/s | ratio | server µs/call, chatq | server µs/call, rsmq |"
  echo "| --- | --: | --: | --: | --: | --: | --: |"
  n=$((REQUESTS / 5))
  for clients in 1 50; do
    want "rsmq .* $clients" || want "rsmq" || continue
    declare -A ours=() theirs=()
    ourcpu=() theircpu=()
    for round in $(seq "$ROUNDS"); do
      for side in $( ((round % 2)) && echo "chatq ref" || echo "ref chatq"); do
        c0=$(cpu)
        if [ "$side" = chatq ]; then
          chatq bench queue -c "$clients" -n "$n" >"$tmp/chatq.tsv"
          c1=$(cpu)
          ourcpu+=("$(awk -v c=$((c1 - c0)) -v n=$((3 * n)) 'BEGIN { printf "%.1f", c / n }')")
          for step in push poll ack; do
            ours[$step]+="$(awk -F'\t' -v s="queue $step" '$1 == s { printf "%.0f", $7 }' "$tmp/chatq.tsv") "
          done
        else
          node testdata/interop/rsmq/bench.js "$url" rsmqbench "$clients" "$n" 16 >"$tmp/rsmq.jsonl"
          c1=$(cpu)
          theircpu+=("$(awk -v c=$((c1 - c0)) -v n=$((3 * n)) 'BEGIN { printf "%.1f", c / n }')")
          for step in push poll ack; do
            theirs[$step]+="$(grep "\"step\":\"$step\"" "$tmp/rsmq.jsonl" | sed 's/.*"ops_per_sec":\([0-9.]*\).*/\1/' | awk '{ printf "%.0f", $1 }') "
          done
          rcli --scan --pattern 'rsmqbench:*' | xargs -r redis-cli -p "$port" DEL >/dev/null
        fi
      done
    done
    for step in push poll ack; do
      # shellcheck disable=SC2086 # split on purpose
      echo "| $step | $clients | $(cell ${ours[$step]}) | $(cell ${theirs[$step]}) | $(ratios "${ours[$step]}" "${theirs[$step]}") | $(med1 "${ourcpu[@]}") | $(med1 "${theircpu[@]}") |"
    done
    unset ours theirs
  done
  echo
  echo "Server µs/call here is over the three steps of each run (rsmq's"
  echo "receive is two calls, MULTI/TIME and its script, counted as one)."
fi

# --- one command, one process ---------------------------------------------
if want "oneshot"; then
  echo
  echo "## One command, one process: chatq against redis-cli (tools/interleave)"
  echo
  go build -o "$tmp/interleave" ./tools/interleave
  runs=$((ROUNDS * 20))
  echo "| command | chatq ms, median [25th–75th] | redis-cli ms, median [25th–75th] | ratio |"
  echo "| --- | --: | --: | --: |"
  chatq --prefix hf: chat create --from joe --to jeff --id 1 >/dev/null
  chatq --prefix hf: queue create hf >/dev/null
  rows=(
    "ping|$bin --url $url ping|redis-cli -p $port PING"
    "list rpush|$bin --url $url --prefix hf: list rpush k x|redis-cli -p $port EVALSHA $push_sha 5 hf:{k}:first hf:{k}:last hf:{k}:mid hf:{k}:size hf:{k}:ver 512 0 right 100 x"
    "chat send|$bin --url $url --prefix hf: chat send 1 --from joe hi|redis-cli -p $port EVALSHA $send_sha 3 hf:chat:{1} hf:msgs:{1} hf:ids:{1} joe ,\"sender\":\"joe\",\"message\":\"hi\"} hf:chat:sent 1"
    "queue push|$bin --url $url --prefix hf: queue push hf x|redis-cli -p $port EVALSHA $qpush_sha 2 hf:rsmq:hf hf:rsmq:hf:Q abcdefghijabcdefghijab default 0 1 x hf:rsmq:rt:hf"
  )
  for row in "${rows[@]}"; do
    IFS='|' read -r name ours theirs <<<"$row"
    want "oneshot $name" || continue
    "$tmp/interleave" -n "$runs" "$theirs" "$ours" >"$tmp/il.txt"
    # wall MED [P25–P75] ×R ... per command, the reference first.
    python3 - "$name" "$tmp/il.txt" <<'PY'
import re, sys
w = [re.match(r"wall\s+([\d.]+)\s+\[\s*([\d.]+)–\s*([\d.]+)\]\s+×([\d.]+)", l) for l in open(sys.argv[2])]
w = [m.groups() for m in w if m]
print("| %s | %s [%s–%s] | %s [%s–%s] | %s |" % (sys.argv[1], *w[1][:3], *w[0][:3], w[1][3]))
PY
  done
  echo
  echo "$runs runs of each, interleaved; wall time of the whole process."
fi

# --- bulk loads -------------------------------------------------------------
# `queue push --lines` of BULK messages against redis-cli --pipe writing the
# same keys in RSMQ's layout (per message: ZADD of the queue's ZSET, HSET of
# the body into its hash, HINCRBY totalsent), sent as RESP generated ahead
# of time (not timed). Each run starts from an empty queue.
if want "bulk"; then
  echo
  echo "## Bulk loads: queue push --lines against redis-cli --pipe"
  echo
  seq -f 'message number %.0f' 1 "$BULK" >"$tmp/bulk.txt"
  # The ids are 22 characters, as RSMQ's; the visible-at time is fixed.
  LC_ALL=C awk -v z=bk:rsmq:ref -v h=bk:rsmq:ref:Q '
    function bulk(s) { return "$" length(s) "\r\n" s "\r\n" }
    BEGIN { ORS = "" }
    {
      id = sprintf("refid%017d", NR)
      print "*4\r\n" bulk("ZADD") bulk(z) bulk("1700000000000") bulk(id)
      print "*4\r\n" bulk("HSET") bulk(h) bulk(id) bulk($0)
      print "*4\r\n" bulk("HINCRBY") bulk(h) bulk("totalsent") bulk("1")
    }' "$tmp/bulk.txt" >"$tmp/bulk.resp"
  now_ms() { date +%s%3N; }
  ours=() theirs=() ourcpu=() theircpu=()
  for round in $(seq "$ROUNDS"); do
    for side in $( ((round % 2)) && echo "chatq ref" || echo "ref chatq"); do
      rcli DEL bk:rsmq:bulk bk:rsmq:bulk:Q bk:rsmq:ref bk:rsmq:ref:Q >/dev/null
      if [ "$side" = chatq ]; then
        chatq --prefix bk: queue create bulk >/dev/null
        c0=$(cpu) t0=$(now_ms)
        chatq --prefix bk: queue push bulk --lines - <"$tmp/bulk.txt" >/dev/null
        t1=$(now_ms) c1=$(cpu)
        stored=$(rcli ZCARD bk:rsmq:bulk)
        ours+=("$(awk -v t=$((t1 - t0)) 'BEGIN { printf "%.3f", t / 1000 }')")
        ourcpu+=("$(awk -v c=$((c1 - c0)) -v n="$BULK" 'BEGIN { printf "%.1f", c / n }')")
      else
        c0=$(cpu) t0=$(now_ms)
        redis-cli -p "$port" --pipe <"$tmp/bulk.resp" >/dev/null
        t1=$(now_ms) c1=$(cpu)
        stored=$(rcli ZCARD bk:rsmq:ref)
        theirs+=("$(awk -v t=$((t1 - t0)) 'BEGIN { printf "%.3f", t / 1000 }')")
        theircpu+=("$(awk -v c=$((c1 - c0)) -v n="$BULK" 'BEGIN { printf "%.1f", c / n }')")
      fi
      if [ "$stored" != "$BULK" ]; then
        echo "perf.sh: bulk: $side stored $stored of $BULK messages" >&2
        exit 1
      fi
    done
  done
  rcli DEL bk:rsmq:bulk bk:rsmq:bulk:Q bk:rsmq:ref bk:rsmq:ref:Q >/dev/null
  s3() { read -r m lo hi < <(stats "$@"); printf '%.2f (%.2f–%.2f)' "$m" "$lo" "$hi"; }
  echo "| messages | chatq s | redis-cli --pipe s | ratio | chatq msg/s | redis-cli msg/s | server µs/msg, chatq | server µs/msg, redis-cli |"
  echo "| --: | --: | --: | --: | --: | --: | --: | --: |"
  echo "| $BULK | $(s3 "${ours[@]}") | $(s3 "${theirs[@]}") | $(ratios "${ours[*]}" "${theirs[*]}") | $(awk -v n="$BULK" -v t="$(med "${ours[@]}")" 'BEGIN { printf "%.0f", n / t }') | $(awk -v n="$BULK" -v t="$(med "${theirs[@]}")" 'BEGIN { printf "%.0f", n / t }') | $(med1 "${ourcpu[@]}") | $(med1 "${theircpu[@]}") |"
  echo
  echo "Wall time of the whole process, chatq's start-up and its queue check"
  echo "included; $ROUNDS rounds, interleaved. redis-cli sends three commands per"
  echo "message (RSMQ's layout, no script); chatq one script call per 100."
fi

# --- scaling with stored data ---------------------------------------------
if want "scale"; then
  echo
  echo "## Scaling with stored data (one client, one run each)"
  echo
  echo "| operation | stored | p50 ms | p99 ms |"
  echo "| --- | --: | --: | --: |"
  scale() { # pattern step preload requests
    chatq bench "$1" -c 1 -n "$4" --preload "$3" |
      awk -F'\t' -v s="$1 $2" -v n="$3" '$1 == s { printf "| %s | %s | %s | %s |\n", s, n, $8, $9 }'
  }
  for k in $CHAT_SIZES; do scale chat pending "$k" 200; done
  for n in $SCALE_SIZES; do scale queue poll "$n" 5000; done
  for n in $SCALE_SIZES; do scale list pop "$n" 5000; done
  for n in $SCALE_SIZES; do scale list push "$n" 5000; done
fi
