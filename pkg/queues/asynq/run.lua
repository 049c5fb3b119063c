-- run: run tasks now, as asynq's Inspector.RunTask does (runTaskCmd): a
-- task in scheduled, retry or archived state leaves its state's sorted
-- set, its id goes to the head of pending (asynq takes from the tail) and
-- its state becomes pending. Each task's state is read and checked here,
-- before its writes; a task in another state is left as it is.
-- KEYS[1] pending  asynq:{NAME}:pending  LIST  pending task ids
-- KEYS[2] scheduled  asynq:{NAME}:scheduled  ZSET  task id -> due time
-- KEYS[3] retry  asynq:{NAME}:retry  ZSET  task id -> due time
-- KEYS[4] archived  asynq:{NAME}:archived  ZSET  task id -> archived at
local pending, scheduled, retry, archived = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
-- ARGV[1] the queue key prefix (<prefix>asynq:{q}:), ARGV[2] the task key
-- prefix, ARGV[3...] the ids (the caller sends at most 100).
-- Returns one code per id: "ok"; "missing" (no such task); "nostate" (a
-- hash without a state field: a layout chatq does not know); "notinset"
-- (its state's set lacks it: left); or the state it is in (left).
local e = check({{pending, "list"}, {scheduled, "zset"}, {retry, "zset"}, {archived, "zset"}},
  {{"LPUSH", pending, "x"}, {"ZREM", scheduled, "x"}, {"ZREM", retry, "x"}, {"ZREM", archived, "x"},
   {"HSET", ARGV[2] .. ARGV[3], "state", "pending"}})
if e then
  return e
end
local out = {}
for i = 3, #ARGV do
  local id = ARGV[i]
  local key = ARGV[2] .. id
  local state = redis.call("HGET", key, "state")
  local code
  if not state then
    if redis.call("EXISTS", key) == 1 then
      code = "nostate"
    else
      code = "missing"
    end
  elseif state == "scheduled" or state == "retry" or state == "archived" then
    if redis.call("ZREM", ARGV[1] .. state, id) == 0 then
      code = "notinset"
    else
      redis.call("LPUSH", pending, id)
      redis.call("HSET", key, "state", "pending")
      code = "ok"
    end
  else
    code = state
  end
  table.insert(out, code)
end
return out
