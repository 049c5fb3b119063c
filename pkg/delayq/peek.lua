-- peek: one page of messages by visible-at time, without receiving them,
-- optionally only those in one state or sent before a time. Read only;
-- the caller pages through with bounded counts.
-- KEYS[1] <ns>:<q>, KEYS[2] <ns>:<q>:Q, KEYS[3] <ns>:<q>:R
-- ARGV[1] first rank within the walked range (below)
-- ARGV[2] the most messages returned
-- ARGV[3] "" (every message: the queue's ZSET), "ready" (its due part),
-- "delayed" (its not-yet-due part, skipping received messages) or
-- "inflight" (the index of received messages, its not-yet-due part)
-- ARGV[4] the most entries examined
-- ARGV[5] "" or an age in microseconds: only messages sent (per the id's
-- leading base-36 microseconds) more than that before now
-- Returns {"ok", now ms, examined, done (1 at the end of the range), id1,
-- visible-at1, body1, rc1, fr1, ...} (rc and fr "" when absent) or
-- {"notfound"}.
if not attributes(KEYS[2]) then
  return {"notfound"}
end
local now, nowstr, t = clock()
local state = ARGV[3]
local want = tonumber(ARGV[2])
local budget = tonumber(ARGV[4])
-- The cutoff in microseconds: ids start with the push time's microseconds
-- in base 36 (10 digits until 2085), read with tonumber (exact
-- below 2^53; string comparison would follow the server's locale).
local cutoff
if ARGV[5] ~= "" then
  cutoff = tonumber(t[1]) * 1000000 + tonumber(t[2]) - tonumber(ARGV[5])
end
local key = KEYS[1]
local rank = tonumber(ARGV[1])
local stop = nil -- last rank of the range, nil for the end
if state == "ready" then
  stop = redis.call("ZCOUNT", KEYS[1], "-inf", nowstr) - 1
elseif state == "delayed" then
  rank = rank + redis.call("ZCOUNT", KEYS[1], "-inf", nowstr)
elseif state == "inflight" then
  key = KEYS[3]
  rank = rank + redis.call("ZCOUNT", KEYS[3], "-inf", nowstr)
end
local res = {"ok", nowstr, 0, 0}
local got, examined, done = 0, 0, 0
while got < want and examined < budget do
  local last = rank + math.min(100, budget - examined) - 1
  if stop and last > stop then
    last = stop
  end
  local page = {}
  if not stop or rank <= stop then
    page = redis.call("ZRANGE", key, rank, last, "WITHSCORES")
  end
  if #page == 0 then
    done = 1
    break
  end
  for i = 1, #page, 2 do
    if got >= want then
      break
    end
    local id, score = page[i], page[i + 1]
    examined = examined + 1
    rank = rank + 1
    local sent = cutoff and tonumber(string.sub(id, 1, 10), 36)
    if not cutoff or sent and sent < cutoff then
      local m = redis.call("HMGET", KEYS[2], id .. ":rc", id .. ":fr")
      local keep = true
      if state == "delayed" then
        -- received (a count or a first receive): not delayed
        if m[1] or m[2] then
          keep = false
        end
      elseif state == "inflight" then
        -- the score in the queue is the truth; a stale index entry (a
        -- message another client deleted) is skipped
        score = redis.call("ZSCORE", KEYS[1], id)
        keep = score ~= false and score ~= nil and (tonumber(score) or math.huge) > now
      end
      if keep then
        res[#res + 1] = id
        res[#res + 1] = score
        res[#res + 1] = redis.call("HGET", KEYS[2], id) or ""
        res[#res + 1] = m[1] or ""
        res[#res + 1] = m[2] or ""
        got = got + 1
      end
    end
  end
end
res[3] = examined
res[4] = done
return res
