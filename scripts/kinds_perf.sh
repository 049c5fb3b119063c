#!/usr/bin/env bash
# kinds_perf.sh [JOBS]: measures what issue 33 asks of the queue kinds, on a
# fresh redis-server of its own (a free loopback port, no persistence):
#
#  1. `chatq queue ls -l` over 1,000 queues of mixed kinds (250 each of
#     RSMQ's, BullMQ's, asynq's and stream groups): its server calls (from
#     SLOWLOG, every call logged), the longest, and its wall time;
#  2. `chatq queue peek bullmq:big --grep NEEDLE -n 1` against
#     `chatq queue export bullmq:big` over JOBS (default 1,000,000) waiting
#     BullMQ jobs, run interleaved (A B A B …, 5 each), with the ratio of
#     the medians and the spread.
#
# It prints Markdown; docs/performance.md has a run's figures.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${1:-1000000}
dir=$(mktemp -d)
pid=
cleanup() {
  [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true
  rm -rf "$dir"
}
trap cleanup EXIT INT TERM

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
redis-server --bind 127.0.0.1 --port "$port" --save '' --appendonly no --dir "$dir" \
  --logfile "$dir/redis.log" --daemonize no &
pid=$!
for _ in $(seq 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
CGO_ENABLED=0 go build -o "$dir/chatq" .
export CHATQ_URL="redis://127.0.0.1:$port/0"
chatq() { "$dir/chatq" "$@"; }
cli() { redis-cli -p "$port" "$@"; }

# RESP for redis-cli --pipe, from lines of tab-separated arguments.
resp() {
  python3 -c '
import sys
out = sys.stdout.buffer
for line in sys.stdin.buffer:
    args = line.rstrip(b"\n").split(b"\t")
    out.write(b"*%d\r\n" % len(args))
    for a in args:
        out.write(b"$%d\r\n%s\r\n" % (len(a), a))
'
}

# 1,000 queues of four kinds, each with a few jobs.
now=$(date +%s%3N)
{
  for i in $(seq -w 0 249); do
    printf 'SADD\trsmq:QUEUES\tq%s\n' "$i"
    printf 'HSET\trsmq:q%s:Q\tvt\t30\tdelay\t0\tmaxsize\t65536\tcreated\t1\tmodified\t1\ttotalrecv\t0\ttotalsent\t1\n' "$i"
    printf 'ZADD\trsmq:q%s\t%s\tm%s\n' "$i" "$now" "$i"
    printf 'HSET\tbull:b%s:meta\tversion\tbullmq:6.7.0\topts.maxLenEvents\t10000\n' "$i"
    printf 'LPUSH\tbull:b%s:wait\t1\n' "$i"
    printf 'HSET\tbull:b%s:1\tname\tsend\tdata\t{}\ttimestamp\t%s\n' "$i" "$now"
    printf 'SADD\tasynq:queues\ta%s\n' "$i"
    printf 'XADD\ts%s\t*\tk\tv\n' "$i"
    printf 'XGROUP\tCREATE\ts%s\tg\t0\n' "$i"
  done
} | resp | cli --pipe >/dev/null
cli config set slowlog-log-slower-than 0 >/dev/null
cli config set slowlog-max-len 1000000 >/dev/null
cli slowlog reset >/dev/null
start=$(date +%s%N)
n=$(chatq queue ls -l -o json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')
took=$(( ($(date +%s%N) - start) / 1000000 ))
calls=$(cli slowlog len)
worst=$(cli --raw eval 'local m=0 for _,e in ipairs(redis.call("SLOWLOG","GET",-1)) do if e[3]>m then m=e[3] end end return m' 0)
cli config set slowlog-log-slower-than 10000 >/dev/null
echo "## queue ls -l over 1,000 queues of mixed kinds"
echo
echo "| queues listed | server calls | longest call (µs) | wall time (ms) |"
echo "| --- | --- | --- | --- |"
echo "| $n | $calls | $worst | $took |"
echo

# JOBS waiting BullMQ jobs; one holds the needle, in the middle.
python3 - "$jobs" "$now" <<'PY' | resp | cli --pipe >/dev/null
import sys
n, now = int(sys.argv[1]), sys.argv[2]
w = sys.stdout.write
w("HSET\tbull:big:meta\tversion\tbullmq:6.7.0\topts.maxLenEvents\t10000\n")
for i in range(n):
    data = '{"to":"user%d@example.com","subject":"Your order %d has shipped","n":%d}' % (i, i, i)
    if i == n // 2:
        data = '{"note":"needle-in-haystack"}'
    w("HSET\tbull:big:%d\tname\tsend\tdata\t%s\ttimestamp\t%s\tatm\t0\n" % (i + 1, data, now))
    w("LPUSH\tbull:big:wait\t%d\n" % (i + 1))
PY
run() { # prints ms
  local s; s=$(date +%s%N); "$@" >/dev/null; echo $(( ($(date +%s%N) - s) / 1000000 ))
}
ex=(); gr=()
for _ in 1 2 3 4 5; do
  ex+=("$(run chatq queue export bullmq:big)")
  gr+=("$(run chatq queue peek bullmq:big --grep needle-in-haystack -n 1)")
done
python3 - "${ex[*]}" "${gr[*]}" "$jobs" <<'PY'
import sys, statistics as st
ex = [int(x) for x in sys.argv[1].split()]
gr = [int(x) for x in sys.argv[2].split()]
n = int(sys.argv[3])
print(f"## peek --grep against export over {n:,} waiting BullMQ jobs (5 runs each, interleaved)")
print()
print("| command | median (ms) | min–max (ms) |")
print("| --- | --- | --- |")
print(f"| export | {st.median(ex):.0f} | {min(ex)}–{max(ex)} |")
print(f"| peek --grep -n 1 | {st.median(gr):.0f} | {min(gr)}–{max(gr)} |")
print()
print(f"ratio of the medians (grep / export): {st.median(gr)/st.median(ex):.2f}; "
      f"range over the pairs: {min(g/e for g, e in zip(gr, ex)):.2f}–{max(g/e for g, e in zip(gr, ex)):.2f}")
PY
