#!/usr/bin/env bash
# pending-ab.sh: chat pending's server time and wall time per call, this
# tree (B) against an older commit (A), interleaved A B A B (the order
# swapped every round) on one real redis-server, with the median and the
# spread (min–max) of the rounds. Each run is BenchmarkPendingServerTime
# (pkg/chat/slowlog_test.go, copied into A as it is here, so both run the
# same benchmark): a user in 1 chat with news, and in 1,000 chats of which
# 10 have news; server time is the sum of SLOWLOG durations of every
# command the call sends, marking included.
#
#   scripts/pending-ab.sh redis://127.0.0.1:6379/0 c8c7697 [rounds] [calls per run] [case]
#
# case is a -test.bench pattern after BenchmarkPendingServerTime/ ('K=1$'
# for the 1-chat case only; default all).
#
# It sets slowlog-log-slower-than 0 and slowlog-max-len on that server
# while it runs (restored after each run): use a server of your own.
set -euo pipefail
url=${1:?usage: pending-ab.sh REDIS_URL OLD_COMMIT [ROUNDS] [CALLS] [CASE]}
old=${2:?usage: pending-ab.sh REDIS_URL OLD_COMMIT [ROUNDS] [CALLS] [CASE]}
rounds=${3:-9}
calls=${4:-200}
only=${5:-}
root=$(git rev-parse --show-toplevel)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
git -C "$root" archive "$old" | tar -x -C "$work"
cp "$root/pkg/chat/slowlog_test.go" "$work/pkg/chat/"
(cd "$work" && go test -c -o "$work/a.test" ./pkg/chat)
(cd "$root" && go test -c -o "$work/b.test" ./pkg/chat)
run() { # binary label round
	CHATQ_TEST_REDIS_URL=$url "$1" -test.run '^$' -test.bench "PendingServerTime/$only" \
		-test.benchtime "${calls}x" -test.count 1 |
		awk -v who="$2" '/^BenchmarkPendingServerTime\// {
			split($1, n, "/"); sub(/-[0-9]+$/, "", n[3])
			print who, n[2] "/" n[3], $3, $5 }'
}
for r in $(seq "$rounds"); do
	if ((r % 2)); then run "$work/a.test" A; run "$work/b.test" B; else run "$work/b.test" B; run "$work/a.test" A; fi
done >"$work/runs"
echo "$rounds rounds of $calls calls, interleaved; median [min–max]"
printf '%-20s %-4s %-26s %s\n' case who 'wall µs per call' 'server µs per call'
for c in $(awk '{print $2}' "$work/runs" | sort -u); do
	for who in A B; do
		wall=$(awk -v c="$c" -v w="$who" '$1 == w && $2 == c {printf "%.1f\n", $3 / 1000}' "$work/runs" | sort -n)
		srv=$(awk -v c="$c" -v w="$who" '$1 == w && $2 == c {print $4}' "$work/runs" | sort -n)
		stat() { awk '{v[NR] = $1} END {m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
			printf "%.0f [%.0f–%.0f]", m, v[1], v[NR]}'; }
		printf '%-20s %-4s %-26s %s\n' "$c" "$who" "$(stat <<<"$wall")" "$(stat <<<"$srv")"
	done
done
