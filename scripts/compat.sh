#!/usr/bin/env bash
# compat.sh: the compatibility matrix (docs/compatibility.md). For each DIR
# holding a server's binaries (redis-server, redis-cli, redis-sentinel, or
# the valkey-* names), it starts what .ci/run starts, from those binaries,
# on free loopback ports: a standalone server, a three-node Cluster, TLS
# servers (with and without client certificates, and a TLS Cluster), and a
# master, its replica and a sentinel. Then it runs the real-server Go suite
# with the environment .ci/run gives it (which runs the txtar scripts, the
# rsmq npm client's interop tests and the ACL tests too), stops that
# server's processes, and goes on to the next DIR. Last, it prints the
# matrix, server by setup, naming each failing test.
#
#   scripts/compat.sh /work/servers/redis-6.2.16 /usr/bin
#   CI_PORTS=26000-26999 scripts/compat.sh DIR...    # ports to use (+10000 for cluster buses)
#   scripts/compat.sh --run 'TestACL' --pkg ./pkg/delayq DIR   # one test, for a diagnosis
#   scripts/compat.sh --count 10 --run 'TestACL' --pkg ./pkg/delayq DIR   # ten times
#   scripts/compat.sh --dry-run DIR...                 # check the binaries, print the plan
#   scripts/compat.sh --report OUT                     # print the matrix of a run again
#
# The tests run under `nice -n 15`, one server after another, without -race
# (a data race does not depend on the server; CI runs -race); --race adds it.
# A failing test counts against the setup its top-level name names: TestScripts
# of e2e (the root package before) -> scripts, TestInterop* -> rsmq, *Cluster* -> cluster,
# *TLS* -> tls, *Sentinel* -> sentinel, every other test -> standalone. Tests
# that start servers of their own (restarts, failovers) find this DIR's
# binaries first on PATH. Each run's go test -json output and a text log per
# server stay in OUT (COMPAT_OUT, default a new /tmp/chatq-compat.* directory).
#
# Exit status: 0 when every cell passes, 1 when one fails or a setup does not
# start, 2 for a usage error.
set -euo pipefail
cd "$(dirname "$0")/.."
me=compat

usage() {
  sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
}

dry=0 race=() run=() pkgs=() dirs=() report= count=1
while [ $# -gt 0 ]; do
  case $1 in
    -h|--help) usage; exit 0 ;;
    -n|--dry-run) dry=1 ;;
    --race) race=(-race) ;;
    --count) [ $# -ge 2 ] && [ "$2" -ge 1 ] 2>/dev/null || { echo "$me: error: --count needs a number of runs" >&2; exit 2; }
      count=$2; shift ;;
    --run) [ $# -ge 2 ] || { echo "$me: error: --run needs a regular expression" >&2; exit 2; }
      run=(-run "$2"); shift ;;
    --pkg) [ $# -ge 2 ] || { echo "$me: error: --pkg needs a package (./pkg/delayq)" >&2; exit 2; }
      pkgs+=("$2"); shift ;;
    --report) [ $# -ge 2 ] || { echo "$me: error: --report needs the OUT directory of a run" >&2; exit 2; }
      report=$2; shift ;;
    -*) echo "$me: error: unknown flag $1" >&2; echo "$me: hint: scripts/compat.sh --help" >&2; exit 2 ;;
    *) dirs+=("$1") ;;
  esac
  shift
