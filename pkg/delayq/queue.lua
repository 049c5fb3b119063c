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

-- refusing holds, per command a queue script writes with, arguments that
-- the command itself refuses (an odd field list, an increment that is not
-- a number, NX with XX) after the ACL check and before it reads or changes
-- anything: a probe for Redis 6.2, which checks a command's ACL when a
-- script calls it but has no way to ask first. SET NX XX never sets.
local refusing = {
  HSET = {"f", "v", "f"},
  HINCRBY = {"f", "x"},
  ZADD = {"NX", "XX", "0", "m"},
  SET = {"v", "NX", "XX"},
}

-- permitted reports whether the ACL lets this user run command c,
-- {name, key, args...}. Redis 7 and Valkey answer redis.acl_check_cmd (a
-- command the server lacks, renamed or disabled, is not permitted: the
-- function raises for it). Redis 6.2 checks a script's declared keys when
-- the script is called, and a command's ACL (the command, then its keys)
-- each time the script runs it, before the command looks at its
-- arguments: c runs in a form it refuses itself (above), or removes a
-- member that is not there, and the error tells an ACL refusal from the
-- command's own. A command with no such
-- form (UNLINK; SADD and SREM of the registry, in another slot on a
-- Cluster) is not probed: a script writes with it first, before any other
-- write, and the client checks the registry (see Create and Delete).
local function permitted(c)
  if redis.acl_check_cmd then
    local ok, yes = pcall(redis.acl_check_cmd, unpack(c))
    return ok and yes
  end
  local name, key = string.upper(c[1]), c[2]
  local r
  if refusing[name] then
    r = redis.pcall(name, key, unpack(refusing[name]))
  elseif name == "ZREM" or name == "HDEL" then
    -- Removing a member that is not there changes nothing (ZSCORE and
    -- HMGET: each operation that removes reads with them anyway).
    local probe = "\0chatq:acl"
    local there
    if name == "ZREM" then
      there = redis.call("ZSCORE", key, probe)
    else
      there = redis.call("HMGET", key, probe)[1]
    end
    if there then
      return true -- never so: neither chatq nor rsmq stores such a member
    end
    r = redis.pcall(name, key, probe)
  else
    return true
  end
  return not (type(r) == "table" and r.err and string.find(r.err, "The user executing the script ", 1, true))
end

-- allowed reports whether this user may run each command given as
-- {name, key, args...}, checked before a script's first write so that a
-- refusal changes nothing.
local function allowed(...)
  for _, c in ipairs({...}) do
    if not permitted(c) then
      return false
    end
  end
  return true
end

