-- redrive: move up to N messages of a dead-letter queue back to a queue, in
-- one atomic step, keeping each id and body; the receive count starts over
-- and the message is due now in the destination (a dead-letter move in
-- reverse). A message is in exactly one of the two queues at every moment.
-- KEYS[1] deadqueue  <ns>:<dlq>  ZSET  the dead-letter queue: message id -> visible-at ms
-- KEYS[2] deadattrs  <ns>:<dlq>:Q  HASH  the dead-letter queue's attributes and message bodies
-- KEYS[3] deadindex  <ns>:<dlq>:R  ZSET  the dead-letter queue's index of received messages
-- KEYS[4] queue  <ns>:<q>  ZSET  the destination: message id -> visible-at ms; optional (absent for a walk that only looks: nothing is written)
-- KEYS[5] attrs  <ns>:<q>:Q  HASH  the destination's attributes and message bodies; optional
-- KEYS[6] index  <ns>:<q>:R  ZSET  the destination's index of received messages; optional
local deadqueue, deadattrs, deadindex, queue, attrs, index = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
-- ARGV[1] N, at most this many moved (the caller keeps it at 100 or less)
-- ARGV[2] at most this many dead-letter queue entries examined
-- ARGV[3], ARGV[4] the cursor: visible-at ms and id of the last entry an
-- earlier call of the same walk left in the dead-letter queue, or "" ""
-- to start at its first entry
-- ARGV[5] the destination's realtime channel
-- ARGV[6] the destination's name ("" with no destination)
-- ARGV[7] which messages go there: "to" every one; "origin" those whose
-- recorded origin (the <id>:dl field a dead-letter move writes: "<queue>
-- <rc> <ms>") is the destination; "fallback" those too, and those with no
-- usable origin (none recorded, or one of ARGV[8]); "gone" only those whose
-- origin is one of ARGV[8]
-- ARGV[8] origins that no longer exist, separated by spaces
-- ARGV[9] the dead-letter queue's name (an origin that names it is none)
-- The walk is in (visible-at, id) order, the ZSET's. Left in place, each
-- moving the cursor past it: messages that go elsewhere, messages in flight
-- (visible-at after now, and received: in the index or with an <id>:rc or
-- <id>:fr field; someone works on them), ids that exist in the destination,
-- bodies over the destination's maxsize, and ids without a body (not a
-- message).
-- Returns {"ok", moved, in flight skipped, cursor visible-at, cursor id,
-- done (1 when the walk reached the end), entries in the dead-letter queue
-- before this call, now ms, left without a destination and no origin
-- recorded, left without a destination and a gone origin, k, k other
-- origins seen (distinct), kind1, id1, ...} where each kind is "exists" or
-- "toolong"; or {"notfound", "dlq" | "dest"}. In flight, exists and too
-- long count only messages that go to the destination.
if not attributes(deadattrs) then
  return {"notfound", "dlq"}
end
local dest = ARGV[6]
local maxsize = -1
if dest ~= "" then
  local q = attributes(attrs, "totalsent")
  if not q then
    return {"notfound", "dest"}
  end
  -- Everything that could fail halfway is checked before the first write.
  if deadqueue == queue then
    return redis.error_reply("ERR " .. deadqueue .. ": a queue cannot be redriven into itself: nothing written")
  end
  for _, k in ipairs({deadqueue, deadindex, queue, index}) do
    local e = wrongtype(k, "zset", "zset", ": nothing written")
    if e then
      return e
    end
  end
  local sent = q[4] or "0"
  if not whole(sent, 15) or not whole(q[3], 12, true) then
    return redis.error_reply("ERR " .. attrs .. ": totalsent " .. sent .. " or maxsize " .. q[3] .. " is not a number: nothing written")
  end
  maxsize = tonumber(q[3])
end
local mode = ARGV[7]
local gone = {}
for name in string.gmatch(ARGV[8], "%S+") do
  gone[name] = true
end
local now, nowstr = clock()
local want = tonumber(ARGV[1])
local budget = tonumber(ARGV[2])
local before = redis.call("ZCARD", deadqueue)

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
  if redis.call("ZSCORE", deadqueue, cid) == cscore then
    rank = redis.call("ZRANK", deadqueue, cid) + 1
  else
    rank = redis.call("ZCOUNT", deadqueue, "-inf", "(" .. cscore)
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

