-- receive: claim up to N due messages in one atomic step (RSMQ
-- receiveMessage / popMessage, for N messages and with the time read here).
-- KEYS[1] <ns>:<q>, KEYS[2] <ns>:<q>:Q, KEYS[3] <ns>:<q>:R (chatq's index of
-- received messages, id -> visible-at, for stats)
-- KEYS[4], KEYS[5]: the dead-letter queue's <ns>:<dlq> and <ns>:<dlq>:Q,
-- when the caller knows them (otherwise absent)
-- ARGV[1] N
-- ARGV[2] visibility timeout ms, or "" for the queue's vt
-- ARGV[3] "1" to pop (delete on receive), "0" to hide for the vt
-- ARGV[4] the dead-letter queue's name that KEYS[4..5] belong to, or ""
-- ARGV[5] the dead-letter queue's realtime channel
-- ARGV[6] this queue's name, recorded with each message moved to the
-- dead-letter queue
-- ARGV[7], optional: the lifetime in ms of the record of a receive made
--   with a client-chosen token, whose key <ns>:<q>:T:<token> (STRING) is
--   then the last of KEYS. When it exists the receive was applied already:
--   the answer recorded there is returned and nothing is written, so a
--   repeat after a lost reply returns the same messages and claims no
--   others. A receive that claimed messages records its answer; one that
--   claimed none records nothing (a waiting receive claims again).
-- Returns {status, now ms, next visible-at ms or "" (none left, or not
-- read: all N were claimed), dead-letter name,
-- moved, visible-at ms of the claimed, microseconds of the server time,
-- "1" when the call stopped at its budget of ids looked at with more due
-- ("0" otherwise), id1, body1, rc1, fr1, id2, ...}; status is "ok", "notfound", or
-- "dlq" when a message must move to a dead-letter queue whose keys were not
-- given: the messages claimed so far are returned, nothing else is written;
-- or "nodlq": as "ok", but a message that the policy would have moved was
-- delivered, because the dead-letter queue does not exist.
local record = ARGV[7] and KEYS[#KEYS]
if record then
  -- GET refuses a record of another type (WRONGTYPE) before any write.
  local r = redis.call("GET", record)
  if r then
    -- The answer as netstrings (<length>:<bytes>), byte for byte: bodies
    -- need not be valid UTF-8 (cjson would not keep them).
    local res, pos = {}, 1
    while pos <= #r do
      local colon = string.find(r, ":", pos, true)
      local n = colon and tonumber(string.sub(r, pos, colon - 1))
      if not n or colon + n > #r then
        return redis.error_reply("ERR " .. record .. " is not the record of a receive: nothing written")
      end
      res[#res + 1] = string.sub(r, colon + 1, colon + n)
      pos = colon + n + 1
    end
    return res
  end
end
local a = attributes(KEYS[2], "maxreceives", "deadletter", "totalrecv", "rsync", "rscan", "totaldead")
if not a then
  return {"notfound"}
end
local totalrecv = a[6] or "0"
local received = 0
-- What could fail halfway (another writer's garbage) is checked before the
-- first write.
local nothing = ": nothing written"
local e = wrongtype(KEYS[1], "zset", "zset", nothing) or wrongtype(KEYS[3], "zset", "zset", nothing)
if e then
  return e
end
if ARGV[2] == "" and not string.find(a[1], "^%d+$") or #a[1] > 12 or not whole(totalrecv, 15) then
  return redis.error_reply("ERR " .. KEYS[2] .. ": vt " .. a[1] .. " or totalrecv " .. totalrecv .. " is not a number: nothing written")
end
local now, nowstr, t = clock()
local vt = tonumber(a[1]) * 1000
if ARGV[2] ~= "" then
  vt = tonumber(ARGV[2])
end
local visible = string.format("%.0f", now + vt)
local pop = ARGV[3] == "1"
local maxrc = tonumber(a[4] or "0") or 0
local dlq = a[5] or ""
local offlimit = 0
local pastlimit = false
if maxrc > 0 and dlq ~= "" and ARGV[4] == dlq then
  -- A dead-letter queue deleted since the policy was set turns it off:
  -- the message stays here and is delivered (never lost); the caller is
  -- told ("nodlq").
  if redis.call("HEXISTS", KEYS[5], "vt") == 0 then
    offlimit = maxrc
    maxrc = 0
  else
    local sent = redis.call("HGET", KEYS[5], "totalsent") or "0"
    e = wrongtype(KEYS[4], "zset", "zset", nothing)
    if e or not whole(sent, 15) then
      return e or redis.error_reply("ERR " .. KEYS[5] .. ": totalsent " .. sent .. " is not a number: nothing written")
    end
    -- The source's count of dead-lettered messages grows after the moves.
    if not whole(a[9] or "0", 15) then
      return redis.error_reply("ERR " .. KEYS[2] .. ": totaldead " .. a[9] .. " is not a number: nothing written")
    end
  end
end
-- What a claim writes, and a dead-letter move when the keys are given.
if not allowed({"ZADD", KEYS[1], "0", "x"}, {"ZREM", KEYS[1], "x"}, {"HSET", KEYS[2], "x", "x"}, {"HDEL", KEYS[2], "x"},
    {"HINCRBY", KEYS[2], "totalrecv", "1"}, {"ZADD", KEYS[3], "0", "x"}, {"ZREM", KEYS[3], "x"})
  or maxrc > 0 and dlq ~= "" and ARGV[4] == dlq
    and not allowed({"ZADD", KEYS[4], "0", "x"}, {"HSET", KEYS[5], "x", "x"}, {"HINCRBY", KEYS[5], "totalsent", "1"}) then
  return redis.error_reply("NOPERM this user may not receive from " .. KEYS[1] .. " (ZADD, ZREM, HSET, HDEL, HINCRBY, here and in the dead-letter queue)" .. nothing)
end
if record and not allowed({"SET", record, "x", "PX", "1"}) then
  return redis.error_reply("NOPERM this user may not SET " .. record .. " (the record of a receive with a token)" .. nothing)
end
local want = tonumber(ARGV[1])
local out = {}
local got = 0
local moved = 0
local status = "ok"
-- Every id looked at counts against the budget, dropped and dead-lettered
-- ones too, so that a queue full of messages past their limit is moved a
-- budget per call, not all in one. A message claimed with a vt of 0 is due
-- again at once: it is not claimed twice in one call.
local budget = 1000
local examined = 0
local claimed = {}
local more = "0"
while got < want and status == "ok" do
  if examined >= budget then
    more = "1"
    break
  end
  local ids = redis.call("ZRANGEBYSCORE", KEYS[1], "-inf", nowstr, "LIMIT", 0, math.min(want - got, budget - examined))
  local fresh = {}
  for _, id in ipairs(ids) do
    if not claimed[id] then
      fresh[#fresh + 1] = id
    end
  end
  if #fresh == 0 then
    break
  end
  for _, id in ipairs(fresh) do
    examined = examined + 1
    local m = redis.call("HMGET", KEYS[2], id, id .. ":rc", id .. ":fr")
    local rc = tonumber(m[2] or "0") or 0
    if not m[1] then
      -- An id without a body cannot be delivered: drop it.
      redis.call("ZREM", KEYS[1], id)
      redis.call("HDEL", KEYS[2], id .. ":rc", id .. ":fr", id .. ":dl")
      redis.call("ZREM", KEYS[3], id)
    elseif maxrc > 0 and dlq ~= "" and rc >= maxrc then
      if ARGV[4] ~= dlq then
        status = "dlq"
        break
      end
      -- Received maxreceives times already: this receive would exceed the
      -- limit, so the message moves to the dead-letter queue instead, under
      -- the same id, visible there now, with a record of where it came
      -- from, its receive count here and when ("<queue> <rc> <ms>", in a
      -- field rsmq never reads; redrive goes back by it).
      redis.call("ZADD", KEYS[4], nowstr, id)
      redis.call("HSET", KEYS[5], id, m[1], id .. ":dl", ARGV[6] .. " " .. rc .. " " .. nowstr)
      redis.call("HINCRBY", KEYS[5], "totalsent", 1)
      redis.call("ZREM", KEYS[1], id)
      redis.call("HDEL", KEYS[2], id, id .. ":rc", id .. ":fr", id .. ":dl")
      redis.call("ZREM", KEYS[3], id)
      -- Best-effort, as push's: a user without the channel must not fail
      -- a receive whose writes are done.
      redis.pcall("PUBLISH", ARGV[5], redis.call("ZCARD", KEYS[4]))
      moved = moved + 1
    else
      if offlimit > 0 and rc >= offlimit then
        pastlimit = true
      end
      redis.call("HINCRBY", KEYS[2], "totalrecv", 1)
      received = received + 1
      if m[2] and (not string.find(m[2], "^%d+$") or #m[2] > 15) then
        -- A receive count that is not a count (another writer's garbage):
        -- count again from this receive rather than fail halfway.
        redis.call("HSET", KEYS[2], id .. ":rc", 1)
        rc = 1
      else
        rc = redis.call("HINCRBY", KEYS[2], id .. ":rc", 1)
      end
      local fr = m[3]
      if rc == 1 or not fr then
        fr = nowstr
      end
      if pop then
        redis.call("ZREM", KEYS[1], id)
        redis.call("HDEL", KEYS[2], id, id .. ":rc", id .. ":fr", id .. ":dl")
        redis.call("ZREM", KEYS[3], id)
      else
        redis.call("ZADD", KEYS[1], visible, id)
        redis.call("ZADD", KEYS[3], visible, id)
        -- The first receive records it; so does a later one that finds
        -- none (an import with a count but no time), or the receipt
        -- handed out would name a time the queue does not hold.
        if rc == 1 or not m[3] then
          redis.call("HSET", KEYS[2], id .. ":fr", fr)
        end
      end
      out[#out + 1] = id
      out[#out + 1] = m[1]
      out[#out + 1] = rc
      out[#out + 1] = fr
      got = got + 1
      claimed[id] = true
    end
  end
end
-- chatq's counter of the messages this queue moved to its dead-letter
-- queue (a field rsmq ignores), for metrics.
if moved > 0 then
  redis.call("HINCRBY", KEYS[2], "totaldead", moved)
end
-- Keep the index's completeness marks in step with chatq's own receives
-- (a receive by another client leaves them behind totalrecv).
if received > 0 then
  local after = string.format("%.0f", tonumber(totalrecv) + received)
  if a[7] == totalrecv then
    redis.call("HSET", KEYS[2], "rsync", after)
  end
  if a[8] == totalrecv then
    redis.call("HSET", KEYS[2], "rscan", after)
  end
end
-- The next due time is read only when the claim fell short: a caller that
-- got all it asked for does not wait, and the read costs a call.
local next = ""
if got < want then
  local first = redis.call("ZRANGE", KEYS[1], 0, 0, "WITHSCORES")
  if #first > 0 then
    next = first[2]
  end
end
-- The microseconds let a waiting client sleep until the exact due time.
if pastlimit and status == "ok" then
  status = "nodlq"
end
local res = {status, nowstr, next, dlq, moved, visible, t[2], more}
for _, v in ipairs(out) do
  res[#res + 1] = v
end
if record and got > 0 then
  local parts = {}
  for i, v in ipairs(res) do
    local s = tostring(v)
    parts[i] = #s .. ":" .. s
  end
  redis.call("SET", record, table.concat(parts), "PX", ARGV[7])
end
return res
