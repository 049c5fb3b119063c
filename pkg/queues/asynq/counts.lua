-- counts: a queue's counts at one instant, as asynq's own CurrentStats
-- script reads them, in bounded work: a group's size is summed only when
-- the queue has at most ARGV[2] groups.
-- KEYS[1] pending  asynq:{NAME}:pending  LIST  pending task ids
-- KEYS[2] active  asynq:{NAME}:active  LIST  active task ids
-- KEYS[3] scheduled  asynq:{NAME}:scheduled  ZSET  task id -> due time
-- KEYS[4] retry  asynq:{NAME}:retry  ZSET  task id -> due time
-- KEYS[5] archived  asynq:{NAME}:archived  ZSET  task id -> archived at
-- KEYS[6] completed  asynq:{NAME}:completed  ZSET  task id -> expiry
-- KEYS[7] paused  asynq:{NAME}:paused  STRING  present while the queue is paused
-- KEYS[8] groups  asynq:{NAME}:groups  SET  the queue's group names
-- KEYS[9] deadlines  asynq:{NAME}:deadlines  ZSET  task id -> deadline (asynq before 0.23)
-- KEYS[10] lease  asynq:{NAME}:lease  ZSET  active task id -> lease expiry
local pending, active, scheduled, retry, archived, completed, paused, groups, deadlines, lease = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9], KEYS[10]
-- ARGV[1] the task key prefix (<prefix>asynq:{q}:t:), ARGV[2] the most
-- groups whose sizes are summed, ARGV[3] the group key prefix
-- (<prefix>asynq:{q}:g:), ARGV[4] seconds a lease is past its expiry
-- before asynq's recoverer takes the task back.
-- Returns {pending, active, scheduled, retry, archived, completed, paused
-- (0/1), groups, aggregating (-1: too many groups to sum), deadlines set
-- exists (0/1), oldest pending task's pending_since in ns (false: none or
-- not recorded), now s, now µs, leases expired past the grace}.
local n = redis.call("LLEN", pending)
local oldest = false
if n > 0 then
  local id = redis.call("LINDEX", pending, -1)
  if id then
    oldest = redis.call("HGET", ARGV[1] .. id, "pending_since")
  end
end
local ngroups = redis.call("SCARD", groups)
local aggregating = 0
if ngroups > tonumber(ARGV[2]) then
  aggregating = -1
elseif ngroups > 0 then
  for _, g in ipairs(redis.call("SMEMBERS", groups)) do
    aggregating = aggregating + redis.call("ZCARD", ARGV[3] .. g)
  end
end
local t = redis.call("TIME")
local now = tonumber(t[1])
return {n, redis.call("LLEN", active), redis.call("ZCARD", scheduled), redis.call("ZCARD", retry),
  redis.call("ZCARD", archived), redis.call("ZCARD", completed), redis.call("EXISTS", paused),
  ngroups, aggregating, redis.call("EXISTS", deadlines), oldest, t[1], t[2],
  redis.call("ZCOUNT", lease, "-inf", now - tonumber(ARGV[4]))}
