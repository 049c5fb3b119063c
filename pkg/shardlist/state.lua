-- state: the prelude of the scripts that need a list's length (push, pop,
-- len, layout); shardlist.go puts it in front of each one's text.
--
-- KEYS[1] = <prefix>{KEY}:first, KEYS[2] = <prefix>{KEY}:last,
-- KEYS[3] = <prefix>{KEY}:mid. It sets base (the shard keys' common part,
-- KEYS[1] without "first"), the endpoints first and last, stored (the mid
-- key's value, false when absent) and mid (the items strictly between the
-- end shards).
local base = string.sub(KEYS[1], 1, -6)
local first = tonumber(redis.call('get', KEYS[1]) or '0')
local last = tonumber(redis.call('get', KEYS[2]) or '0')
local stored = redis.call('get', KEYS[3])
local mid = tonumber(stored or '0')
if not stored then
  -- Absent means 0, as no middle shard is ever empty; a list written
  -- before the mid count existed (or by the book's code) has none yet:
  -- count its middle shards (push and pop then store the count).
  for s = first + 1, last - 1 do mid = mid + redis.call('llen', base .. s) end
end
