-- KEYS[1] queue  <ns>:<q>  ZSET  id -> visible-at ms
-- KEYS[2] attrs  <ns>:<q>:Q  HASH  attributes, id -> body, <id>:rc, <id>:fr
-- KEYS[3] index  <ns>:<q>:R  ZSET  id -> visible-at ms of the received messages (chatq's, for stats)
-- KEYS[4] deadQueue  <ns>:<dlq>  ZSET  optional (when the caller knows it): the dead-letter queue's id -> visible-at ms
-- KEYS[5] deadAttrs  <ns>:<dlq>:Q  HASH  optional, with deadQueue: the dead-letter queue's attributes and bodies
-- KEYS[6..16] records  <ns>:<q>:T:<minute>  HASH  token -> answer, minutes m..m-10 (m alone on a first try)
local queue, attrs, index = KEYS[1], KEYS[2], KEYS[3]
-- (the dead-letter queue's keys are given with its name, ARGV[4]; the
-- records follow, from KEYS[4] when they are not)
local deadQueue, deadAttrs
if ARGV[4] ~= '' then
  deadQueue, deadAttrs = KEYS[4], KEYS[5]
end
local records = ARGV[7] and (deadQueue and 6 or 4) -- the first record key, when the receive has a token
-- receive: claim up to N due messages in one atomic step (RSMQ
-- receiveMessage / popMessage, for N messages and with the time read here).
-- ARGV[1] N
-- ARGV[2] visibility timeout ms, or "" for the queue's vt
-- ARGV[3] "1" to pop (delete on receive), "0" to hide for the vt
-- ARGV[4] the dead-letter queue's name that deadQueue and deadAttrs belong
-- to, or ""
-- ARGV[5] the dead-letter queue's realtime channel
-- ARGV[6] this queue's name, recorded with each message moved to the
-- dead-letter queue
-- ARGV[7], ARGV[8], with a client-chosen token: the lifetime in ms of the
--   records (luascript.Record), then passed, and the record's field (the
--   token, or <token>.<n> for the n-th call of a receive of more than 100).
--   When the field is recorded the receive was applied already: the answer
--   recorded there is returned and nothing is written, so a repeat after a
--   lost reply returns the same messages and claims no others. A receive
--   that claimed messages records its answer, as netstrings (byte for
--   byte: bodies need not be valid UTF-8); one that claimed none records
--   nothing (a waiting receive claims again).
-- Returns {status, now ms, next visible-at ms or "" (none left, or not
-- read: all N were claimed), dead-letter name,
-- moved, visible-at ms of the claimed, microseconds of the server time,
-- "1" when the call stopped at its budget of ids looked at with more due
-- ("0" otherwise), id1, body1, rc1, fr1, id2, ...}; status is "ok", "notfound", or
-- "dlq" when a message must move to a dead-letter queue whose keys were not
-- given: the messages claimed so far are returned, nothing else is written;
-- or "nodlq": as "ok", but a message that the policy would have moved was
-- delivered, because the dead-letter queue does not exist.
if records then
  local r, key = recordOf(records, ARGV[8], #KEYS)
  if r then
    local res = fromNetstrings(r)
    if not res then
      return redis.error_reply("ERR " .. key .. " " .. ARGV[8] .. " is not the record of a receive: nothing written")
    end
    return res
  end
end
local a = attributes(attrs, "maxreceives", "deadletter", "totalrecv", "rsync", "rscan", "totaldead")
if not a then
  return {"notfound"}
end
local totalrecv = a[6] or "0"
local received = 0
-- What could fail halfway (another writer's garbage) is checked before the
-- first write.
local nothing = ": nothing written"
local e = wrongtype(queue, "zset", "zset", nothing) or wrongtype(index, "zset", "zset", nothing)
if e then
  return e
end
if ARGV[2] == "" and not string.find(a[1], "^%d+$") or #a[1] > 12 or not whole(totalrecv, 15) then
  return redis.error_reply("ERR " .. attrs .. ": vt " .. a[1] .. " or totalrecv " .. totalrecv .. " is not a number: nothing written")
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
  if redis.call("HEXISTS", deadAttrs, "vt") == 0 then
    offlimit = maxrc
    maxrc = 0
  else
    local sent = redis.call("HGET", deadAttrs, "totalsent") or "0"
    e = wrongtype(deadQueue, "zset", "zset", nothing)
    if e or not whole(sent, 15) then
      return e or redis.error_reply("ERR " .. deadAttrs .. ": totalsent " .. sent .. " is not a number: nothing written")
    end
    -- The source's count of dead-lettered messages grows after the moves.
    if not whole(a[9] or "0", 15) then
      return redis.error_reply("ERR " .. attrs .. ": totaldead " .. a[9] .. " is not a number: nothing written")
    end
  end
end
-- What a claim writes, and a dead-letter move when the keys are given.
if not allowed({"ZADD", queue, "0", "x"}, {"ZREM", queue, "x"}, {"HSET", attrs, "x", "x"}, {"HDEL", attrs, "x"},
    {"HINCRBY", attrs, "totalrecv", "1"}, {"ZADD", index, "0", "x"}, {"ZREM", index, "x"})
  or maxrc > 0 and dlq ~= "" and ARGV[4] == dlq
    and not allowed({"ZADD", deadQueue, "0", "x"}, {"HSET", deadAttrs, "x", "x"}, {"HINCRBY", deadAttrs, "totalsent", "1"}) then
  return redis.error_reply("NOPERM this user may not receive from " .. queue .. " (ZADD, ZREM, HSET, HDEL, HINCRBY, here and in the dead-letter queue)" .. nothing)
end
if records and not mayRecord(records) then
  return redis.error_reply("NOPERM this user may not HSET and PEXPIRE " .. KEYS[records] .. " (the record of a receive with a token)" .. nothing)
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
  local ids = redis.call("ZRANGEBYSCORE", queue, "-inf", nowstr, "LIMIT", 0, math.min(want - got, budget - examined))
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
    local m = redis.call("HMGET", attrs, id, id .. ":rc", id .. ":fr")
    local rc = tonumber(m[2] or "0") or 0
    if not m[1] then
      -- An id without a body cannot be delivered: drop it.
      redis.call("ZREM", queue, id)
      redis.call("HDEL", attrs, id .. ":rc", id .. ":fr", id .. ":dl")
      redis.call("ZREM", index, id)
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
      redis.call("ZADD", deadQueue, nowstr, id)
      redis.call("HSET", deadAttrs, id, m[1], id .. ":dl", ARGV[6] .. " " .. rc .. " " .. nowstr)
      redis.call("HINCRBY", deadAttrs, "totalsent", 1)
      redis.call("ZREM", queue, id)
      redis.call("HDEL", attrs, id, id .. ":rc", id .. ":fr", id .. ":dl")
      redis.call("ZREM", index, id)
      -- Best-effort, as push's: a user without the channel must not fail
      -- a receive whose writes are done.
      redis.pcall("PUBLISH", ARGV[5], redis.call("ZCARD", deadQueue))
      moved = moved + 1
    else
      if offlimit > 0 and rc >= offlimit then
        pastlimit = true
      end
      redis.call("HINCRBY", attrs, "totalrecv", 1)
      received = received + 1
      if m[2] and (not string.find(m[2], "^%d+$") or #m[2] > 15) then
        -- A receive count that is not a count (another writer's garbage):
        -- count again from this receive rather than fail halfway.
        redis.call("HSET", attrs, id .. ":rc", 1)
        rc = 1
      else
        rc = redis.call("HINCRBY", attrs, id .. ":rc", 1)
      end
      local fr = m[3]
      if rc == 1 or not fr then
        fr = nowstr
      end
      if pop then
        redis.call("ZREM", queue, id)
        redis.call("HDEL", attrs, id, id .. ":rc", id .. ":fr", id .. ":dl")
        redis.call("ZREM", index, id)
      else
        redis.call("ZADD", queue, visible, id)
        redis.call("ZADD", index, visible, id)
        -- The first receive records it; so does a later one that finds
        -- none (an import with a count but no time), or the receipt
        -- handed out would name a time the queue does not hold.
        if rc == 1 or not m[3] then
          redis.call("HSET", attrs, id .. ":fr", fr)
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
  redis.call("HINCRBY", attrs, "totaldead", moved)
end
-- Keep the index's completeness marks in step with chatq's own receives
-- (a receive by another client leaves them behind totalrecv).
if received > 0 then
  local after = string.format("%.0f", tonumber(totalrecv) + received)
  if a[7] == totalrecv then
    redis.call("HSET", attrs, "rsync", after)
  end
  if a[8] == totalrecv then
    redis.call("HSET", attrs, "rscan", after)
  end
end
-- The next due time is read only when the claim fell short: a caller that
-- got all it asked for does not wait, and the read costs a call.
local next = ""
if got < want then
  local first = redis.call("ZRANGE", queue, 0, 0, "WITHSCORES")
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
if records and got > 0 then
  writeRecord(records, ARGV[8], netstrings(res), ARGV[7])
end
return res
