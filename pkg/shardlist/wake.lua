-- wake: run just before a blocking pop waits on shard ARGV[2], which was this
-- end's shard when the list was last seen empty. If the endpoints have since
-- moved so that the shard is outside the list, push the wake-up marker into
-- it so that the wait that follows (BLMOVE of the shard onto itself) returns
-- at once and the caller looks again ("Redis in Action" §11.4.4). The
-- caller's next pop removes the marker again.
--
-- KEYS[1] = <prefix>{KEY}:first, KEYS[2] = <prefix>{KEY}:last; the shard key
-- is built from KEYS[1] (same hash tag, same slot). Only shards outside
-- first..last are written, never an end or a middle shard.
-- ARGV[1] = "left" | "right", ARGV[2] = shard number, ARGV[3] = marker.
-- Returns 1 when the marker was pushed, else 0.
local left = ARGV[1] == 'left'
local shard = tonumber(ARGV[2])
local base = string.sub(KEYS[1], 1, -6)
local first = tonumber(redis.call('get', KEYS[1]) or '0')
local last = tonumber(redis.call('get', KEYS[2]) or '0')
if shard < first or shard > last then
  redis.call(left and 'lpush' or 'rpush', base .. shard, ARGV[3])
  return 1
end
return 0
