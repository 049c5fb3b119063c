#!/usr/bin/env bash
# search.sh [N]: how long a search of an N-message queue takes (default
# 1,000,000) against `chatq queue export` of the same queue, on a
# redis-server of its own, and how much server time each call takes.
#
# The queue is written in RSMQ's layout with redis-cli --pipe (N ready
# messages of about 60 bytes, {"order":K,...}; one of them holds order
# 4711). Then tools/interleave runs, in turn, ROUNDS times (default 5):
#
#   export            chatq queue export big                      (the reference)
#   peek --grep       chatq queue peek big --grep '"order":4711,' (walks all: one match)
#   export --grep     chatq queue export big --grep '"order":4711,'
#   peek --regexp     chatq queue peek big --grep '"order":4711[,}]' --regexp
#   export --regexp   chatq queue export big --grep '"order":4711[,}]' --regexp
#
# and prints each one's median wall time with its spread and its ratio to
# export's median. Then each runs once more between CONFIG RESETSTAT and
# INFO commandstats, for the server time per call (EVALSHA's usec_per_call)
# and the number of calls.
#
#   scripts/search.sh              # 1,000,000 messages, 5 rounds
#   ROUNDS=3 scripts/search.sh 100000
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-1000000}
ROUNDS=${ROUNDS:-5}
. scripts/ownredis.sh
start_own_redis search.sh

CGO_ENABLED=0 go build -o "$tmp/chatq" .
go build -o "$tmp/interleave" ./tools/interleave
url="redis://127.0.0.1:$port/0"
chatq() { "$tmp/chatq" --url "$url" "$@"; }

chatq queue create big >/dev/null
# N messages in RSMQ's layout: ids of the current time in base 36 and 22
# characters, due now, bodies with an order number.
python3 - "$n" >"$tmp/fill.resp" <<'PY'
import sys, time
n = int(sys.argv[1])
digits = "0123456789abcdefghijklmnopqrstuvwxyz"
def b36(x):
    s = ""
    while x:
        x, r = divmod(x, 36)
        s = digits[r] + s
    return s.rjust(10, "0")
def cmd(*args):
    out = ["*%d\r\n" % len(args)]
    for a in args:
        a = str(a).encode()
        out.append("$%d\r\n" % len(a))
        out.append(a.decode() + "\r\n")
    return "".join(out)
now = int(time.time() * 1e6) - n
ms = now // 1000
w = sys.stdout.write
for k in range(n):
    mid = b36(now + k) + ("%022d" % k)
    w(cmd("ZADD", "rsmq:big", ms, mid))
    w(cmd("HSET", "rsmq:big:Q", mid, '{"order":%d,"customer":"c%d","note":"paid"}' % (k, k % 977)))
w(cmd("HSET", "rsmq:big:Q", "totalsent", n))
PY
redis-cli -p "$port" --pipe <"$tmp/fill.resp" >/dev/null
echo "search.sh: $(redis-cli -p "$port" ZCARD rsmq:big) messages; Redis $(redis-server --version | awk '{print $3}' | cut -d= -f2), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2

q='"order":4711,'
re='"order":4711[,}]'
cmds=(
  "$tmp/chatq --url $url queue export big"
  "$tmp/chatq --url $url queue peek big --grep $q"
  "$tmp/chatq --url $url queue export big --grep $q"
  "$tmp/chatq --url $url queue peek big --grep $re --regexp"
  "$tmp/chatq --url $url queue export big --grep $re --regexp"
)
echo "## Search of $n messages against export (tools/interleave, $ROUNDS rounds)"
echo
"$tmp/interleave" -n "$ROUNDS" -warmup 1 "${cmds[@]}" | sed "s|$tmp/chatq --url $url ||g"

echo
echo "## Server time per call (one run each, INFO commandstats)"
echo
echo "| command | calls | µs per call (EVALSHA, mean) |"
echo "| --- | --: | --: |"
for c in "${cmds[@]}"; do
  redis-cli -p "$port" CONFIG RESETSTAT >/dev/null
  $c >/dev/null 2>&1
  redis-cli -p "$port" INFO commandstats | tr -d '\r' |
    awk -F'[:=,]' -v name="${c#"$tmp/chatq --url $url "}" '/^cmdstat_evalsha:/ { printf "| `%s` | %s | %s |\n", name, $3, $7 }'
done
