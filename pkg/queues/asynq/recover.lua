-- recover: take back active tasks whose lease expired, as asynq's
-- recoverer does (rdb.Retry with a failure, or rdb.Archive once retries
-- are used up, each with the error "asynq: task lease expired"): the id
-- leaves active and lease, goes to retry (due ARGV[3]) or archived (and
-- the archive is trimmed as asynq trims it, at most ARGV[8] entries per
-- call), the hash gets the rewritten msg and its new state, and the
-- queue's processed and failed counters count one more failure. Each
-- task is checked here, before its writes: still active, its lease still
-- expired before the cutoff, its msg the one the caller rewrote.
-- KEYS[1] active  asynq:{NAME}:active  LIST  active task ids
-- KEYS[2] lease  asynq:{NAME}:lease  ZSET  active task id -> lease expiry
-- KEYS[3] retry  asynq:{NAME}:retry  ZSET  task id -> due time
-- KEYS[4] archived  asynq:{NAME}:archived  ZSET  task id -> archived at
-- KEYS[5] processed_day  asynq:{NAME}:processed:<day>  STRING  tasks processed that day
-- KEYS[6] failed_day  asynq:{NAME}:failed:<day>  STRING  tasks failed that day
-- KEYS[7] processed  asynq:{NAME}:processed  STRING  tasks processed, in all
-- KEYS[8] failed  asynq:{NAME}:failed  STRING  tasks failed, in all
local active, lease, retry, archived, processed_day, failed_day, processed, failed = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8]
-- ARGV[1] the task key prefix, ARGV[2] the lease cutoff (Unix s), ARGV[3]
-- now (Unix s), ARGV[4] when the day's counters expire (Unix s), ARGV[5]
-- archived entries older than this go (Unix s: 90 days ago), ARGV[6] the
-- archive's size limit (10000), ARGV[7] how far from active's ends a task
-- is looked for, ARGV[8] the most archived entries trimmed, ARGV[9] the
-- largest int64 (asynq's counters start over there), ARGV[10] how many
-- list entries this call may compare in all, then per task four:
-- id, msg as read, msg rewritten, "retry" or "archive".
-- Returns one code per task: "retry", "archive" (done), "changed" (no
-- longer active or its msg changed), "leased" (its lease was extended),
-- "deep" (too far from both ends of active), "later" (this call's search
-- budget is spent: left for another call).
local e = check({{active, "list"}, {lease, "zset"}, {retry, "zset"}, {archived, "zset"}, {processed_day, "string"},
    {failed_day, "string"}, {processed, "string"}, {failed, "string"}},
  {{"LREM", active, "1", "x"}, {"ZREM", lease, "x"}, {"ZADD", retry, "0", "x"}, {"ZADD", archived, "0", "x"},
   {"HSET", ARGV[1] .. ARGV[11], "msg", "x"}, {"INCR", processed_day}, {"INCR", failed_day}, {"INCR", processed},
   {"INCR", failed}, {"EXPIREAT", processed_day, "0"}, {"DEL", ARGV[1] .. "x"}})
if e then
  return e
end
local function count(day)
  if redis.call("INCR", day) == 1 then
    redis.call("EXPIREAT", day, ARGV[4])
  end
end
search_budget = tonumber(ARGV[10])
local out = {}
for i = 11, #ARGV, 4 do
  local id, was, now, to = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3]
  local key = ARGV[1] .. id
  local f = redis.call("HMGET", key, "state", "msg")
  local score = redis.call("ZSCORE", lease, id)
  local code = to
  local at
  if f[1] ~= "active" or f[2] ~= was then
    code = "changed"
  elseif not score or tonumber(score) > tonumber(ARGV[2]) then
    code = "leased"
  else
    at = listend(active, id, tonumber(ARGV[7]))
    if at == nil then
      code = "later"
    elseif not at then
      code = "deep"
    end
  end
  if at then
    redis.call("LREM", active, at, id)
    redis.call("ZREM", lease, id)
    if to == "retry" then
      redis.call("ZADD", retry, ARGV[3], id)
      redis.call("HSET", key, "msg", now, "state", "retry")
    else
      redis.call("ZADD", archived, ARGV[3], id)
      local old = redis.call("ZRANGE", archived, "-inf", ARGV[5], "BYSCORE", "LIMIT", 0, tonumber(ARGV[8]))
      for _, o in ipairs(old) do
        redis.call("DEL", ARGV[1] .. o)
        redis.call("ZREM", archived, o)
      end
      local over = redis.call("ZCARD", archived) - tonumber(ARGV[6]) + 1
      if over > 0 then
        if over > tonumber(ARGV[8]) then
          over = tonumber(ARGV[8])
        end
        for _, o in ipairs(redis.call("ZRANGE", archived, 0, over - 1)) do
          redis.call("DEL", ARGV[1] .. o)
          redis.call("ZREM", archived, o)
        end
      end
      redis.call("HSET", key, "msg", now, "state", "archived")
    end
    count(processed_day)
    count(failed_day)
    if redis.call("GET", processed) == ARGV[9] then
      redis.call("SET", processed, 1)
      redis.call("SET", failed, 1)
    else
      redis.call("INCR", processed)
      redis.call("INCR", failed)
    end
  end
  table.insert(out, code)
end
return out
