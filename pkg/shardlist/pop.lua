-- pop: remove up to ARGV[2] items from one end of a sharded list, in the
-- order LPOP/RPOP with a count would return them. Empty shards at the end
-- are stepped over, and the endpoint is left on a non-empty shard unless it
-- meets the other endpoint. The wake-up marker is never returned.
--
-- KEYS[1] = <prefix>{KEY}:first, KEYS[2] = <prefix>{KEY}:last,
-- KEYS[3] = <prefix>{KEY}:mid (items in the shards strictly between the
-- endpoints; absent = 0); shard keys are built from KEYS[1] (same hash tag,
-- same slot).
-- ARGV[1] = "left" | "right", ARGV[2] = count, ARGV[3] = wake-up marker.
-- Optional ARGV[4] = a shard into which this caller's wake script pushed the
-- marker: one marker is removed from it if it is still outside the list.
-- Returns {endpoint shard after the pop, item, item, ...}.
-- state.lua, put in front of this text, sets base, first, last, stored, mid.
local left = ARGV[1] == 'left'
local want = tonumber(ARGV[2])
local marker = ARGV[3]
local skey = left and KEYS[1] or KEYS[2]
local shard = left and first or last
local other = left and last or first
local start, startmid = shard, tonumber(stored or '0')
local step = left and 1 or -1
-- before(a, b): a is strictly on the outer side of b, seen from this end.
local function before(a, b)
  if left then return a < b end
  return a > b
end
-- advance moves this endpoint one shard inward. A shard strictly before the
-- other end was between the endpoints: it is an end shard now, read with
-- LLEN from here on, so its items leave mid.
local function advance()
  shard = shard + step
  if before(shard, other) then
    mid = mid - redis.call('llen', base .. shard)
  end
end

if ARGV[4] then
  local s = tonumber(ARGV[4])
  if s < first or s > last then
    redis.call('lrem', base .. s, 1, marker)
  end
end

local out = {}
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
    advance()
  end
end

while before(shard, other) and redis.call('llen', base .. shard) == 0 do
  advance()
end
if shard ~= start then
  redis.call('set', skey, shard)
end
if mid ~= startmid then
  if mid == 0 then
    redis.call('del', KEYS[3])
  else
    redis.call('set', KEYS[3], mid)
  end
end

local ret = {shard}
for i = 1, #out do ret[i + 1] = out[i] end
return ret
