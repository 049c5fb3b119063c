-- push: add ARGV[4..] to one end of a sharded list, in order, as LPUSH or
-- RPUSH would. The end shard is filled up to shard size - 1 items; when it
-- is full the endpoint moves outward to a fresh shard.
--
-- KEYS[1] = <prefix>{KEY}:first, KEYS[2] = <prefix>{KEY}:last (endpoints),
-- KEYS[3] = <prefix>{KEY}:mid (items in the shards strictly between the
-- endpoints; absent = 0). Shard keys are KEYS[1] with "first" replaced by the
-- shard number, so every key touched shares KEYS[1]'s hash tag and slot.
-- ARGV[1] = "left" | "right", ARGV[2] = shard size (>= 2; the size is an
-- argument because scripts cannot call CONFIG), ARGV[3] = wake-up marker.
-- Returns the list's length after the push, in O(1) of the items stored:
-- LLEN of the two end shards plus KEYS[3].
-- state.lua, put in front of this text, sets base, first, last, stored, mid.
local left = ARGV[1] == 'left'
local size = tonumber(ARGV[2])
if not size or size < 2 then
  return redis.error_reply('ERR shard size must be at least 2')
end
local shard = left and first or last
local other = left and last or first
local step = left and -1 or 1
local push = left and 'lpush' or 'rpush'

local i, n = 4, #ARGV
local added = 0
while i <= n do
  local len = redis.call('llen', base .. shard)
  local room = size - 1 - len
  if room > 0 then
    local j = math.min(n, i + room - 1)
    redis.call(push, base .. shard, unpack(ARGV, i, j))
    len = len + j - i + 1
    i = j + 1
  end
  if i <= n then
    -- The endpoint leaves this shard: unless it is the other end, it is
    -- now strictly between the endpoints and its items count in mid.
    if shard ~= other then added = added + len end
    shard = shard + step
    -- A shard outside the endpoints holds no items, at most a wake-up
    -- marker left by a blocking pop: start it clean.
    redis.call('del', base .. shard)
  end
end

if left and shard ~= first then
  first = shard
  redis.call('set', KEYS[1], shard)
elseif not left and shard ~= last then
  last = shard
  redis.call('set', KEYS[2], shard)
end
mid = mid + added
if mid ~= tonumber(stored or '0') then
  redis.call('set', KEYS[3], mid)
end

local total = redis.call('llen', base .. first) + mid
if first ~= last then
  total = total + redis.call('llen', base .. last)
end
return total
