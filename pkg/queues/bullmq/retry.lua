-- retry.lua: a failed job back to be taken, as BullMQ's Job.retry('failed')
-- (its reprocessJob script) does. Returns 1, -1 (no job) or -3 (not failed).
-- KEYS[1] job  bull:<queue>:<id>  HASH  the job
-- KEYS[2] events  bull:<queue>:events  STREAM  the queue's events
-- KEYS[3] failed  bull:<queue>:failed  ZSET  job id -> finished at
-- KEYS[4] wait  bull:<queue>:wait  LIST  job ids waiting
-- KEYS[5] meta  bull:<queue>:meta  HASH  queue settings: paused, opts.maxLenEvents…
-- KEYS[6] paused  bull:<queue>:paused  LIST  job ids waiting while paused (5.x)
-- KEYS[7] active  bull:<queue>:active  LIST  job ids being processed
-- KEYS[8] marker  bull:<queue>:marker  ZSET  wakes blocked workers (5.x and later)
-- KEYS[9] prioritized  bull:<queue>:prioritized  ZSET  job id -> priority and order
-- KEYS[10] pc  bull:<queue>:pc  STRING  the priority counter
local job, events, failed, wait, meta, paused, active, marker, prioritized, pc = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9], KEYS[10]
local id, layout, version = ARGV[1], ARGV[2], ARGV[3]

local bad = checkLayout(meta, version)
if bad then
  return bad
end
if rcall("EXISTS", job) == 0 then
  return -1
end
if rcall("ZREM", failed, id) == 0 then
  return -3
end
rcall("HDEL", job, "finishedOn", "processedOn", "failedReason")

local blocked = pausedOrMaxed(meta, active)
local priority = tonumber(rcall("HGET", job, "priority")) or 0
if layout == "6" and priority > 0 then
  -- 6.x puts a job with a priority back in the prioritized set, scored as
  -- its getPriorityScore does; 5.x's reprocessJob pushes every job to a list.
  local n = rcall("INCR", pc)
  rcall("ZADD", prioritized, priority * 0x100000000 + n % 0x100000000, id)
  wake(marker, blocked)
else
  rcall(lifoPush(job), targetList(layout, meta, wait, paused), id)
  wake(marker, blocked)
end

-- Both layouts give a retried child back to its parent's dependencies.
backToParent(job, "failed")

rcall("XADD", events, "MAXLEN", "~", maxEvents(meta), "*", "event", "waiting", "jobId", id, "prev", "failed")
return 1
