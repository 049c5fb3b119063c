-- len: the number of items in a sharded list, as LLEN, in O(1): the lengths
-- of the two end shards plus the count of items strictly between them.
--
-- KEYS[1] = <prefix>{KEY}:first, KEYS[2] = <prefix>{KEY}:last,
-- KEYS[3] = <prefix>{KEY}:mid (absent = 0); shard keys are built from
-- KEYS[1] (same hash tag, same slot).
local base = string.sub(KEYS[1], 1, -6)
local first = tonumber(redis.call('get', KEYS[1]) or '0')
local last = tonumber(redis.call('get', KEYS[2]) or '0')
local total = redis.call('llen', base .. first) + tonumber(redis.call('get', KEYS[3]) or '0')
if first ~= last then
  total = total + redis.call('llen', base .. last)
end
return total
