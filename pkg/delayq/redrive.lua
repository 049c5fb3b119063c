-- redrive: move up to N messages of a dead-letter queue back to a queue, in
-- one atomic step, keeping each id and body; the receive count starts over
-- and the message is due now in the destination (a dead-letter move in
-- reverse). A message is in exactly one of the two queues at every moment.
-- KEYS[1] <ns>:<dlq>, KEYS[2] <ns>:<dlq>:Q, KEYS[3] <ns>:<dlq>:R
-- KEYS[4] <ns>:<q>, KEYS[5] <ns>:<q>:Q, KEYS[6] <ns>:<q>:R (destination)
-- ARGV[1] N, at most this many moved (the caller keeps it at 100 or less)
-- ARGV[2] at most this many dead-letter queue entries examined
-- ARGV[3], ARGV[4] the cursor: visible-at ms and id of the last entry an
-- earlier call of the same redrive left in the dead-letter queue, or "" ""
-- to start at its first entry
-- ARGV[5] the destination's realtime channel
-- The walk is in (visible-at, id) order, the ZSET's. Left in place, each
-- moving the cursor past it: messages in flight (visible-at after now, and
-- received: in the index or with an <id>:rc or <id>:fr field; someone works
-- on them), ids that exist in the destination, bodies over the
-- destination's maxsize, and ids without a body (not a message).
-- Returns {"ok", moved, in flight skipped, cursor visible-at, cursor id,
-- done (1 when the walk reached the end), entries in the dead-letter queue
-- before this call, now ms, kind1, id1, ...} where each kind is "exists"
-- or "toolong"; or {"notfound", "dlq" | "dest"}.
if not attributes(KEYS[2]) then
  return {"notfound", "dlq"}
end
local q = attributes(KEYS[5], "totalsent")
if not q then
  return {"notfound", "dest"}
end
-- Everything that could fail halfway is checked before the first write.
if KEYS[1] == KEYS[4] then
  return redis.error_reply("ERR " .. KEYS[1] .. ": a queue cannot be redriven into itself: nothing written")
end
for _, k in ipairs({KEYS[1], KEYS[3], KEYS[4], KEYS[6]}) do
  local e = wrongtype(k, "zset", "zset", ": nothing written")
  if e then
    return e
  end
end
local sent = q[4] or "0"
if not whole(sent, 15) or not whole(q[3], 12, true) then
  return redis.error_reply("ERR " .. KEYS[5] .. ": totalsent " .. sent .. " or maxsize " .. q[3] .. " is not a number: nothing written")
end
local maxsize = tonumber(q[3])
local now, nowstr = clock()
local want = tonumber(ARGV[1])
local budget = tonumber(ARGV[2])
local before = redis.call("ZCARD", KEYS[1])

-- len16 is a body's length in UTF-16 code units, as maxsize counts it
-- (JavaScript's String length): one per character, two above U+FFFF. Only
-- needed when the byte length is over maxsize (it is never smaller).
local function len16(s)
  local _, cont = string.gsub(s, "[\128-\191]", "")
  local _, four = string.gsub(s, "[\240-\247]", "")
  return #s - cont + four
end

-- Where the walk starts: after the cursor entry when it is still there with
-- the same score (ZRANK is exact), else at the first entry of its score,
-- stepping over the entries of that score up to its id (left by earlier
-- calls: seen, not counted again).
local rank = 0
local cscore, cid = ARGV[3], ARGV[4]
local seen = false
if cid ~= "" then
  if redis.call("ZSCORE", KEYS[1], cid) == cscore then
    rank = redis.call("ZRANK", KEYS[1], cid) + 1
  else
    rank = redis.call("ZCOUNT", KEYS[1], "-inf", "(" .. cscore)
    seen = true
  end
end
local seenscore, seenid = cscore, cid

-- notafter reports a <= b byte by byte, as the ZSET orders equal scores
-- (Lua's own string comparison follows the server's locale).
local function notafter(a, b)
  for i = 1, math.min(#a, #b) do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then
      return x < y
    end
  end
  return #a <= #b
end

local moved, inflight, examined, done = 0, 0, 0, 0
local out = {}
-- The moves are collected during the walk and written at the end, a few
-- variadic commands for the whole call (one command per message per key
-- cost about twice the server time). The walk's ranks stay valid meanwhile.
local ids, bodies, counts = {}, {}, {}
while moved < want and examined < budget do
  local page = redis.call("ZRANGE", KEYS[1], rank, rank + math.min(100, budget - examined) - 1, "WITHSCORES")
  if #page == 0 then
    done = 1
    break
  end
  for i = 1, #page, 2 do
    if moved >= want then
      break
    end
    local id, score = page[i], page[i + 1]
    examined = examined + 1
    rank = rank + 1
    local stay = true
    if seen and score == seenscore and notafter(id, seenid) then
      -- left by an earlier call: already counted
    else
      seen = false
      local busy = false
      -- (a score Lua cannot read, 1e+300 in gopher-lua, counts as not due)
      if (tonumber(score) or math.huge) > now then
        local rf = redis.call("HMGET", KEYS[2], id .. ":rc", id .. ":fr")
        busy = rf[1] or rf[2] or redis.call("ZSCORE", KEYS[3], id)
      end
      local body
      if not busy then
        body = redis.call("HGET", KEYS[2], id)
      end
      if busy then
        inflight = inflight + 1
      elseif not body then
        -- an id without a body is not a message (receive drops it): left
      elseif redis.call("ZSCORE", KEYS[4], id) or redis.call("HEXISTS", KEYS[5], id) == 1 then
        out[#out + 1] = "exists"
        out[#out + 1] = id
      elseif maxsize ~= -1 and #body > maxsize and len16(body) > maxsize then
        out[#out + 1] = "toolong"
        out[#out + 1] = id
      else
        stay = false
        moved = moved + 1
        ids[moved] = id
        bodies[#bodies + 1] = id
        bodies[#bodies + 1] = body
        counts[#counts + 1] = id .. ":rc"
        counts[#counts + 1] = id .. ":fr"
      end
    end
    if stay then
      cscore, cid = score, id
    end
  end
end
if moved > 0 then
  -- Into the destination, as fresh messages due now: no receive count (an
  -- orphan <id>:rc there would be taken for one), so not in its index.
  local z = {}
  for k, id in ipairs(ids) do
    z[2 * k - 1] = nowstr
    z[2 * k] = id
  end
  redis.call("ZADD", KEYS[4], unpack(z))
  redis.call("HSET", KEYS[5], unpack(bodies))
  redis.call("HDEL", KEYS[5], unpack(counts))
  redis.call("ZREM", KEYS[6], unpack(ids))
  redis.call("HINCRBY", KEYS[5], "totalsent", moved)
  -- Out of the dead-letter queue, with their receive counts and index
  -- entries.
  redis.call("ZREM", KEYS[1], unpack(ids))
  redis.call("HDEL", KEYS[2], unpack(ids))
  redis.call("HDEL", KEYS[2], unpack(counts))
  redis.call("ZREM", KEYS[3], unpack(ids))
end
if moved > 0 then
  -- Best-effort, as push's: a user without the channel must not fail a
  -- redrive whose writes are done.
  redis.pcall("PUBLISH", ARGV[5], redis.call("ZCARD", KEYS[4]))
end
local res = {"ok", moved, inflight, cscore, cid, done, before, nowstr}
for _, v in ipairs(out) do
  res[#res + 1] = v
end
return res
