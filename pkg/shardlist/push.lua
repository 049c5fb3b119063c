-- KEYS[1] firstkey  {KEY}:first  STRING  number of the left end shard; absent means 0
-- KEYS[2] lastkey  {KEY}:last  STRING  number of the right end shard; absent means 0
-- KEYS[3] midkey  {KEY}:mid  STRING  items in the shards strictly between the ends; absent means 0 (or a list written before it existed)
-- KEYS[4] sizekey  {KEY}:size  STRING  the shard size recorded with the list; absent until its first push
-- KEYS[5] verkey  {KEY}:ver  STRING  the write counter
-- KEYS[6..16] records  {KEY}:T:<minute>  HASH  token -> answer, minutes m..m-10 (m alone on a first try)
local firstkey, lastkey, midkey, sizekey, verkey = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
-- (state.lua, put in front of this text, reads the first five; the shard
-- keys <prefix>{KEY}:<n>, LISTs, are built from them, in their slot)
local records = KEYS[6] and 6 -- the first record key, when the push has a token
-- push: add the items (ARGV[5..], or ARGV[7..] with a token) to one end of a sharded list, in order, as LPUSH or
-- RPUSH would. The end shard is filled up to shard size - 1 items; when it
-- is full the endpoint moves outward to a fresh shard.
--
-- ARGV[1] = shard size asked for (>= 2), ARGV[2] = "1" when it was asked
-- for explicitly, "0" when it is only the default; ARGV[3] = "left" |
-- "right", ARGV[4] = the most shards to open in this call (a bound on its
-- time: with tiny shards 1000 items are many shards).
-- The size recorded in sizekey wins over a default; an explicit size that
-- differs is refused (SHARDSIZE <recorded>); the first push records it.
-- With a client-chosen token, the records (luascript.Record) are passed,
-- ARGV[5] is their lifetime in ms, ARGV[6] the record's field (the token,
-- or <token>.<n> for the n-th call of a push), and the items start at
-- ARGV[7]. When the field is recorded the push was applied already: its
-- answer is returned and nothing is written, so a repeat after a lost
-- reply stores the items once. A push records its answer,
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
local from = 5 -- the first item's ARGV
if records then
  from = 7
  local r, key = recordOf(records, ARGV[6], #KEYS)
  if r then
    local total, pushed = string.match(r, '^(%d+) (%d+)$')
    if not total then
      return redis.error_reply('CORRUPT ' .. key .. ' ' .. ARGV[6] .. ' is not the record of a push')
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
if not allowed({'set', firstkey, '0'}, {push, base .. shard, 'x'}, {'unlink', base .. shard}, {'incr', verkey})
    or records and not mayRecord(records) then
  return redis.error_reply('NOPERM this user may not write list ' .. base .. '* (SET, ' .. string.upper(push) ..
    ', UNLINK, INCR, and HSET and PEXPIRE of the record of a push with a token)')
end
if not recorded then
  redis.call('set', sizekey, size)
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
  redis.call('set', firstkey, shard)
elseif not left and shard ~= last then
  last = shard
  redis.call('set', lastkey, shard)
end
mid = mid + added
if mid ~= (stored or 0) then
  redis.call('set', midkey, mid)
end
redis.call('incr', verkey)

local total = redis.call('llen', base .. first) + mid
if first ~= last then
  total = total + redis.call('llen', base .. last)
end
if records then
  writeRecord(records, ARGV[6], string.format('%d %d', total, i - from), ARGV[5])
end
return {total, i - from}
