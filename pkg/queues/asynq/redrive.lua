-- redrive: run up to N archived tasks now, oldest first, as asynq's
-- RunAllArchivedTasks does for all of them at once (runAllCmd), in a
-- bounded batch: each leaves archived, goes to the head of pending and
-- becomes pending, its state checked here before its writes.
-- KEYS[1] archived  asynq:{NAME}:archived  ZSET  task id -> archived at
-- KEYS[2] pending  asynq:{NAME}:pending  LIST  pending task ids
local archived, pending = KEYS[1], KEYS[2]
-- ARGV[1] the task key prefix, ARGV[2] the rank of the first archived
-- entry to look at (those before it were left by earlier batches), ARGV[3]
-- N (the caller keeps it at 100 or less).
-- Returns {entries looked at, id1, code1, ...}: "ok", or why the task was
-- left: "missing" (no hash), "nostate", or the state its hash has.
local e = check({{archived, "zset"}, {pending, "list"}},
  {{"LPUSH", pending, "x"}, {"ZREM", archived, "x"}, {"HSET", ARGV[1] .. "x", "state", "pending"}})
if e then
  return e
end
local from = tonumber(ARGV[2])
local ids = redis.call("ZRANGE", archived, from, from + tonumber(ARGV[3]) - 1)
local out = {#ids}
for _, id in ipairs(ids) do
  local key = ARGV[1] .. id
  local state = redis.call("HGET", key, "state")
  local code
  if state == "archived" then
    redis.call("ZREM", archived, id)
    redis.call("LPUSH", pending, id)
    redis.call("HSET", key, "state", "pending")
    code = "ok"
  elseif state then
    code = state
  elseif redis.call("EXISTS", key) == 1 then
    code = "nostate"
  else
    code = "missing"
  end
  table.insert(out, id)
  table.insert(out, code)
end
return out
