-- remove.lua: one job removed from whichever state holds it, with its
-- logs and dependency keys, as BullMQ's Job.remove({removeChildren:
-- false}) (its removeJob script) does; an active job only when ARGV[3]
-- is "1", and then its lock too. Returns {code, prev}: 1 removed, -1 no
-- job, -2 active, -4 its list is longer than ARGV[4] (LREM would walk
-- it), -8 the current job of a job scheduler (BullMQ refuses it too).
-- KEYS[1] job  bull:<queue>:<id>  HASH  the job
-- KEYS[2] lock  bull:<queue>:<id>:lock  STRING  the lock of the worker processing the job
-- KEYS[3] repeatKey  bull:<queue>:repeat  ZSET  job schedulers
-- KEYS[4] meta  bull:<queue>:meta  HASH  queue settings: paused, opts.maxLenEvents…
-- KEYS[5] events  bull:<queue>:events  STREAM  the queue's events
-- KEYS[6] completed  bull:<queue>:completed  ZSET  job id -> finished at
-- KEYS[7] children  bull:<queue>:<id>:dependencies  SET  the job's unfinished children
-- KEYS[8] delayed  bull:<queue>:delayed  ZSET  job id -> due time
-- KEYS[9] failed  bull:<queue>:failed  ZSET  job id -> finished at
-- KEYS[10] prioritized  bull:<queue>:prioritized  ZSET  job id -> priority and order
-- KEYS[11] wait  bull:<queue>:wait  LIST  job ids waiting
-- KEYS[12] paused  bull:<queue>:paused  LIST  job ids waiting while paused (5.x)
-- KEYS[13] active  bull:<queue>:active  LIST  job ids being processed
local job, lock, repeatKey, meta, events, completed, children, delayed, failed, prioritized, wait, paused, active = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], KEYS[9], KEYS[10], KEYS[11], KEYS[12], KEYS[13]
local id, base, force, listMax, layout, version = ARGV[1], ARGV[2], ARGV[3] == "1", tonumber(ARGV[4]), ARGV[5], ARGV[6]

local bad = checkLayout(meta, version)
if bad then
  return bad
end
if rcall("EXISTS", job) == 0 then
  return {-1, ""}
end
local rjk = rcall("HGET", job, "rjk")
if rjk then
  local millis = rcall("ZSCORE", repeatKey, rjk)
  if millis and id == "repeat:" .. rjk .. ":" .. millis then
    return {-8, ""}
  end
end

-- The state, found as BullMQ's removeJobFromAnyState finds it, but every
-- list checked before anything is written.
local prev, from
for _, s in ipairs({{completed, "completed"}, {children, "waiting-children"}, {delayed, "delayed"},
    {failed, "failed"}, {prioritized, "prioritized"}}) do
  if rcall("ZSCORE", s[1], id) then
    from, prev = s[1], s[2]
    break
  end
end
if not from then
  if rcall("EXISTS", lock) == 1 or rcall("LPOS", active, id, "MAXLEN", listMax) then
    if not force then
      return {-2, "active"}
    end
    from, prev = active, "active"
  end
end
local lists = {{wait, "wait"}, {paused, "paused"}, {active, "active"}}
if not from or from == active then
  for _, l in ipairs(lists) do
    if rcall("LLEN", l[1]) > listMax then
      return {-4, l[2]}
    end
  end
end

-- removeParentDependencyKey, not hard: the parent that waited only for
-- this job goes to wait, as BullMQ moves it.
local parent = rcall("HGET", job, "parentKey")
if parent and parent ~= "" and rcall("EXISTS", parent) == 1 then
  local deps = parent .. ":dependencies"
  if rcall("SREM", deps, job) > 0 and rcall("SCARD", deps) == 0 then
    local parentId = string.match(parent, ".*:(.*)")
    local pbase = string.sub(parent, 1, #parent - #parentId)
    if rcall("ZREM", pbase .. "waiting-children", parentId) == 1 then
      local target = targetList(layout, pbase .. "meta", pbase .. "wait", pbase .. "paused")
      rcall("RPUSH", target, parentId)
      wake(pbase .. "marker", pausedOrMaxed(pbase .. "meta", pbase .. "active"))
      rcall("XADD", pbase .. "events", "*", "event", "waiting", "jobId", parentId, "prev", "waiting-children")
    end
  end
end

if from then
  if from == active then
    rcall("LREM", active, 1, id)
  else
    rcall("ZREM", from, id)
  end
else
  prev = "unknown"
  for _, l in ipairs(lists) do
    if rcall("LREM", l[1], 1, id) == 1 then
      prev = l[2]
      break
    end
  end
end

local deid = rcall("HGET", job, "deid")
if deid then
  local dedup = base .. "de:" .. deid
  if rcall("GET", dedup) == id then
    rcall("DEL", dedup, base .. "dn:" .. deid)
  end
end

local gone = rcall("DEL", job, job .. ":logs", job .. ":dependencies", job .. ":processed", job .. ":failed",
  job .. ":unsuccessful")
if force then
  rcall("DEL", lock)
end
if gone > 0 then
  rcall("XADD", events, "MAXLEN", "~", maxEvents(meta), "*", "event", "removed", "jobId", id, "prev", prev)
end
return {1, prev}
