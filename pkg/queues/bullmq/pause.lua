-- pause.lua: BullMQ's Queue.pause() (ARGV[1] "paused") or resume()
-- ("resumed"), its pause script, for the layout in ARGV[2]. 5.x renames
-- the wait list to the paused list and back; 6.x only sets meta's paused
-- field, and on resume moves what a 5.x pause left in the paused list
-- back to wait, ARGV[4] jobs per call. Returns the jobs left to move
-- (call again, with ARGV[5] "0" so that the event is sent once).
-- KEYS[1] wait  bull:<queue>:wait  LIST  job ids waiting
-- KEYS[2] paused  bull:<queue>:paused  LIST  job ids waiting while paused (5.x)
-- KEYS[3] meta  bull:<queue>:meta  HASH  queue settings: paused, opts.maxLenEvents…
-- KEYS[4] prioritized  bull:<queue>:prioritized  ZSET  job id -> priority and order
-- KEYS[5] events  bull:<queue>:events  STREAM  the queue's events
-- KEYS[6] delayed  bull:<queue>:delayed  ZSET  job id -> due time
-- KEYS[7] marker  bull:<queue>:marker  ZSET  wakes blocked workers (5.x and later)
local wait, paused, meta, prioritized, events, delayed, marker = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7]
local what, layout, version, chunk, emit = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4]), ARGV[5] ~= "0"

local bad = checkLayout(meta, version)
if bad then
  return bad
end

-- addDelayMarkerIfNeeded: a blocked worker wakes when the next delayed
-- job is due.
local function delayMarker()
  local first = rcall("ZRANGE", delayed, 0, 0, "WITHSCORES")
  local score = tonumber(first[2])
  if score ~= nil then
    rcall("ZADD", marker, score / 0x1000, "1")
  end
end

local left = 0
if layout == "5" then
  local src, dst = wait, paused
  if what == "resumed" then
    src, dst = paused, wait
  end
  local hasJobs = rcall("EXISTS", src) == 1
  if hasJobs then
    -- BullMQ's RENAME would drop a non-empty destination: refuse instead.
    if rcall("EXISTS", dst) == 1 then
      return redis.error_reply("ERR both the wait and the paused list hold jobs: not renaming one over the other")
    end
    rcall("RENAME", src, dst)
  end
  if what == "paused" then
    rcall("HSET", meta, "paused", 1)
    rcall("DEL", marker)
  else
    rcall("HDEL", meta, "paused")
    if hasJobs or rcall("ZCARD", prioritized) > 0 then
      rcall("ZADD", marker, 0, "0")
    else
      delayMarker()
    end
  end
else
  if what == "paused" then
    rcall("HSET", meta, "paused", 1)
    rcall("DEL", marker)
  else
    rcall("HDEL", meta, "paused")
    if rcall("EXISTS", paused) == 1 then
      if rcall("EXISTS", wait) == 0 then
        rcall("RENAME", paused, wait)
      else
        local jobs = rcall("LRANGE", paused, 0, chunk - 1)
        rcall("RPUSH", wait, unpack(jobs))
        rcall("LTRIM", paused, #jobs, -1)
        left = rcall("LLEN", paused)
      end
    end
    if rcall("LLEN", wait) + rcall("ZCARD", prioritized) > 0 then
      rcall("ZADD", marker, 0, "0")
    else
      delayMarker()
    end
  end
end
if emit then
  rcall("XADD", events, "*", "event", what)
end
return left