-- route is where the message whose <id>:dl field is dl goes: the
-- destination (true), elsewhere (false, and the name of the origin it goes
-- to, if any), or nowhere ("none" or "gone": no destination for it).
local function route(dl)
  if mode == "to" then
    return true
  end
  local origin = dl and string.match(dl, "^([%w_%-]+) ")
  if origin == ARGV[9] then
    origin = nil -- the dead-letter queue itself: not an origin
  end
  if origin and gone[origin] then
    if mode == "gone" then
      return dest ~= "", nil, "gone"
    end
    return false
  end
  if mode == "gone" then
    return false
  end
  if origin then
    return origin == dest, origin
  end
  if mode == "fallback" then
    if dest ~= "" then
      return true
    end
    return false, nil, "none"
  end
  return false
end

local moved, inflight, examined, done = 0, 0, 0, 0
local nolegacy, nogone = 0, 0
local others, seenorigin = {}, {}
local out = {}
-- The moves are collected during the walk and written at the end, a few
-- variadic commands for the whole call (one command per message per key
-- cost about twice the server time). The walk's ranks stay valid meanwhile.
local ids, bodies, counts = {}, {}, {}
while moved < want and examined < budget do
  local page = redis.call("ZRANGE", deadqueue, rank, rank + math.min(100, budget - examined) - 1, "WITHSCORES")
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
      local dl = false
      if mode ~= "to" then
        dl = redis.call("HGET", deadattrs, id .. ":dl")
      end
      local here, origin, nowhere = route(dl)
      if nowhere == "none" then
        nolegacy = nolegacy + 1
      elseif nowhere == "gone" and dest == "" then
        nogone = nogone + 1
      end
      if origin and not here and not seenorigin[origin] then
        seenorigin[origin] = true
        others[#others + 1] = origin
      end
      if here then
        local busy = false
        -- (a score Lua cannot read, 1e+300 in gopher-lua, counts as not due)
        if (tonumber(score) or math.huge) > now then
          local rf = redis.call("HMGET", deadattrs, id .. ":rc", id .. ":fr")
          busy = rf[1] or rf[2] or redis.call("ZSCORE", deadindex, id)
        end
        local body
        if not busy then
          body = redis.call("HGET", deadattrs, id)
        end
        if busy then
          inflight = inflight + 1
        elseif not body then
          -- an id without a body is not a message (receive drops it): left
        elseif redis.call("ZSCORE", queue, id) or redis.call("HEXISTS", attrs, id) == 1 then
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
          counts[#counts + 1] = id .. ":dl"
        end
      end
    end
    if stay then
      cscore, cid = score, id
    end
  end
end
if moved > 0 and not allowed({"ZADD", queue, "0", "x"}, {"HSET", attrs, "x", "x"}, {"HDEL", attrs, "x"},
    {"ZREM", index, "x"}, {"HINCRBY", attrs, "totalsent", "1"}, {"ZREM", deadqueue, "x"}, {"HDEL", deadattrs, "x"}, {"ZREM", deadindex, "x"}) then
  return redis.error_reply("NOPERM this user may not redrive " .. deadqueue .. " into " .. queue .. " (ZADD, ZREM, HSET, HDEL, HINCRBY): nothing written")
end
if moved > 0 then
  -- Into the destination, as fresh messages due now: no receive count (an
  -- orphan <id>:rc there would be taken for one), so not in its index, and
  -- no record of a dead-letter move.
  local z = {}
  for k, id in ipairs(ids) do
    z[2 * k - 1] = nowstr
    z[2 * k] = id
  end
  redis.call("ZADD", queue, unpack(z))
  redis.call("HSET", attrs, unpack(bodies))
  redis.call("HDEL", attrs, unpack(counts))
  redis.call("ZREM", index, unpack(ids))
  redis.call("HINCRBY", attrs, "totalsent", moved)
  -- Out of the dead-letter queue, with their receive counts, records of
  -- their move and index entries.
  redis.call("ZREM", deadqueue, unpack(ids))
  redis.call("HDEL", deadattrs, unpack(ids))
  redis.call("HDEL", deadattrs, unpack(counts))
  redis.call("ZREM", deadindex, unpack(ids))
end
if moved > 0 then
  -- Best-effort, as push's: a user without the channel must not fail a
  -- redrive whose writes are done.
  redis.pcall("PUBLISH", ARGV[5], redis.call("ZCARD", queue))
end
local res = {"ok", moved, inflight, cscore, cid, done, before, nowstr, nolegacy, nogone, #others}
for _, v in ipairs(others) do
  res[#res + 1] = v
end
for _, v in ipairs(out) do
  res[#res + 1] = v
end
return res
