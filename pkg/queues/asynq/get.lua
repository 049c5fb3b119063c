-- get: one task by id, as asynq's getTaskInfoCmd reads it, and where it
-- stands: its score in its state's sorted set, or its lease's expiry.
-- KEYS[1] task  asynq:{NAME}:t:<id>  HASH  the task: msg, state and the other fields
local task = KEYS[1]
-- ARGV[1] the task id, ARGV[2] the queue key prefix (<prefix>asynq:{q}:).
-- Returns false when there is no such task, else {msg, state,
-- pending_since, result, group, score (false when none)}.
if redis.call("EXISTS", task) == 0 then
  return false
end
local f = redis.call("HMGET", task, "msg", "state", "pending_since", "result", "group")
local state, score = f[2], false
if state == "scheduled" or state == "retry" or state == "archived" or state == "completed" then
  score = redis.call("ZSCORE", ARGV[2] .. state, ARGV[1])
elseif state == "active" then
  score = redis.call("ZSCORE", ARGV[2] .. "lease", ARGV[1])
elseif state == "aggregating" and f[5] then
  score = redis.call("ZSCORE", ARGV[2] .. "g:" .. f[5], ARGV[1])
end
return {f[1], f[2], f[3], f[4], f[5], score}
