-- get: one message of a queue by id, with its state, read at one instant.
-- Read only, O(log n).
-- KEYS[1] <ns>:<q>, KEYS[2] <ns>:<q>:Q, KEYS[3] <ns>:<q>:R
-- ARGV[1] id
-- Returns {"ok", now ms, visible-at ms, body, rc, fr, in the index (1|0)}
-- (rc and fr "" when absent), {"nomessage"} when the id is not in the
-- queue, {"nobody"} when it is but its body is gone (not a message), or
-- {"notfound"}.
local a = attributes(KEYS[2], ARGV[1], ARGV[1] .. ":rc", ARGV[1] .. ":fr")
if not a then
  return {"notfound"}
end
local score = redis.call("ZSCORE", KEYS[1], ARGV[1])
if not score then
  return {"nomessage"}
end
if not a[4] then
  return {"nobody"}
end
local _, nowstr = clock()
local indexed = 0
if redis.call("ZSCORE", KEYS[3], ARGV[1]) then
  indexed = 1
end
return {"ok", nowstr, score, a[4], a[5] or "", a[6] or "", indexed}
