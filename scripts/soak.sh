#!/usr/bin/env bash
# scripts/soak.sh DURATION [REPORT.json]: the soak (TestSoak in soak_test.go)
# for DURATION (60s, 10m, 1h): chatq processes produce and consume a chat, a
# queue and a sharded list on a Redis Cluster of three masters with a
# replica each, every node behind a fault proxy, while faults are injected
# at random (restarts with AOF, replica promotion, CLIENT KILL, dropped
# replies, blackholes, SIGKILL of workers, slot migrations). It prints
# what was sent, delivered, lost and duplicated beyond at-least-once, every
# exit code, the faults and each pattern's longest stall, and writes them as
# JSON to REPORT.json when given. It exits non-zero when something was lost,
# duplicated or delivered unsent, or a long-running command ended on its
# own; never because something was slow.
#
# It starts its own redis-servers (redis-server and redis-cli on PATH) on
# free loopback ports, CI_PORTS=LO-HI to keep them in a range, and stops
# them at the end. CHATQ_SOAK_SEED=N repeats a run's choice of faults.
set -euo pipefail
cd "$(dirname "$0")/.."
dur=${1:?usage: scripts/soak.sh DURATION [REPORT.json]}
secs=$(python3 -c 'import re,sys
m = re.fullmatch(r"(\d+)(s|m|h)", sys.argv[1])
if not m: sys.exit("scripts/soak.sh: DURATION is a number and a unit: 60s, 10m, 1h")
print(int(m[1]) * {"s": 1, "m": 60, "h": 3600}[m[2]])' "$dur")
export CHATQ_SOAK=$dur
if [ -n "${2:-}" ]; then
  CHATQ_SOAK_REPORT=$(python3 -c 'import os,sys; print(os.path.abspath(sys.argv[1]))' "$2")
  export CHATQ_SOAK_REPORT
fi
# go test's timeout is a guard against a hang: the soak, then at most three
# minutes to drain, plus the setup, with room to spare.
CHATQ_REQUIRE_REDIS=1 exec go test -run '^TestSoak$' -count=1 -v -timeout "$((secs + 600))s" .
