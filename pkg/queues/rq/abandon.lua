-- abandon.lua: a started job whose registry score (its expiry) is past,
-- moved to the failed registry as RQ 1.13's StartedJobRegistry.cleanup
-- does for a job with no retries left.
-- KEYS[1] started  rq:wip:<q>  ZSET  StartedJobRegistry: job id -> expiry
-- KEYS[2] failed  rq:failed:<q>  ZSET  FailedJobRegistry: job id -> expiry
-- KEYS[3] job  rq:job:<id>  HASH  the job
-- KEYS[4] deps  rq:job:<id>:dependencies  SET  the ids of the jobs it depends on
-- KEYS[5] dependents  rq:job:<id>:dependents  SET  the ids of the jobs that depend on it
local started, failed, job, deps, dependents = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
-- ARGV: id, now (unix seconds), exc_info (zlib of RQ's text), failure
-- ttl default. Returns 1 moved, 0 not (or no longer) expired in started,
-- -1 no job hash (dropped from started, as cleanup's ZREMRANGEBYSCORE
-- does), -3 retries left (RQ retries it; chatq leaves it to RQ).
local id, now = ARGV[1], tonumber(ARGV[2])
local score = redis.call("ZSCORE", started, id)
if not score or tonumber(score) > now then
  return 0
end
if redis.call("EXISTS", job) == 0 then
  redis.call("ZREM", started, id)
  return -1
end
local left = tonumber(redis.call("HGET", job, "retries_left") or "")
if left and left > 0 then
  return -3
end
local ttl = tonumber(redis.call("HGET", job, "failure_ttl") or "") or tonumber(ARGV[4])
local fscore = ttl
if ttl >= 0 then
  fscore = now + ttl
end
redis.call("HSET", job, "status", "failed", "exc_info", ARGV[3])
if ttl > 0 then
  redis.call("EXPIRE", job, ttl)
  redis.call("EXPIRE", deps, ttl)
  redis.call("EXPIRE", dependents, ttl)
end
redis.call("ZADD", failed, fscore, id)
redis.call("ZREM", started, id)
return 1
