-- page: one page of a state's tasks, as asynq's listMessages and
-- listZSetEntries read them: the ids in a range of the state's list or
-- sorted set and each task hash's fields, in bounded work (the caller
-- keeps a range to 100 or so).
-- KEYS[1] ids  asynq:{NAME}:<state>  LIST/ZSET  the state's task ids (a list for pending and active, else a sorted set)
-- KEYS[2] lease  asynq:{NAME}:lease  ZSET  active task id -> lease expiry
local ids, lease = KEYS[1], KEYS[2]
-- ARGV[1] "list" (ids is a list, read from its tail: asynq takes tasks
-- from there, so the next to run comes first) or "zset" (by rank, lowest
-- score first); ARGV[2], ARGV[3] the range: offsets from the tail (list)
-- or ranks (zset), inclusive; ARGV[4] the task key prefix; ARGV[5] "1"
-- to read each task's lease (active tasks).
-- Returns {size of ids, then per task: id, msg, state, pending_since,
-- result, group, score}, where score is the task's in the zset, or its
-- lease's expiry (Unix s) for an active task (false when none).
local out = {}
local entries = {}
if ARGV[1] == "list" then
  table.insert(out, redis.call("LLEN", ids))
  local got = redis.call("LRANGE", ids, -1 - tonumber(ARGV[3]), -1 - tonumber(ARGV[2]))
  for i = #got, 1, -1 do
    local score = false
    if ARGV[5] == "1" then
      score = redis.call("ZSCORE", lease, got[i])
    end
    table.insert(entries, {got[i], score})
  end
else
  table.insert(out, redis.call("ZCARD", ids))
  local got = redis.call("ZRANGE", ids, ARGV[2], ARGV[3], "WITHSCORES")
  for i = 1, #got, 2 do
    table.insert(entries, {got[i], got[i + 1]})
  end
end
for _, e in ipairs(entries) do
  local f = redis.call("HMGET", ARGV[4] .. e[1], "msg", "state", "pending_since", "result", "group")
  table.insert(out, e[1])
  for i = 1, 5 do
    table.insert(out, f[i])
  end
  table.insert(out, e[2])
end
return out
