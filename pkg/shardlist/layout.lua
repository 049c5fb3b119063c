-- layout: the endpoints of a sharded list, its count of items strictly
-- between the endpoints, and the length of every shard between them.
--
-- KEYS[1] = <prefix>{KEY}:first, KEYS[2] = <prefix>{KEY}:last,
-- KEYS[3] = <prefix>{KEY}:mid; shard keys are built from KEYS[1] (same hash
-- tag, same slot).
-- Returns {first, last, mid, length of shard first, ..., length of shard last}.
-- state.lua, put in front of this text, sets base, first, last, stored, mid.
local ret = {first, last, mid}
for s = first, last do
  ret[#ret + 1] = redis.call('llen', base .. s)
end
return ret
