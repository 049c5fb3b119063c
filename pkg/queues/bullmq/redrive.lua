-- redrive.lua: one batch of BullMQ's Queue.retryJobs({state: 'failed'})
-- (its moveJobsToWait script): up to ARGV[1] failed jobs that failed by
-- ARGV[2] (ms) go to the wait list (the paused list on a paused 5.x
-- queue), priorities ignored as BullMQ's script ignores them. Returns
-- the ids moved.
-- KEYS[1] base  bull:<queue>:  PREFIX  the queue's key prefix, for job keys
-- KEYS[2] events  bull:<queue>:events  STREAM  the queue's events
-- KEYS[3] failed  bull:<queue>:failed  ZSET  job id -> finished at
-- KEYS[4] wait  bull:<queue>:wait  LIST  job ids waiting
-- KEYS[5] paused  bull:<queue>:paused  LIST  job ids waiting while paused (5.x)
-- KEYS[6] meta  bull:<queue>:meta  HASH  queue settings: paused, opts.maxLenEvents…
-- KEYS[7] active  bull:<queue>:active  LIST  job ids being processed
-- KEYS[8] marker  bull:<queue>:marker  ZSET  wakes blocked workers (5.x and later)
local base, events, failed, wait, paused, meta, active, marker = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8]
local count, now, layout, version = tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3], ARGV[4]

local bad = checkLayout(meta, version)
if bad then
  return bad
end
local target = targetList(layout, meta, wait, paused)
local blocked = pausedOrMaxed(meta, active)

local jobs = rcall("ZRANGEBYSCORE", failed, 0, now, "LIMIT", 0, count)
if #jobs == 0 then
  return jobs
end
for _, id in ipairs(jobs) do
  local job = base .. id
  rcall("HDEL", job, "finishedOn", "processedOn", "failedReason")
  if layout == "6" then
    backToParent(job, "failed")
  end
end
local cap = maxEvents(meta)
for _, id in ipairs(jobs) do
  rcall("XADD", events, "MAXLEN", "~", cap, "*", "event", "waiting", "jobId", id, "prev", "failed")
end
rcall("ZREM", failed, unpack(jobs))
rcall("LPUSH", target, unpack(jobs))
wake(marker, blocked)
return jobs
