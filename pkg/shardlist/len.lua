-- len: the number of items in a sharded list, as LLEN, in O(1): the lengths
-- of the two end shards plus the count of items strictly between them.
--
-- KEYS[1] = <prefix>{KEY}:first, KEYS[2] = <prefix>{KEY}:last,
-- KEYS[3] = <prefix>{KEY}:mid (absent = 0); shard keys are built from
-- KEYS[1] (same hash tag, same slot).
-- state.lua, put in front of this text, sets base, first, last, stored, mid.
local total = redis.call('llen', base .. first) + mid
if first ~= last then
  total = total + redis.call('llen', base .. last)
end
return total
