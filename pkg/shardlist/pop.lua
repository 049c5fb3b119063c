-- KEYS[1] firstkey  {KEY}:first  STRING  number of the left end shard; absent means 0
-- KEYS[2] lastkey  {KEY}:last  STRING  number of the right end shard; absent means 0
-- KEYS[3] midkey  {KEY}:mid  STRING  items in the shards strictly between the ends; absent means 0 (or a list written before it existed)
-- KEYS[4] sizekey  {KEY}:size  STRING  the shard size recorded with the list; absent until its first push
-- KEYS[5] verkey  {KEY}:ver  STRING  the write counter
-- KEYS[6..16] records  {KEY}:T:<minute>  HASH  token -> answer, minutes m..m-10 (m alone on a first try)
local firstkey, lastkey, midkey, sizekey, verkey = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
-- (state.lua, put in front of this text, reads the first five; the shard
-- keys <prefix>{KEY}:<n>, LISTs, are built from them, in their slot)
local records = ARGV[6] and 6 -- the first record key, when the pop has a token
-- pop: remove up to ARGV[4] items from one end of a sharded list, in the
-- order LPOP/RPOP with a count would return them. Empty shards at the end
-- are stepped over, and the endpoint is left on a non-empty shard unless it
-- meets the other endpoint. The wake-up marker is never returned.
--
-- ARGV[1] = "left" | "right", ARGV[2] = count (at most 1000),
-- ARGV[3] = wake-up marker, ARGV[4] = the most shards to empty in this call
-- (a bound on its time: with tiny shards 1000 items are many shards).
-- Optional ARGV[5] = a shard into which this caller's wake script pushed the
-- marker: one marker is removed from its waiting end if the shard is still
-- outside the list.
-- With a client-chosen token, the records (luascript.Record) are passed,
-- ARGV[6] is their lifetime in ms and ARGV[7] the record's field (the
-- token, or <token>.<n> for the n-th call of a pop), and ARGV[5] is then
-- "" unless a wake marker is to be removed. When the field is recorded the
-- pop was applied already: its answer is returned and nothing is written,
-- so a repeat after a lost reply returns the same items and pops no
-- others. A pop that took items records its answer, as netstrings
-- (<length>:<bytes>, byte for byte); one that took none records nothing.
-- Returns {endpoint shard after the pop, more, item, item, ...}: more is 1
-- when the call stopped at its shard bound (the list may hold more), else 0.
--
-- Two phases. The plan reads (LLEN, LRANGE) and writes nothing: it finds
-- the items and how many elements to trim from each shard, and answers
-- CORRUPT for impossible state (a shard between the ends that is empty or
-- not a list, a mid count below what the shards hold, more than 1000 wake
-- markers in the way). Only then are the shards trimmed and the keys set.
-- Every loop step consumes an element or moves to the next shard, which
-- must be non-empty unless it is the other end, so a call does at most
-- count + 1000 element reads and visits at most ARGV[4] + 2 shards.
if records then
  local r, key = recordOf(records, ARGV[7], #KEYS)
  if r then
    local res = fromNetstrings(r)
    if not res or #res < 2 then
      return redis.error_reply('CORRUPT ' .. key .. ' ' .. ARGV[7] .. ' is not the record of a pop')
    end
    res[1], res[2] = tonumber(res[1]), tonumber(res[2])
    return res
  end
end
local left = ARGV[1] == 'left'
local want = tonumber(ARGV[2])
local marker = ARGV[3]
local maxShards = tonumber(ARGV[4])
local more = 0
local shard = left and first or last
local other = left and last or first
local step = left and 1 or -1
local start = shard
-- before(a, b): a is strictly on the outer side of b, seen from this end.
local function before(a, b)
  if left then return a < b end
  return a > b
end

local out, trims = {}, {}
local scanned, budget = 0, want + 1000
local n, e = llen(shard)
if e then return e end
local taken = 0 -- elements of this shard consumed
-- advance moves this endpoint one shard inward. A shard strictly before the
-- other end was between the endpoints: it is an end shard now, read with
-- LLEN from here on, so its items leave mid.
local function advance()
  trims[#trims + 1] = {shard, taken}
  shard = shard + step
  local err
  n, err = llen(shard)
  if err then return err end
  taken = 0
  if before(shard, other) then
    if n == 0 then
      return redis.error_reply('CORRUPT shard ' .. base .. shard ..
        ' is empty or missing, but lies between the ends ' .. firstkey .. ' = ' .. first .. ' and ' .. lastkey .. ' = ' .. last)
    end
    mid = mid - n
    if mid < 0 then
      return redis.error_reply('CORRUPT ' .. midkey .. ' counts fewer items than the shards between ' ..
        first .. ' and ' .. last .. ' hold')
    end
  end
end

while #out < want do
  if taken < n then
    local cnt = math.min(want - #out, n - taken)
    local k = base .. shard
    if left then
      local got = redis.call('lrange', k, taken, taken + cnt - 1)
      for i = 1, #got do
        if got[i] ~= marker then out[#out + 1] = got[i] end
      end
    else
      local got = redis.call('lrange', k, -(taken + cnt), -(taken + 1))
      for i = #got, 1, -1 do
        if got[i] ~= marker then out[#out + 1] = got[i] end
      end
    end
    taken = taken + cnt
    scanned = scanned + cnt
    if scanned > budget then
      return redis.error_reply('CORRUPT more than 1000 wake-up markers in the shards of ' .. base ..
        '* (remove them with LREM)')
    end
  elseif before(shard, other) then
    if #trims >= maxShards then
      more = 1
      break
    end
    e = advance()
    if e then return e end
  else
    break
  end
end
-- Leave the endpoint on a non-empty shard: step over the shard just
-- emptied (the next one, if between the ends, is non-empty: checked).
while taken == n and before(shard, other) do
  e = advance()
  if e then return e end
end
trims[#trims + 1] = {shard, taken}

-- Everything this pop may write with (on Redis 6.2 LTRIM and SET are
-- checked, the others cannot be: docs/compatibility.md).
if not allowed({left and 'lpop' or 'rpop', base .. shard}, {'ltrim', base .. shard, '0', '-1'}, {'set', firstkey, '0'},
    {'del', midkey}, {'incr', verkey}) or records and not mayRecord(records) then
  return redis.error_reply('NOPERM this user may not write list ' .. base .. '* (LTRIM, SET, DEL, INCR, ' ..
    (left and 'LPOP' or 'RPOP') .. ', and HSET and PEXPIRE of the record of a pop with a token)')
end
-- Writes from here on; nothing below can fail.
if ARGV[5] then
  local s = tonumber(ARGV[5])
  if s and (s < first or s > last) then
    local k = base .. s
    local v = redis.pcall('lindex', k, left and 0 or -1)
    if v == marker then redis.call(left and 'lpop' or 'rpop', k) end
  end
end
local changed = false
for _, t in ipairs(trims) do
  local s, c = t[1], t[2]
  if c > 0 then
    changed = true
    if left then
      redis.call('ltrim', base .. s, c, -1)
    else
      redis.call('ltrim', base .. s, 0, -c - 1)
    end
  end
end
if shard ~= start then
  changed = true
  redis.call('set', left and firstkey or lastkey, shard)
end
if mid ~= (stored or 0) then
  changed = true
  if mid == 0 then
    redis.call('del', midkey)
  else
    redis.call('set', midkey, mid)
  end
end
if changed then
  redis.call('incr', verkey)
end

local ret = {shard, more}
for i = 1, #out do ret[i + 2] = out[i] end
if records and #out > 0 then
  writeRecord(records, ARGV[7], netstrings(ret), ARGV[6])
end
return ret
