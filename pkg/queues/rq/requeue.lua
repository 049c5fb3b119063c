-- requeue.lua: a failed job back to its queue, as RQ's
-- FailedJobRegistry.requeue does (ZREM failed, the job saved queued with
-- started_at, ended_at and exc_info cleared, SADD rq:queues, RPUSH).
-- KEYS[1] failed  rq:failed:<q>  ZSET  FailedJobRegistry: job id -> expiry
-- KEYS[2] job  rq:job:<id>  HASH  the job
-- KEYS[3] queue  rq:queue:<q>  LIST  queued job ids
-- KEYS[4] queues  rq:queues  SET  the queues' keys
local failed, job, queue, queues = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
-- ARGV: id, enqueued_at (RQ's utcformat), exc_info (zlib of ''), queue key
-- Returns 1 requeued, 0 not in the failed registry, -1 no job hash.
local id = ARGV[1]
if not redis.call("ZSCORE", failed, id) then
  return 0
end
if redis.call("EXISTS", job) == 0 then
  return -1
end
redis.call("ZREM", failed, id)
redis.call("HSET", job, "status", "queued", "started_at", "", "ended_at", "",
  "exc_info", ARGV[3], "enqueued_at", ARGV[2])
redis.call("SADD", queues, ARGV[4])
local ttl = tonumber(redis.call("HGET", job, "ttl") or "")
if ttl and ttl > 0 then
  redis.call("EXPIRE", job, ttl) -- Job.cleanup(ttl) in enqueue_job
end
redis.call("RPUSH", queue, id)
return 1
