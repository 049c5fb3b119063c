-- delete: delete tasks, as asynq's Inspector.DeleteTask does
-- (deleteTaskCmd): the id leaves its state's list or sorted set (an
-- aggregating task its group's, and the group leaves groups once empty),
-- the uniqueness lock it holds is released, and its hash is deleted. An
-- active task is left, as asynq leaves it, unless forced and its lease
-- expired before the cutoff (its worker is gone: asynq's recoverer would
-- take it back); it then also leaves active and lease. A task in a list
-- (pending, active) is removed only within a bounded distance of either
-- end, so that no call walks a long list. Each task's state is read and
-- checked here, before its writes.
-- KEYS[1] pending  asynq:{NAME}:pending  LIST  pending task ids
-- KEYS[2] active  asynq:{NAME}:active  LIST  active task ids
-- KEYS[3] lease  asynq:{NAME}:lease  ZSET  active task id -> lease expiry
-- KEYS[4] groups  asynq:{NAME}:groups  SET  the queue's group names
-- KEYS[5] scheduled  asynq:{NAME}:scheduled  ZSET  task id -> due time
-- KEYS[6] retry  asynq:{NAME}:retry  ZSET  task id -> due time
-- KEYS[7] archived  asynq:{NAME}:archived  ZSET  task id -> archived at
-- KEYS[8] completed  asynq:{NAME}:completed  ZSET  task id -> expiry
local pending, active, lease, groups, scheduled, retry, archived, completed = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8]
-- ARGV[1] the queue key prefix (<prefix>asynq:{q}:), ARGV[2] the task key
-- prefix, ARGV[3] "1" to force, ARGV[4] the lease cutoff (Unix s), ARGV[5]
-- how far from a list's ends a task is looked for, ARGV[6] chatq's key
-- prefix (in front of a unique_key field's key), ARGV[7] how many list
-- entries this call may compare in all, ARGV[8...] the ids (at most 100).
-- Returns one code per id: "ok"; "missing"; "nostate"; "notinset"; "deep"
-- (too far from both ends of its list); "later" (this call's search budget
-- is spent: left for another call); "leased" (active, forced, and its
-- lease is live); "active" (not forced); or "state:<s>" for a state asynq
-- 0.26 does not have.
local e = check({{pending, "list"}, {active, "list"}, {lease, "zset"}, {groups, "set"}, {scheduled, "zset"},
    {retry, "zset"}, {archived, "zset"}, {completed, "zset"}},
  {{"LREM", pending, "1", "x"}, {"LREM", active, "1", "x"}, {"ZREM", lease, "x"}, {"ZREM", scheduled, "x"},
   {"ZREM", retry, "x"}, {"ZREM", archived, "x"}, {"ZREM", completed, "x"}, {"SREM", groups, "x"},
   {"DEL", ARGV[2] .. ARGV[8]}})
if e then
  return e
end
local limit = tonumber(ARGV[5])
search_budget = tonumber(ARGV[7])
local out = {}
for i = 8, #ARGV do
  local id = ARGV[i]
  local key = ARGV[2] .. id
  local f = redis.call("HMGET", key, "state", "group", "unique_key")
  local state, group, unique = f[1], f[2], f[3]
  local code = "ok"
  if not state then
    if redis.call("EXISTS", key) == 1 then
      code = "nostate"
    else
      code = "missing"
    end
  elseif state == "active" then
    local score = redis.call("ZSCORE", lease, id)
    local at
    if ARGV[3] ~= "1" then
      code = "active"
    elseif not score or tonumber(score) > tonumber(ARGV[4]) then
      code = "leased"
    else
      at = listend(active, id, limit)
    end
    if at == nil and code == "ok" then
      code = "later"
    elseif at == false then
      code = "deep"
    elseif at then
      redis.call("LREM", active, at, id)
      redis.call("ZREM", lease, id)
    end
  elseif state == "pending" then
    local at = listend(pending, id, limit)
    if at == nil then
      code = "later"
    elseif not at then
      code = "deep"
    else
      redis.call("LREM", pending, at, id)
    end
  elseif state == "aggregating" then
    local g = ARGV[1] .. "g:" .. (group or "")
    if not group or redis.call("ZREM", g, id) == 0 then
      code = "notinset"
    elseif redis.call("ZCARD", g) == 0 then
      redis.call("SREM", groups, group)
    end
  elseif state == "scheduled" or state == "retry" or state == "archived" or state == "completed" then
    if redis.call("ZREM", ARGV[1] .. state, id) == 0 then
      code = "notinset"
    end
  else
    code = "state:" .. state
  end
  if code == "ok" then
    if unique and unique ~= "" and redis.call("GET", ARGV[6] .. unique) == id then
      redis.call("DEL", ARGV[6] .. unique)
    end
    redis.call("DEL", key)
  end
  table.insert(out, code)
end
return out
