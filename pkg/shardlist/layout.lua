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
local stored = redis.call('get', KEYS[3])
local mid = tonumber(stored or '0')
if not stored then
  -- Absent means 0, as no middle shard is ever empty; a list written before
  -- the mid count existed has none yet: count its middle shards (the next
  -- push or pop stores the count).
  for s = first + 1, last - 1 do mid = mid + redis.call('llen', base .. s) end
end
local ret = {first, last, mid}
for s = first, last do
  ret[#ret + 1] = redis.call('llen', base .. s)
end
return ret