done
[ ${#pkgs[@]} -gt 0 ] || pkgs=(./...)

# matrix OUT: the Markdown matrix of the go test -json files OUT/*.json
# (one per server, named by its label), then each failing test by server
# and setup. Exit 1 when a cell failed or a setup did not start.
matrix() {
  python3 - "$1" <<'PY'
import json, os, re, sys

out = sys.argv[1]
setups = ["standalone", "scripts", "rsmq", "cluster", "tls", "sentinel"]
module = "github.com/chatq-dev/chatq"

def setup_of(pkg, test):
    top = test.split("/")[0]
    if pkg in (module, module + "/e2e") and top == "TestScripts":
        return "scripts"
    if top.startswith("TestInterop"):
        return "rsmq"
    for word, s in (("Cluster", "cluster"), ("TLS", "tls"), ("Sentinel", "sentinel")):
        if word in top:
            return s
    return "standalone"

def why(lines):
    """The line that says why a test failed: a txtar script's FAIL, a panic,
    or a t.Error's. go test's output does not tell t.Log's lines from
    t.Error's, so of those the first that reads like a failure (fail, lost,
    want, error...) is taken, else the first."""
    found = []
    for l in lines:
        t = l.strip()
        if t.startswith("FAIL: testdata") or t.startswith("panic:"):
            found = [t]
            break
        if re.match(r"\S+_test\.go:\d+: ", t):
            found.append(t)
    failing = [t for t in found if re.search(r"fail|lost|want|got|expected|error|refused|changed|did not|not everything", t, re.I)]
    if not found:
        return ""
    t = (failing or found)[0]
    return ": " + (t if len(t) <= 200 else t[:197] + "...")

def name(label):
    return label.replace("-", " ", 1)

def short(pkg):
    return pkg[len(module):].lstrip("/") or "."

rows, failures, bad = [], [], False
def order(label):
    """redis before valkey, then by version, numerically."""
    flavor, _, version = label.partition("-")
    return flavor, [int(n) if n.isdigit() else 0 for n in re.split(r"[.-]", version)]

labels = {f[:-5] for f in os.listdir(out) if f.endswith(".json")}
labels |= {f[:-8] for f in os.listdir(out) if f.endswith(".nostart")}
labels = sorted(labels, key=order)
for label in labels:
    if os.path.exists(os.path.join(out, label + ".nostart")):
        bad = True
        rows.append([name(label)] + ["no start"] * len(setups))
        failures.append((name(label), "-", "the setup did not start: see " + os.path.join(out, label + ".nostart")))
        continue
    # every pass and fail of every test: with --count, one per run
    results, parents, pkgfail, output = [], set(), set(), {}
    for line in open(os.path.join(out, label + ".json")):
        try:
            e = json.loads(line)
        except ValueError:
            continue
        pkg, test, action = e.get("Package", ""), e.get("Test"), e.get("Action")
        if test:
            if "/" in test:
                parents.add((pkg, test.rsplit("/", 1)[0]))
            if action in ("pass", "fail"):
                results.append((pkg, test, action))
            if action == "output":
                output.setdefault((pkg, test), []).append(e.get("Output", ""))
        elif action == "fail":
            pkgfail.add(pkg)
    failing = {(p, t) for p, t, a in results if a == "fail"}
    passed = {s: 0 for s in setups}
    failed = {s: [] for s in setups}
    for pkg, test, action in results:
        # only leaves: a parent passes or fails with its subtests
        if (pkg, test) in parents:
            if action != "fail" or any(p == pkg and t.startswith(test + "/") for p, t in failing):
                continue
        s = setup_of(pkg, test)
        if action == "pass":
            passed[s] += 1
        else:
            failed[s].append(short(pkg) + " " + test + why(output.get((pkg, test), [])))
    for pkg in sorted(pkgfail):
        if not any(p == pkg for p, _ in failing):
            failed["standalone"].append(short(pkg) + " (the package: build, panic or timeout)")
    for s in setups:
        failed[s].sort()
    row = [name(label)]
    for s in setups:
        if failed[s]:
            bad = True
            row.append("FAIL %d of %d" % (len(failed[s]), len(failed[s]) + passed[s]))
            failures += [(name(label), s, t) for t in failed[s]]
        elif passed[s]:
            row.append("pass (%d)" % passed[s])
        else:
            bad = True
            row.append("not run")
    rows.append(row)

print("| server | " + " | ".join(setups) + " |")
print("| --- |" + " --- |" * len(setups))
for r in rows:
    print("| " + " | ".join(r) + " |")
if failures:
    print()
    for label, s, t in failures:
        print("- %s, %s: %s" % (label, s, t))
sys.exit(1 if bad else 0)
PY
}

if [ -n "$report" ]; then
  matrix "$report"
  exit
fi
if [ ${#dirs[@]} -eq 0 ]; then
  echo "$me: error: no server directory given" >&2
  echo "$me: hint: scripts/compat.sh DIR... (each DIR holding redis-server or valkey-server); --help" >&2
  exit 2
fi

# flavor DIR: redis or valkey, by the names of DIR's binaries.
flavor() {
  local f b
  for f in redis valkey; do
    for b in server cli sentinel; do [ -x "$1/$f-$b" ] || continue 2; done
    echo "$f"; return 0
  done
  return 1
}

# label DIR: "redis 6.2.16", "valkey 8.0.1": the flavor and the version the
# server binary reports (redis-server --version: "Redis server v=6.2.16 …").
label() {
  local f v
  f=$(flavor "$1")
  v=$("$1/$f-server" --version | sed -n 's/.* v=\([^ ]*\).*/\1/p')
  echo "$f $v"
}

for d in "${dirs[@]}"; do
  if ! flavor "$d" >/dev/null; then
    echo "$me: error: $d holds neither redis-server, redis-cli and redis-sentinel nor the valkey-* ones" >&2
    exit 2
  fi
done

gotest=(nice -n 15 go test -json "-count=$count" -timeout 45m "${race[@]}" "${run[@]}" "${pkgs[@]}")

if [ "$dry" = 1 ]; then
  for d in "${dirs[@]}"; do
    f=$(flavor "$d")
    echo "$me: $(label "$d") from $d: $f-server, $f-cli, $f-sentinel (as redis-* on PATH)"
  done
  echo "$me: each: standalone, 3-node cluster, TLS, mTLS, TLS cluster, master+replica+sentinel on ports in ${CI_PORTS:-20000-55535}"
  echo "$me: each: ${gotest[*]}"
  exit 0
fi

out=${COMPAT_OUT:-$(mktemp -d /tmp/chatq-compat.XXXXXX)}
mkdir -p "$out"

if [ -f testdata/interop/rsmq/package.json ] && [ ! -d testdata/interop/rsmq/node_modules/rsmq ]; then
  (cd testdata/interop/rsmq && npm ci --no-audit --no-fund --loglevel=error)
fi

# one DIR LABEL: the setups from DIR's binaries and the suite against them,
# in a subshell of its own whose exit stops every process it started.
one() {
  local d=$1 label=$2 f b
  f=$(flavor "$d")
  mkdir -p "$out/bin/$label"
  for b in server cli sentinel; do ln -sfn "$(realpath "$d/$f-$b")" "$out/bin/$label/redis-$b"; done
  PATH=$out/bin/$label:$PATH
  dir=$(mktemp -d)
  pids=()
  . scripts/servers.sh
  tests=
  # the tests run in a session of their own, so that an interrupt stops
  # them and the servers their tests started, not only go test
  trap '[ -z "$tests" ] || kill -TERM -- "-$tests" 2>/dev/null; stop_servers; rm -rf "$dir"' EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM

  port=$(free_port)
  start_redis "$port"
  start_cluster redis
  local plain_cluster_url=$cluster_url
  tls=$dir/tls
  make_certs
  tls_port=$(free_port)
  start_tls_redis "$tls_port" no
  mtls_port=$(free_port)
  start_tls_redis "$mtls_port" yes
  start_cluster rediss
  local tls_cluster_url=$cluster_url
  start_sentinel chatq
  echo "$me: $label: $(redis-cli -p "$port" info server | grep -E '^(redis|valkey)_version:|^server_name:' | tr -d '\r' | tr '\n' ' ')on :$port" >&2

  CHATQ_TEST_REDIS_URL="redis://127.0.0.1:$port/0" \
  CHATQ_TEST_CLUSTER_URL="$plain_cluster_url" CHATQ_REQUIRE_REDIS=1 CHATQ_REQUIRE_CLUSTER=1 \
  CHATQ_TEST_TLS_URL="rediss://127.0.0.1:$tls_port" CHATQ_TEST_MTLS_URL="rediss://127.0.0.1:$mtls_port" \
  CHATQ_TEST_TLS_CACERT="$tls/ca.pem" CHATQ_TEST_TLS_CERT="$tls/client.pem" CHATQ_TEST_TLS_KEY="$tls/client.key" \
  CHATQ_TEST_TLS_CLUSTER_URL="$tls_cluster_url" CHATQ_REQUIRE_TLS=1 CHATQ_TEST_ACL=1 \
  CHATQ_TEST_SENTINEL_URL="redis://127.0.0.1:$sentinel_port" CHATQ_TEST_SENTINEL_MASTER=chatq CHATQ_REQUIRE_SENTINEL=1 \
    setsid "${gotest[@]}" >"$out/$label.json" 2>"$out/$label.stderr" &
  tests=$!
  wait "$tests" || true
  tests=
}

stopped=
trap 'stopped=130' INT
trap 'stopped=143' TERM
for d in "${dirs[@]}"; do
  label=$(label "$d")
  label=${label// /-}
  echo "$me: $label ($d)" >&2
  rm -f "$out/$label.json" "$out/$label.nostart"
  # errexit holds in the subshell only outside a condition; an interrupt
  # stops it (its trap stops what it started), then this run
  set +e
  (set -e; one "$d" "$label") 2>"$out/$label.setup" &
  child=$!
  wait "$child"
  rc=$?
  set -e
  if [ -n "$stopped" ]; then
    kill -TERM "$child" 2>/dev/null || true
    wait "$child" 2>/dev/null || true
    echo "$me: interrupted; logs in $out" >&2
    exit "$stopped"
  fi
  if [ "$rc" != 0 ]; then
    mv "$out/$label.setup" "$out/$label.nostart"
    rm -f "$out/$label.json"
    echo "$me: $label: a setup did not start: $out/$label.nostart" >&2
    continue
  fi
  cat "$out/$label.setup" >&2
  python3 -c '
import json, sys
for line in open(sys.argv[1]):
    try:
        sys.stdout.write(json.loads(line).get("Output", ""))
    except ValueError:
        sys.stdout.write(line)
' "$out/$label.json" >"$out/$label.log"
done

echo "$me: logs in $out" >&2
matrix "$out"
