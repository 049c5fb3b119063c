-- peek: one page of messages by visible-at time, without receiving them.
-- Read only; the caller pages through with bounded counts.
-- KEYS[1] <ns>:<q>, KEYS[2] <ns>:<q>:Q
-- ARGV[1] first rank, ARGV[2] count
-- Returns {"ok", now ms, id1, visible-at1, body1, rc1, fr1, ...} (rc and
-- fr "" when absent) or {"notfound"}.
local a = redis.call("HMGET", KEYS[2], "vt", "delay", "maxsize")
if not a[1] or not a[2] or not a[3] then
  return {"notfound"}
end
local t = redis.call("TIME")
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local res = {"ok", string.format("%.0f", now)}
local first = tonumber(ARGV[1])
local ids = redis.call("ZRANGE", KEYS[1], first, first + tonumber(ARGV[2]) - 1, "WITHSCORES")
for i = 1, #ids, 2 do
  local id = ids[i]
  local m = redis.call("HMGET", KEYS[2], id, id .. ":rc", id .. ":fr")
  res[#res + 1] = id
  res[#res + 1] = ids[i + 1]
  res[#res + 1] = m[1] or ""
  res[#res + 1] = m[2] or ""
  res[#res + 1] = m[3] or ""
end
return res
