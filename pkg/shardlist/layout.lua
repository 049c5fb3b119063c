-- layout: the endpoints of a sharded list, its count of items strictly
-- between the endpoints, and the length of every shard between them.
--
-- KEYS[1] = <prefix>{KEY}:first, KEYS[2] = <prefix>{KEY}:last,
-- KEYS[3] = <prefix>{KEY}:mid; shard keys are built from KEYS[1] (same hash
-- tag, same slot).
-- Returns {first, last, mid, length of shard first, ..., length of shard last}.
local base = string.sub(KEYS[1], 1, -6)
local first = tonumber(redis.call('get', KEYS[1]) or '0')
local last = tonumber(redis.call('get', KEYS[2]) or '0')
local mid = tonumber(redis.call('get', KEYS[3]) or '0')
local ret = {first, last, mid}
for s = first, last do
  ret[#ret + 1] = redis.call('llen', base .. s)
end
return ret
