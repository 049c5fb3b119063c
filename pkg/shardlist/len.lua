-- len: the number of items in a sharded list, as LLEN, in O(1): the lengths
-- of the two end shards plus the count of items strictly between them.
--
-- KEYS[1] = <prefix>{KEY}:first, KEYS[2] = <prefix>{KEY}:last,
-- KEYS[3] = <prefix>{KEY}:mid (absent = 0); shard keys are built from
-- KEYS[1] (same hash tag, same slot).
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
local total = redis.call('llen', base .. first) + mid
if first ~= last then
  total = total + redis.call('llen', base .. last)
end
return total
