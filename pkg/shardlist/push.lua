-- push: add the items (ARGV[5..], or ARGV[6..] with a record) to one end of a sharded list, in order, as LPUSH or
-- RPUSH would. The end shard is filled up to shard size - 1 items; when it
-- is full the endpoint moves outward to a fresh shard.
--
-- KEYS: see state.lua, which is put in front of this text.
-- ARGV[1] = shard size asked for (>= 2), ARGV[2] = "1" when it was asked
-- for explicitly, "0" when it is only the default; ARGV[3] = "left" |
-- "right", ARGV[4] = the most shards to open in this call (a bound on its
-- time: with tiny shards 1000 items are many shards).
-- The size recorded in KEYS[4] wins over a default; an explicit size that
-- differs is refused (SHARDSIZE <recorded>); the first push records it.
-- Optional KEYS[6] = <prefix>{KEY}:T:<token> (STRING), the record of a push
-- made with a client-chosen token; ARGV[5] is then its lifetime in ms and
-- the items start at ARGV[6]. When the record exists the push was applied
-- already: its answer is returned and nothing is written, so a repeat after
-- a lost reply stores the items once. A push records its answer,
-- "<length> <pushed>".
-- Returns {the list's length after the push, the number of items pushed}:
-- the first items, all of them unless the shard bound stopped the call (the
-- client pushes the rest in another call). The length is O(1) of the items
-- stored: LLEN of the two end shards plus the mid count.
--
-- Everything that can fail is checked before the first write: the five
-- keys (state.lua), the end shards' types, and on a Cluster whether a shard
-- it will open is moving (TRYAGAIN). The loop runs once per shard
-- filled, at most ARGV[4] + 1 times.
local record = KEYS[6]
local from = 5 -- the first item's ARGV
if record then
  from = 6
  -- GET refuses a record of another type (WRONGTYPE) before any write.
  local r = redis.call('get', record)
  if r then
    local total, pushed = string.match(r, '^(%d+) (%d+)$')
    if not total then
      return redis.error_reply('CORRUPT ' .. record .. ' is not the record of a push')
    end
    return {tonumber(total), tonumber(pushed)}
  end
end
local size = tonumber(ARGV[1])
if not size or size < 2 then
  return redis.error_reply('ERR shard size must be at least 2')
end
if recorded then
  if ARGV[2] == '1' and size ~= recorded then
    return redis.error_reply('SHARDSIZE ' .. recorded)
  end
  size = recorded
end
local left = ARGV[3] == 'left'
local shard = left and first or last
local other = left and last or first
local step = left and -1 or 1
local push = left and 'lpush' or 'rpush'
local len, e = llen(shard)
if e then return e end
local _, oe = llen(other) -- read again for the length returned
if oe then return oe end
-- The fresh shards the loop below will open, touched before the first
-- write: on a Cluster one may be refused (moving, see state.lua).
local fresh = math.max(0, #ARGV - from + 1 - math.max(0, size - 1 - len))
fresh = math.min(tonumber(ARGV[4]), math.ceil(fresh / (size - 1)))
for k = 1, fresh do
  local key = base .. (shard + k * step)
  local m = moving(redis.pcall('llen', key), key) -- garbage there is unlinked below
  if m then return m end
end

-- Everything this push may write with (on Redis 6.2 SET is checked, the
-- others cannot be: docs/compatibility.md).
if not allowed({'set', KEYS[1], '0'}, {push, base .. shard, 'x'}, {'unlink', base .. shard}, {'incr', KEYS[5]})
    or record and not allowed({'set', record, 'x', 'px', '1'}) then
  return redis.error_reply('NOPERM this user may not write list ' .. base .. '* (SET, ' .. string.upper(push) ..
    ', UNLINK, INCR, and SET of the record of a push with a token)')
end
if not recorded then
  redis.call('set', KEYS[4], size)
end
local i, n = from, #ARGV
local added, opened = 0, 0
while i <= n do
  local room = size - 1 - len
  if room > 0 then
    local j = math.min(n, i + room - 1)
    redis.call(push, base .. shard, unpack(ARGV, i, j))
    len = len + j - i + 1
    i = j + 1
  end
  if i <= n and opened >= tonumber(ARGV[4]) then
    break
  end
  if i <= n then
    opened = opened + 1
    -- The endpoint leaves this shard: unless it is the other end, it is
    -- now strictly between the endpoints and its items count in mid.
    if shard ~= other then added = added + len end
    shard = shard + step
    -- A shard outside the endpoints holds no items, at most a wake-up
    -- marker left by a blocking pop (or garbage): start it clean.
    redis.call('unlink', base .. shard)
    len = 0
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
if mid ~= (stored or 0) then
  redis.call('set', KEYS[3], mid)
end
redis.call('incr', KEYS[5])

local total = redis.call('llen', base .. first) + mid
if first ~= last then
  total = total + redis.call('llen', base .. last)
end
if record then
  redis.call('set', record, string.format('%d %d', total, i - from), 'px', ARGV[5])
end
return {total, i - from}
