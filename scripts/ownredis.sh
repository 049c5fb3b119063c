# ownredis.sh, sourced by the measurement scripts: a redis-server of their
# own on PORT (default: a free one), no persistence, in a temporary
# directory $tmp that goes with it on every exit path.
#
#   . scripts/ownredis.sh
#   start_own_redis NAME [REDIS-SERVER ARGS...]   # NAME for the messages
tmp=$(mktemp -d)
port=${PORT:-$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}
redis_pid=
cleanup() {
  if [ -n "$redis_pid" ]; then
    kill "$redis_pid" 2>/dev/null || true
    wait "$redis_pid" 2>/dev/null || true
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

start_own_redis() {
  local name=$1; shift
  if redis-cli -p "$port" ping >/dev/null 2>&1; then
    echo "$name: port $port is taken (PORT=...)" >&2
    exit 1
  fi
  redis-server --bind 127.0.0.1 --port "$port" --save '' --appendonly no --dir "$tmp" \
    --daemonize no --logfile "$tmp/redis.log" "$@" &
  redis_pid=$!
  for _ in $(seq 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
  if ! kill -0 "$redis_pid" 2>/dev/null || ! redis-cli -p "$port" ping >/dev/null 2>&1; then
    echo "$name: redis-server did not start on port $port:" >&2
    cat "$tmp/redis.log" >&2
    exit 1
  fi
}
