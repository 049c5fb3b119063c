-- purge: one bounded step of deleting a queue's messages, keeping its
-- attributes and counters. The caller runs it from cursor "0" until the
-- cursor comes back "0", first over the ZSET ("z": each message and its
-- fields), then over the hash ("h": fields of messages no longer in the
-- ZSET, left by crashed non-atomic writers). Only messages pushed before
-- the purge began are deleted (a message id starts with its push time in
-- microseconds, base 36): a push during the purge is kept. ZSCAN/HSCAN visit
-- everything present for the whole scan at least once; the caller scans
-- again until a scan deletes nothing (the embedded server's cursors skip
-- elements when the scanned key shrinks).
-- KEYS[1] <ns>:<q>, KEYS[2] <ns>:<q>:Q, KEYS[3] <ns>:<q>:R
-- ARGV[1] "z" or "h", ARGV[2] cursor, ARGV[3] count hint, ARGV[4] the
-- purge's start, server microseconds
-- Returns {next cursor, messages ("z") or fields ("h") deleted}, or
-- {"notfound"}.
local a = redis.call("HMGET", KEYS[2], "vt", "delay", "maxsize")
if not a[1] or not a[2] or not a[3] then
  return {"notfound"}
end
for _, k in ipairs({KEYS[1], KEYS[3]}) do
  local ty = redis.call("TYPE", k)
  ty = ty.ok or ty
  if ty ~= "zset" and ty ~= "none" then
    return redis.error_reply("WRONGTYPE " .. k .. " is a " .. ty .. ", not a zset: nothing written")
  end
end
local start = tonumber(ARGV[4])
-- Pushed before the purge began, or not an id chatq or rsmq made.
local function old(id)
  local p = string.sub(id, 1, 10)
  if #id ~= 32 or string.find(p, "[^0-9a-z]") then
    return true
  end
  return tonumber(p, 36) < start
end
local n = 0
if ARGV[1] == "z" then
  local r = redis.call("ZSCAN", KEYS[1], ARGV[2], "COUNT", ARGV[3])
  local items = r[2]
  for i = 1, #items, 2 do
    local id = items[i]
    if old(id) then
      redis.call("ZREM", KEYS[1], id)
      redis.call("HDEL", KEYS[2], id, id .. ":rc", id .. ":fr")
      redis.call("ZREM", KEYS[3], id)
      n = n + 1
    end
  end
  return {r[1], n}
end
local r = redis.call("HSCAN", KEYS[2], ARGV[2], "COUNT", ARGV[3])
local items = r[2]
for i = 1, #items, 2 do
  local f = items[i]
  local id = string.match(f, "^([0-9A-Za-z]+)")
  if id and #id == 32 and (#f == 32 or string.sub(f, 33, 33) == ":") and old(id)
    and not redis.call("ZSCORE", KEYS[1], id) then
    redis.call("HDEL", KEYS[2], f)
    n = n + 1
  end
end
return {r[1], n}
