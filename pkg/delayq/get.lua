-- get: one message of a queue by id, with its state, read at one instant.
-- Read only, O(log n).
-- KEYS[1] queue  <ns>:<q>  ZSET  message id -> visible-at ms
-- KEYS[2] attrs  <ns>:<q>:Q  HASH  queue attributes and message bodies
-- KEYS[3] index  <ns>:<q>:R  ZSET  chatq's index of received messages: id -> visible-at ms
local queue, attrs, index = KEYS[1], KEYS[2], KEYS[3]
-- ARGV[1] id
-- Returns {"ok", now ms, visible-at ms, body, rc, fr, in the index (1|0),
-- dead-letter record} (rc, fr and the record "" when absent), {"nomessage"} when the id is not in the
-- queue, {"nobody"} when it is but its body is gone (not a message), or
-- {"notfound"}.
local a = attributes(attrs, ARGV[1], ARGV[1] .. ":rc", ARGV[1] .. ":fr", ARGV[1] .. ":dl")
if not a then
  return {"notfound"}
end
local score = redis.call("ZSCORE", queue, ARGV[1])
if not score then
  return {"nomessage"}
end
if not a[4] then
  return {"nobody"}
end
local _, nowstr = clock()
local indexed = 0
if redis.call("ZSCORE", index, ARGV[1]) then
  indexed = 1
end
return {"ok", nowstr, score, a[4], a[5] or "", a[6] or "", indexed, a[7] or ""}
