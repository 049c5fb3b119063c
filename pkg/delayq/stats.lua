-- stats: a queue's attributes and its messages split into ready, delayed
-- (never received, not yet due) and in flight (received, still invisible),
-- read at one instant of server time. Read only; O(invisible messages).
-- KEYS[1] <ns>:<q>, KEYS[2] <ns>:<q>:Q
-- Returns {"ok", now ms, vt, delay, maxsize, totalrecv, totalsent, created,
-- modified, maxreceives, deadletter, msgs, ready, delayed, inflight,
-- next visible-at ms or ""} or {"notfound"}.
local a = redis.call("HMGET", KEYS[2], "vt", "delay", "maxsize", "totalrecv", "totalsent",
  "created", "modified", "maxreceives", "deadletter")
if not a[1] or not a[2] or not a[3] then
  return {"notfound"}
end
local t = redis.call("TIME")
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local nowstr = string.format("%.0f", now)
local msgs = redis.call("ZCARD", KEYS[1])
local ready = redis.call("ZCOUNT", KEYS[1], "-inf", nowstr)
local delayed, inflight = 0, 0
local hidden = redis.call("ZRANGEBYSCORE", KEYS[1], "(" .. nowstr, "+inf")
for _, id in ipairs(hidden) do
  if redis.call("HEXISTS", KEYS[2], id .. ":rc") == 1 or redis.call("HEXISTS", KEYS[2], id .. ":fr") == 1 then
    inflight = inflight + 1
  else
    delayed = delayed + 1
  end
end
local next = ""
if #hidden > 0 then
  next = redis.call("ZSCORE", KEYS[1], hidden[1])
end
return {"ok", nowstr, a[1], a[2], a[3], a[4] or "0", a[5] or "0", a[6] or "0", a[7] or "0",
  a[8] or "", a[9] or "", msgs, ready, delayed, inflight, next}
