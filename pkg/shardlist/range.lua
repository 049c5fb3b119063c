-- range: the items from index start to stop (inclusive, negative counting
-- from the end), as LRANGE on a plain list, read in bounded steps: one call
-- walks at most ARGV[7] shards and returns at most ARGV[8] items, and the
-- client calls again with the cursor it got until the phase is 'done'.
--
-- KEYS[1] firstkey  {KEY}:first  STRING  number of the left end shard; absent means 0
-- KEYS[2] lastkey  {KEY}:last  STRING  number of the right end shard; absent means 0
-- KEYS[3] midkey  {KEY}:mid  STRING  items in the shards strictly between the ends; absent means 0 (or a list written before it existed)
-- KEYS[4] sizekey  {KEY}:size  STRING  the shard size recorded with the list; absent until its first push
-- KEYS[5] verkey  {KEY}:ver  STRING  the write counter
local firstkey, lastkey, midkey, sizekey, verkey = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
-- ARGV[1] = wake-up marker (never returned), ARGV[2] = the write counter
-- of the first call ('' on the first call), ARGV[3] = phase, ARGV[4..6]:
--   'new'  start, stop          (first call)
--   'head' shard, skip, count   walking from the head: skip items yet
--   'tail' shard, back, count   walking from the tail: the start item is
--                               the back-th from the end of this shard on
--   'read' shard, offset, count reading count more items from there
-- Returns {ver, phase, a, b, c, item, ...}: the next cursor (phase 'done'
-- when complete) and this call's items; {ver, 'changed'} when a write
-- happened since the first call (the client starts over).
local marker = ARGV[1]
if ARGV[2] ~= '' and ARGV[2] ~= ver then
  return {ver, 'changed'}
end
local phase = ARGV[3]
local a, b, c = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
local steps, maxItems = tonumber(ARGV[7]), tonumber(ARGV[8])
local out, readc = {}, 0

-- shardLen is LLEN of shard s, which must be part of the list and, when
-- strictly between the ends, non-empty.
local function shardLen(s)
  local n, e = llen(s)
  if e then return nil, e end
  if n == 0 and s > first and s < last then
    return nil, redis.error_reply('CORRUPT shard ' .. base .. s ..
      ' is empty or missing, but lies between the ends ' .. firstkey .. ' = ' .. first .. ' and ' .. lastkey .. ' = ' .. last)
  end
  return n
end

if phase == 'new' then
  local n1, e = shardLen(first)
  if e then return e end
  local total = n1 + mid
  if first ~= last then
    local n2, e2 = shardLen(last)
    if e2 then return e2 end
    total = total + n2
  end
  local start, stop = a, b
  if start < 0 then start = total + start end
  if stop < 0 then stop = total + stop end
  if start < 0 then start = 0 end
  if stop >= total then stop = total - 1 end
  if start > stop then
    return {ver, 'done', 0, 0, 0}
  end
  if start <= total - 1 - start then
    phase, a, b, c = 'head', first, start, stop - start + 1
  else
    phase, a, b, c = 'tail', last, total - start, stop - start + 1
  end
elseif a and (a < first or a > last) then
  return {ver, 'changed'}
end

while steps > 0 and phase ~= 'done' do
  steps = steps - 1
  local n, e = shardLen(a)
  if e then return e end
  if phase == 'head' then
    if b < n then
      phase = 'read'
    else
      b = b - n
      a = a + 1
    end
  elseif phase == 'tail' then
    if b <= n then
      phase, b = 'read', n - b
    else
      b = b - n
      a = a - 1
    end
  else -- read
    local take = math.min(c, n - b, maxItems - readc)
    if take > 0 then
      readc = readc + take
      local got = redis.call('lrange', base .. a, b, b + take - 1)
      for i = 1, #got do
        if got[i] ~= marker then out[#out + 1] = got[i] end
      end
      b, c = b + take, c - take
    end
    if c == 0 then
      phase = 'done'
    elseif readc >= maxItems then
      break
    elseif b >= n then
      a, b = a + 1, 0
    end
  end
  if (phase == 'head' or phase == 'read') and a > last or phase == 'tail' and a < first then
    -- The walk ran off an end before it had the items the length (mid)
    -- promised, with no write in between: the count is wrong.
    return redis.error_reply('CORRUPT ' .. midkey .. ' counts more items than the shards between ' ..
      firstkey .. ' = ' .. first .. ' and ' .. lastkey .. ' = ' .. last .. ' hold')
  end
end

local ret = {ver, phase, a, b, c}
for i = 1, #out do ret[#ret + 1] = out[i] end
return ret
