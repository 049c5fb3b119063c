-- queue: the prelude of every queue script; delayq.go puts it in front of
-- each one's text, after luascript.Permitted (allowed, the permission
-- check). It defines the opening checks the scripts share, which each
-- script makes before its first write, and writes nothing itself.
--
-- Redis 3.2 to 4 replicate scripts verbatim and refuse writes after TIME
-- unless told to replicate effects (the default since Redis 5).
if redis.replicate_commands then
  redis.replicate_commands()
end

-- attributes reads a queue's hash k: vt, delay, maxsize and the fields
-- named, in that order (HMGET); nil when the queue does not exist (create
-- writes the three first, delete removes every key at once).
local function attributes(k, ...)
  local a = redis.call("HMGET", k, "vt", "delay", "maxsize", ...)
  if not a[1] or not a[2] or not a[3] then
    return nil
  end
  return a
end

-- wrongtype is an error reply when key k exists and is not of type want
-- ("zset", "hash"), named noun in the reply (want when nil) and followed
-- by tail (": nothing written"); nil when k is a want or absent.
local function wrongtype(k, want, noun, tail)
  local ty = redis.call("TYPE", k)
  ty = ty.ok or ty
  if ty ~= want and ty ~= "none" then
    return redis.error_reply("WRONGTYPE " .. k .. " is a " .. ty .. ", not a " .. (noun or want) .. (tail or ""))
  end
end

-- whole reports whether the stored value v is a whole number of at most
-- digits characters, "-" included when signed: "nan", "inf" or a long
-- number would make a score or a count unusable.
local function whole(v, digits, signed)
  local pattern = "^%d+$"
  if signed then
    pattern = "^%-?%d+$"
  end
  return string.find(v, pattern) ~= nil and #v <= digits
end

-- clock is the server time: Unix ms as a number and as a string, and
-- TIME's reply (seconds, microseconds).
local function clock()
  local t = redis.call("TIME")
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  return now, string.format("%.0f", now), t
end

-- filter reads the message filter of a peek or an export from ARGV[i] on:
-- a state ("" for any; "ready", "delayed" or "inflight"), an age in
-- microseconds ("" or: sent, per the id's leading base-36 microseconds,
-- more than that before now), a substring ("" for any; looked for in the
-- body and the id, plainly: no Lua pattern), the least receive count ("" or
-- a number), and a time in flight in ms ("" or: received, not due, and
-- first received at least that long before now). t is TIME's reply and now
-- its ms. The state, age and count cost no call; the caller fetches rc and
-- fr for them, and the body for the substring.
local function filter(i, now, t)
  local f = {state = ARGV[i], grep = ARGV[i + 2], minrc = tonumber(ARGV[i + 3]) or 0}
  if ARGV[i + 1] ~= "" then
    -- tonumber of the base-36 digits is exact below 2^53; a string
    -- comparison would follow the server's locale.
    f.cutoff = tonumber(t[1]) * 1000000 + tonumber(t[2]) - tonumber(ARGV[i + 1])
  end
  if ARGV[i + 4] ~= "" then
    f.frcut = now - tonumber(ARGV[i + 4])
  end
  if f.grep == "" then
    f.grep = nil
  end
  -- whether passes needs a message's rc and fr (else they are read only
  -- for the messages kept)
  f.counts = f.state == "delayed" or f.state == "inflight" or f.minrc > 0 or f.frcut ~= nil
  return f
end

-- young reports whether message id fails f's age: sent too recently (or
-- an id without a time).
local function young(f, id)
  if not f.cutoff then
    return false
  end
  local sent = tonumber(string.sub(id, 1, 10), 36)
  return not sent or sent >= f.cutoff
end

-- passes reports whether a message with visible-at score, receive count rc
-- and first receive fr (false or nil when absent; needed only when
-- f.counts) passes f's state, count and time in flight (not its age or
-- substring). A score Lua cannot read counts as not due.
local function passes(f, now, score, rc, fr)
  local received = rc or fr
  if f.state ~= "" then
    local due = (tonumber(score) or math.huge) <= now
    if f.state == "ready" and not due or f.state == "delayed" and (due or received) or f.state == "inflight" and (due or not received) then
      return false
    end
  end
  if f.minrc > 0 and (tonumber(rc or "0") or 0) < f.minrc then
    return false
  end
  if f.frcut and not (fr and (tonumber(fr) or math.huge) <= f.frcut) then
    return false
  end
  return true
