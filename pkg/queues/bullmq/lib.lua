-- lib.lua is put in front of every script of this package (scripts.go):
-- the helpers that stand for BullMQ's own includes, written for chatq.
-- A script's own keys are named at its top, after these lines.
local rcall = redis.call

-- checkLayout refuses to write when the queue's meta names another
-- version than the one the caller read (BullMQ was upgraded in between).
local function checkLayout(meta, version)
  local v = rcall("HGET", meta, "version")
  if (v or "") ~= version then
    return redis.error_reply("ERR layout changed: meta version is now " .. tostring(v))
  end
  return nil
end

-- maxEvents is BullMQ's getOrSetMaxEvents: the events stream's cap,
-- written to meta with its default when missing.
local function maxEvents(meta)
  local n = rcall("HGET", meta, "opts.maxLenEvents")
  if not n then
    n = 10000
    rcall("HSET", meta, "opts.maxLenEvents", n)
  end
  return n
end

-- pausedOrMaxed is BullMQ's isQueuePausedOrMaxed: no worker may take a
-- job now, so no marker is added.
local function pausedOrMaxed(meta, active)
  local a = rcall("HMGET", meta, "paused", "concurrency")
  if a[1] then
    return true
  end
  if a[2] then
    return rcall("LLEN", active) >= tonumber(a[2])
  end
  return false
end

-- targetList is where a job made ready goes: 5.x moves the wait list to
-- the paused list while paused (getTargetQueueList); 6.x keeps wait.
local function targetList(layout, meta, wait, paused)
  if layout == "5" and rcall("HEXISTS", meta, "paused") == 1 then
    return paused
  end
  return wait
end

-- wake is BullMQ's addBaseMarkerIfNeeded: the marker a blocked worker
-- waits on (BZPOPMIN) says a job is there.
local function wake(marker, blocked)
  if not blocked then
    rcall("ZADD", marker, 0, "0")
  end
end

-- lifoPush is the push BullMQ's Job.retry passes: RPUSH for a job added
-- with opts.lifo, LPUSH otherwise.
local function lifoPush(job)
  local raw = rcall("HGET", job, "opts")
  if raw then
    local ok, opts = pcall(cjson.decode, raw)
    if ok and type(opts) == "table" and opts["lifo"] == true then
      return "RPUSH"
    end
  end
  return "LPUSH"
end

-- backToParent is 6.x's moveChildBackToParentDependencies: a retried
-- child counts again as a pending dependency of its parent.
local function backToParent(job, prev)
  local parent = rcall("HGET", job, "parentKey")
  if parent and rcall("EXISTS", parent) == 1 then
    if prev == "failed" then
      if rcall("ZREM", parent .. ":unsuccessful", job) == 1 or rcall("HDEL", parent .. ":failed", job) == 1 then
        rcall("SADD", parent .. ":dependencies", job)
      end
    elseif rcall("HDEL", parent .. ":processed", job) == 1 then
      rcall("SADD", parent .. ":dependencies", job)
    end
  end
end
