# servers.sh, sourced by .ci/run and scripts/compat.sh: start redis-server
# setups on free loopback ports with no persistence, each in the background
# of the calling shell, with the redis-server, redis-cli and redis-sentinel
# found on PATH. The caller sets:
#
#   me=NAME    # for the messages ("ci", "compat")
#   dir=DIR    # a temporary directory for data, logs, certificates
#   pids=()    # every process started is added here; the caller's trap
#              # kills them (stop_servers does) on every exit path
#
# A server that does not start is a failure: the message and its log go to
# stderr and the shell exits 1.

# stop_servers: kill every process in pids and wait for them.
stop_servers() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  pids=()
}

# free_port: a loopback port nothing listens on, as is the port 10000 above
# it (a cluster node's bus port), so that it is at most 55535. CI_PORTS=LO-HI
# narrows the range (on a machine shared with other runs).
free_port() {
  CI_PORTS=${CI_PORTS:-20000-55535} python3 - <<'PY'
import os, random, socket
lo, hi = map(int, os.environ["CI_PORTS"].split("-"))
for _ in range(1000):
    p = random.randint(lo, min(hi, 55535))
    try:
        for q in (p, p + 10000):
            s = socket.socket()
            s.bind(("127.0.0.1", q))
            s.close()
    except OSError:
        continue
    print(p)
    break
PY
}

# start_redis PORT [ARGS...]: a redis-server in the foreground of a
# background job, with no persistence, ready when this returns.
start_redis() {
  local port=$1; shift
  mkdir -p "$dir/$port"
  redis-server --bind 127.0.0.1 --port "$port" --save '' --appendonly no \
    --dir "$dir/$port" --daemonize no --logfile "$dir/$port/redis.log" "$@" &
  pids+=($!)
  wait_ready "$port" "$dir/$port/redis.log"
}

# wait_ready PORT LOG [REDIS-CLI ARGS...]: PING answers on PORT within 10s,
# or the shell exits 1, showing LOG.
wait_ready() {
  local port=$1 log=$2; shift 2
  for _ in $(seq 100); do
    redis-cli "$@" -p "$port" ping 2>/dev/null | grep -q PONG && return 0
    sleep 0.1
  done
  echo "$me: server on port $port did not start" >&2; cat "$log" >&2; exit 1
}

# start_tls_redis PORT CLIENT-AUTH [ARGS...]: a redis-server speaking only
# TLS on PORT, with tls-auth-clients CLIENT-AUTH (yes or no).
start_tls_redis() {
  local port=$1 auth=$2; shift 2
  local cli=(--tls --cacert "$tls/ca.pem")
  [ "$auth" = yes ] && cli+=(--cert "$tls/client.pem" --key "$tls/client.key")
  mkdir -p "$dir/$port"
  redis-server --bind 127.0.0.1 --port 0 --tls-port "$port" --tls-auth-clients "$auth" \
    --tls-cert-file "$tls/server.pem" --tls-key-file "$tls/server.key" --tls-ca-cert-file "$tls/ca.pem" \
    --save '' --appendonly no --dir "$dir/$port" --daemonize no --logfile "$dir/$port/redis.log" "$@" &
  pids+=($!)
  wait_ready "$port" "$dir/$port/redis.log" "${cli[@]}"
}

# make_certs: a CA, a server certificate for localhost and 127.0.0.1, and a
# client certificate, in $tls (default $dir/tls).
make_certs() {
  tls=${tls:-$dir/tls}
  mkdir -p "$tls"
  (
    cd "$tls"
    key() { openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes "$@" 2>/dev/null; }
    sign() { openssl x509 -req -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 "$@" 2>/dev/null; }
    key -x509 -days 2 -subj /CN=chatq-ci-ca -keyout ca.key -out ca.pem
    key -subj /CN=localhost -keyout server.key -out server.csr
    # serverAuth and clientAuth: cluster nodes present it to each other
    printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth,clientAuth\n' >server.ext
    sign -in server.csr -extfile server.ext -out server.pem
    key -subj /CN=chatq-ci-client -keyout client.key -out client.csr
    printf 'extendedKeyUsage=clientAuth\n' >client.ext
    sign -in client.csr -extfile client.ext -out client.pem
  )
}

# start_cluster redis|rediss: a Redis Cluster of three masters (speaking only
# TLS, between nodes too, with rediss; make_certs first), every slot served
# when this returns. Sets cluster_nodes (host:port each) and cluster_url (a
# --cluster seed URL naming all three).
start_cluster() {
  local scheme=$1 cli=() p i
  [ "$scheme" = rediss ] && cli=(--tls --cacert "$tls/ca.pem")
  cluster_nodes=()
  for _ in 1 2 3; do
    p=$(free_port)
    if [ "$scheme" = rediss ]; then
      start_tls_redis "$p" no --tls-cluster yes --cluster-enabled yes --cluster-config-file "$dir/nodes-$p.conf"
    else
      start_redis "$p" --cluster-enabled yes --cluster-config-file "$dir/nodes-$p.conf"
    fi
    cluster_nodes+=("127.0.0.1:$p")
  done
  timeout 60 redis-cli "${cli[@]}" --cluster create "${cluster_nodes[@]}" --cluster-replicas 0 --cluster-yes >/dev/null
  for i in $(seq 100); do
    redis-cli "${cli[@]}" -p "${cluster_nodes[0]#*:}" cluster info | grep -q 'cluster_state:ok' && break
    if [ "$i" = 100 ]; then echo "$me: the cluster on ${cluster_nodes[*]} is not ok" >&2; exit 1; fi
    sleep 0.1
  done
  cluster_url="$scheme://${cluster_nodes[0]}?addr=${cluster_nodes[1]}&addr=${cluster_nodes[2]}"
}

# start_sentinel NAME: a master, its replica, and one redis-sentinel (quorum
# 1) monitoring the master as NAME, that knows the replica when this returns
# (so that a test can force a failover). Sets master_port, replica_port and
# sentinel_port.
start_sentinel() {
  local name=$1 i
  master_port=$(free_port)
  start_redis "$master_port"
  replica_port=$(free_port)
  start_redis "$replica_port" --replicaof 127.0.0.1 "$master_port"
  sentinel_port=$(free_port)
  mkdir -p "$dir/$sentinel_port"
  printf '%s\n' "port $sentinel_port" "bind 127.0.0.1" "dir $dir/$sentinel_port" \
    "sentinel monitor $name 127.0.0.1 $master_port 1" \
    "sentinel down-after-milliseconds $name 5000" "sentinel failover-timeout $name 10000" \
    >"$dir/$sentinel_port/sentinel.conf"
  redis-sentinel "$dir/$sentinel_port/sentinel.conf" --logfile "$dir/$sentinel_port/sentinel.log" &
  pids+=($!)
  wait_ready "$sentinel_port" "$dir/$sentinel_port/sentinel.log"
  for i in $(seq 300); do
    [ -n "$(redis-cli -p "$sentinel_port" sentinel replicas "$name")" ] && break
    if [ "$i" = 300 ]; then
      echo "$me: the sentinel found no replica" >&2; cat "$dir/$sentinel_port/sentinel.log" >&2; exit 1
    fi
    sleep 0.1
  done
}