end

-- found reports whether f's substring is in the body or the id.
local function found(f, id, body)
  return not f.grep or string.find(body, f.grep, 1, true) ~= nil or string.find(id, f.grep, 1, true) ~= nil
end

-- current reports whether a receipt's receive count rc and first receive
-- fr still name message id's latest delivery (its fields in hash k): every
-- receive increments rc, so a later one makes the receipt stale.
local function current(k, id, rc, fr)
  local m = redis.call("HMGET", k, id .. ":rc", id .. ":fr")
  return tonumber(m[1] or "") == tonumber(rc) and tonumber(m[2] or "") == tonumber(fr)
end

-- add appends a message to a peek or export reply res: id, score, body and
-- m's rc, fr and dead-letter record ("" when absent).
local function add(res, id, score, body, m)
  res[#res + 1] = id
  res[#res + 1] = score
  res[#res + 1] = body
  res[#res + 1] = m[1] or ""
  res[#res + 1] = m[2] or ""
  res[#res + 1] = m[3] or ""
end

-- messageID is the time part of a new message's id, RSMQ's: the server
-- time t (TIME's reply) in microseconds, in base 36 (10 characters until
-- the year 5188); the client's random characters follow it.
local function messageID(t)
  local us = tonumber(t[1]) * 1000000 + tonumber(t[2])
  local digits = "0123456789abcdefghijklmnopqrstuvwxyz"
  local id = ""
  while us > 0 do
    local r = us % 36
    id = string.sub(digits, r + 1, r + 1) .. id
    us = (us - r) / 36
  end
  return id
end

-- dueAt is when a pushed message becomes due, Unix ms as a string: at the
-- time value ("at"), value ms after now ("delay"), or the queue's delay
-- (seconds) after now ("default"); nil for an "at" further ahead than
-- RSMQ's largest delay, 9999999 s.
local function dueAt(mode, value, now, delay)
  local v
  if mode == "at" then
    v = tonumber(value)
    if v > now + 9999999000 then
      return nil
    end
  elseif mode == "delay" then
    v = now + tonumber(value)
  else
    v = now + tonumber(delay) * 1000
  end
  return string.format("%.0f", v)
end

-- pushable makes the checks every push makes before its first write, in
-- this order: the queue exists; its delay and maxsize are numbers; no body
-- is longer than maxsize (lengths: the bodies' lengths in UTF-16 code units,
-- what RSMQ's maxsize counts); queue is a sorted set or absent; totalsent is
-- an integer; this user may push (ZADD, HSET, HINCRBY). It returns the
-- queue's attributes (attributes), or nil and the script's answer:
-- {"notfound"}, {"toolong", n, maxsize} with n the first body too long, or
-- an error reply.
local function pushable(queue, attrs, lengths)
  local a = attributes(attrs)
  if not a then
    return nil, {"notfound"}
  end
  if not whole(a[3], 12, true) or not whole(a[2], 12) then
    return nil, redis.error_reply("ERR " .. attrs .. ": delay " .. a[2] .. " or maxsize " .. a[3] .. " is not a number: nothing written")
  end
  local maxsize = tonumber(a[3])
  if maxsize ~= -1 then
    for n, length in ipairs(lengths) do
      if tonumber(length) > maxsize then
        return nil, {"toolong", n, a[3]}
      end
    end
  end
  local e = wrongtype(queue, "zset", "sorted set", ": nothing written")
  if e then
    return nil, e
  end
  local sent = redis.call("HGET", attrs, "totalsent")
  if sent and not whole(sent, 18, true) then
    return nil, redis.error_reply("ERR " .. attrs .. ": totalsent " .. sent .. " is not an integer: nothing written")
  end
  if not allowed({"ZADD", queue, "0", "x"}, {"HSET", attrs, "x", "x"}, {"HINCRBY", attrs, "totalsent", "1"}) then
    return nil, redis.error_reply("NOPERM this user may not push to " .. queue .. " (ZADD, HSET, HINCRBY): nothing written")
  end
  return a
end
