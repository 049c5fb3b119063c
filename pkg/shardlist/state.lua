-- state: the prelude of every list script; shardlist.go puts it in front of
-- each one's text, after a line that sets `legacy` ('count' or 'skip').
--
-- KEYS[1] firstkey  {KEY}:first  STRING  number of the left end shard; absent means 0
-- KEYS[2] lastkey  {KEY}:last  STRING  number of the right end shard; absent means 0
-- KEYS[3] midkey  {KEY}:mid  STRING  items in the shards strictly between the ends; absent means 0 (or a list written before it existed)
-- KEYS[4] sizekey  {KEY}:size  STRING  the shard size recorded with the list; absent until its first push
-- KEYS[5] verkey  {KEY}:ver  STRING  the write counter
local firstkey, lastkey, midkey, sizekey, verkey = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
-- Shard keys are firstkey without "first" plus the shard number (same hash
-- tag, same slot): each script builds them, as base .. n.
--
-- It reads and checks the five keys, doing no write, in O(1): an impossible
-- state is answered with a CORRUPT error that names the key, so no loop of a
-- script ever follows a corrupted or hostile value. It sets base, first,
-- last, stored (the mid key as a number, nil when absent), mid (the items
-- strictly between the end shards), recorded (the shard size recorded with
-- the list, nil when absent) and ver (the write counter, a string).
local base = string.sub(firstkey, 1, -6)

-- moving(r, key): when r, an error table from redis.pcall on key, is a
-- Cluster node's refusal of a key it no longer holds (its slot is moving to
-- another node, key by key: Redis then lets no script touch it, "...
-- attempted to access a non local key ..."), a TRYAGAIN error reply, else
-- nil. The five declared keys cannot be refused so (Redis redirects the
-- whole call instead); a shard key can. Every script meets its shard keys
-- before its first write (push.lua checks the shards it will open), so it
-- answers TRYAGAIN having changed nothing, and the client sends it again.
local function moving(r, key)
  if type(r) == 'table' and r['err'] and string.find(r['err'], 'non local key', 1, true) then
    return redis.error_reply('TRYAGAIN ' .. key .. ' is moving to another cluster node')
  end
end

local raw = {}
for i = 1, 5 do
  local v = redis.pcall('get', KEYS[i])
  if type(v) == 'table' then
    return redis.error_reply('CORRUPT ' .. KEYS[i] .. ' is a ' ..
      redis.call('type', KEYS[i])['ok'] .. ', not a string')
  end
  -- Integers of at most 13 digits: exact in Lua, and printed without an
  -- exponent when used in a shard key.
  if v and not (string.match(v, '^%-?%d+$') and #v <= 14) then
    return redis.error_reply('CORRUPT ' .. KEYS[i] .. ' holds ' ..
      string.format('%q', string.sub(v, 1, 40)) .. ', not an integer')
  end
  raw[i] = v
end
local first = tonumber(raw[1] or '0')
local last = tonumber(raw[2] or '0')
local stored = raw[3] and tonumber(raw[3])
local recorded = raw[4] and tonumber(raw[4])
local ver = raw[5] or '0'
if first > last then
  return redis.error_reply('CORRUPT ' .. firstkey .. ' is ' .. first .. ', after ' ..
    lastkey .. ' (' .. last .. ')')
end
if recorded and recorded < 2 then
  return redis.error_reply('CORRUPT ' .. sizekey .. ' is ' .. recorded .. ', below 2')
end
local gap = last - first - 1 -- shards strictly between the ends
local mid = stored or 0
if stored then
  -- Every shard strictly between the ends holds at least one item.
  if stored < 0 or (gap <= 0 and stored ~= 0) or stored < gap then
    return redis.error_reply('CORRUPT ' .. midkey .. ' counts ' .. stored ..
      ' items between shards ' .. first .. ' (' .. firstkey .. ') and ' .. last ..
      ' (' .. lastkey .. '), which have ' .. math.max(gap, 0) .. ' shards between them,' ..
      ' each holding at least one item')
  end
elseif gap > 0 and legacy == 'count' then
  -- A list written before the mid count existed: count its middle shards
  -- here when they are few; else the client counts them in bounded calls
  -- and stores the count (NEEDCOUNT), then calls again.
  if gap > 100 then
    return redis.error_reply('NEEDCOUNT ' .. midkey .. ' is absent and ' .. gap ..
      ' shards lie between the ends')
  end
  for s = first + 1, last - 1 do
    local n = redis.pcall('llen', base .. s)
    if type(n) == 'table' then
      local m = moving(n, base .. s)
      if m then return m end
      return redis.error_reply('CORRUPT ' .. base .. s .. ' is a ' ..
        redis.call('type', base .. s)['ok'] .. ', not a list')
    end
    if n == 0 then
      return redis.error_reply('CORRUPT shard ' .. base .. s ..
        ' is empty or missing, but lies between the ends ' .. firstkey .. ' = ' .. first .. ' and ' .. lastkey .. ' = ' .. last)
    end
    mid = mid + n
  end
end

-- llen is LLEN of shard s, or nil and an error reply: CORRUPT when the
-- shard is not a list, TRYAGAIN when it is moving to another cluster node:
-- `local n, e = llen(s); if e then return e end`.
local function llen(s)
  local n = redis.pcall('llen', base .. s)
  if type(n) == 'table' then
    local m = moving(n, base .. s)
    if m then return nil, m end
    return nil, redis.error_reply('CORRUPT ' .. base .. s .. ' is a ' ..
      redis.call('type', base .. s)['ok'] .. ', not a list')
  end
  return n
end

-- length is the list's number of items, as LLEN, in O(1): the end shards'
-- lengths plus the count strictly between them; or nil and an error reply
-- (see llen): `local n, e = length(); if e then return e end`.
local function length()
  local a, e = llen(first)
  if e then return nil, e end
  local total = a + mid
  if first ~= last then
    local b, e2 = llen(last)
    if e2 then return nil, e2 end
    total = total + b
  end
  return total
end
