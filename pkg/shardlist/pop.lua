-- pop: remove up to ARGV[2] items from one end of a sharded list, in the
-- order LPOP/RPOP with a count would return them. Empty shards at the end
-- (emptied by the other end, or by a blocking pop that took their last item)
-- are stepped over, and the endpoint is left on a non-empty shard unless it
-- meets the other endpoint. The wake-up marker is never returned.
--
-- KEYS[1] = <prefix>{KEY}:first, KEYS[2] = <prefix>{KEY}:last; shard keys
-- are built from KEYS[1] (same hash tag, same slot).
-- ARGV[1] = "left" | "right", ARGV[2] = count, ARGV[3] = wake-up marker.
-- Optional ARGV[4] = shard number, ARGV[5] = item a blocking pop took from
-- that shard: returned if that shard was at (or beyond) this end, else put
-- back where it was before popping the real end item.
-- Returns {endpoint shard after the pop, item, item, ...}.
local left = ARGV[1] == 'left'
local want = tonumber(ARGV[2])
local marker = ARGV[3]
local base = string.sub(KEYS[1], 1, -6)
local first = tonumber(redis.call('get', KEYS[1]) or '0')
local last = tonumber(redis.call('get', KEYS[2]) or '0')
local skey = left and KEYS[1] or KEYS[2]
local okey = left and KEYS[2] or KEYS[1]
local shard = left and first or last
local other = left and last or first
local start = shard
local step = left and 1 or -1
-- before(a, b): a is strictly on the outer side of b, seen from this end.
local function before(a, b)
  if left then return a < b end
  return a > b
end

local out = {}
if ARGV[4] then
  local from = tonumber(ARGV[4])
  local item = ARGV[5]
  if not before(shard, from) then
    -- Taken from the end shard, or from a shard the end has since stepped
    -- over: it was the end item.
    out[1] = item
  else
    if before(other, from) then
      -- The other end moved past the shard while its item was out: reach
      -- out to it again; shards in between hold no items.
      for s = other + step, from - step, step do
        redis.call('del', base .. s)
      end
      redis.call('lrem', base .. from, 0, marker)
      redis.call('set', okey, from)
      other = from
    end
    redis.call(left and 'lpush' or 'rpush', base .. from, item)
  end
end

while #out < want do
  local k = base .. shard
  local n = want - #out
  local got
  if left then
    got = redis.call('lrange', k, 0, n - 1)
    if #got > 0 then redis.call('ltrim', k, #got, -1) end
    for i = 1, #got do
      if got[i] ~= marker then out[#out + 1] = got[i] end
    end
  else
    got = redis.call('lrange', k, -n, -1)
    if #got > 0 then redis.call('ltrim', k, 0, -#got - 1) end
    for i = #got, 1, -1 do
      if got[i] ~= marker then out[#out + 1] = got[i] end
    end
  end
  if #got < n then
    if not before(shard, other) then break end
    shard = shard + step
  end
end

while before(shard, other) and redis.call('llen', base .. shard) == 0 do
  shard = shard + step
end
if shard ~= start then
  redis.call('set', skey, shard)
end

local ret = {shard}
for i = 1, #out do ret[i + 1] = out[i] end
return ret
