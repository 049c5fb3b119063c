-- recover.lua: active jobs whose lock is gone (their worker died) back
-- to wait, as BullMQ's moveStalledJobsToWait moves each stalled job:
-- its stalled counter up, marked to fail ("defa") once past ARGV[1]
-- stalls unless a job scheduler's, pushed to the wait list (5.x: the
-- paused list while paused), a "stalled" event. ARGV[5..] are the ids
-- to consider; a job holding a lock or not in the first ARGV[2] entries
-- of the active list is left. Returns the ids moved.
-- KEYS[1] wait  bull:<queue>:wait  LIST  job ids waiting
-- KEYS[2] active  bull:<queue>:active  LIST  job ids being processed
-- KEYS[3] stalled  bull:<queue>:stalled  SET  active job ids seen without a lock
-- KEYS[4] meta  bull:<queue>:meta  HASH  queue settings: paused, opts.maxLenEvents…
-- KEYS[5] paused  bull:<queue>:paused  LIST  job ids waiting while paused (5.x)
-- KEYS[6] marker  bull:<queue>:marker  ZSET  wakes blocked workers (5.x and later)
-- KEYS[7] events  bull:<queue>:events  STREAM  the queue's events
-- KEYS[8] repeatKey  bull:<queue>:repeat  ZSET  job schedulers
local wait, active, stalled, meta, paused, marker, events, repeatKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8]
local maxStalled, listMax, base, version = tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[3], ARGV[4]
local layout = ARGV[5]

local bad = checkLayout(meta, version)
if bad then
  return bad
end
if rcall("LLEN", active) > listMax then
  return redis.error_reply("ERR the active list is longer than " .. listMax .. ": LREM would walk it")
end

-- BullMQ trims the stream before it adds its events.
rcall("XTRIM", events, "MAXLEN", "~", maxEvents(meta))

local moved = {}
for i = 6, #ARGV do
  local id = ARGV[i]
  local job = base .. id
  if rcall("EXISTS", job .. ":lock") == 0 and rcall("LREM", active, 1, id) > 0 then
    -- Its mark in the stalled set is spent, as BullMQ's check spends it.
    rcall("SREM", stalled, id)
    local count = rcall("HINCRBY", job, "stc", 1)
    local scheduled = false
    local rjk = rcall("HGET", job, "rjk")
    if rjk then
      scheduled = rcall("EXISTS", repeatKey .. ":" .. rjk) == 1 or rcall("ZSCORE", repeatKey, rjk) ~= false
    end
    if count > maxStalled and not scheduled then
      rcall("HSET", job, "defa", "job stalled more than allowable limit")
    end
    rcall("RPUSH", targetList(layout, meta, wait, paused), id)
    wake(marker, pausedOrMaxed(meta, active))
    rcall("XADD", events, "*", "event", "waiting", "jobId", id, "prev", "active")
    rcall("XADD", events, "*", "event", "stalled", "jobId", id)
    moved[#moved + 1] = id
  end
end
return moved
