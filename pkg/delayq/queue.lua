-- queue: the prelude of every queue script; delayq.go puts it in front of
-- each one's text. It defines the opening checks the scripts share, which
-- each script makes before its first write, and writes nothing itself.
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

-- allowed reports whether this user may run each command given as
-- {name, key, args...}. Redis 7 lets a script ask what its user may do;
-- on 6.2 (no redis.acl_check_cmd) it is true, and a refused command fails
-- at its first write, before anything changed.
local function allowed(...)
  if not redis.acl_check_cmd then
    return true
  end
  for _, c in ipairs({...}) do
    if not redis.acl_check_cmd(unpack(c)) then
      return false
    end
  end
  return true
end

