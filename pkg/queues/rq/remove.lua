-- remove.lua: one job deleted as RQ's Job.delete does: out of its queue
-- list and every registry of its queue, its hash and side keys deleted.
-- KEYS[1] queue  rq:queue:<q>  LIST  queued job ids
-- KEYS[2] job  rq:job:<id>  HASH  the job
-- KEYS[3] deps  rq:job:<id>:dependencies  SET  the ids of the jobs it depends on
-- KEYS[4] dependents  rq:job:<id>:dependents  SET  the ids of the jobs that depend on it
-- KEYS[5] results  rq:results:<id>  STREAM  the job's results (RQ 1.12 and later)
-- KEYS[6] started  rq:wip:<q>  ZSET  StartedJobRegistry: job id -> expiry
-- KEYS[7..] registries  rq:<registry>:<q>  ZSET  the other registries: scheduled, failed, finished, deferred, canceled
local queue, job, deps, dependents, results, started = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
-- ARGV: id, force ("1"), the most LLEN at which LREM may walk.
-- Returns 1 removed, 0 no such job, -2 started (not forced), -4 the
-- queue list is longer than ARGV[3] and holds the job's id somewhere,
-- -5 started in RQ 2.x's layout (read-only).
local id = ARGV[1]
if redis.call("EXISTS", job) == 0 then
  return 0
end
if redis.call("ZSCORE", started, id) and ARGV[2] ~= "1" then
  return -2
end
local status = redis.call("HGET", job, "status")
if status == "started" and not redis.call("ZSCORE", started, id) then
  return -5 -- RQ 2.x: the started registry holds "<id>:<execution>"
end
if status == "queued" then
  if redis.call("LLEN", queue) > tonumber(ARGV[3]) then
    return -4
  end
  redis.call("LREM", queue, 1, id)
end
redis.call("ZREM", started, id)
for i = 7, #KEYS do
  redis.call("ZREM", KEYS[i], id)
end
redis.call("DEL", job, deps, dependents, results)
return 1
