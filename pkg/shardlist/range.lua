-- range: the items from index ARGV[1] to ARGV[2] (inclusive, negative
-- counting from the end), as LRANGE on a plain list.
--
-- KEYS[1] = <prefix>{KEY}:first, KEYS[2] = <prefix>{KEY}:last; shard keys
-- are built from KEYS[1] (same hash tag, same slot).
-- ARGV[1] = start, ARGV[2] = stop, ARGV[3] = wake-up marker (never returned).
local base = string.sub(KEYS[1], 1, -6)
local first = tonumber(redis.call('get', KEYS[1]) or '0')
local last = tonumber(redis.call('get', KEYS[2]) or '0')
local lens, total = {}, 0
for s = first, last do
  local n = redis.call('llen', base .. s)
  lens[#lens + 1] = n
  total = total + n
end

local start, stop = tonumber(ARGV[1]), tonumber(ARGV[2])
if start < 0 then start = total + start end
if stop < 0 then stop = total + stop end
if start < 0 then start = 0 end
if stop >= total then stop = total - 1 end
local out = {}
if start > stop then return out end

local offset = 0
for i, n in ipairs(lens) do
  local lo, hi = offset, offset + n - 1
  if n > 0 and hi >= start and lo <= stop then
    local items = redis.call('lrange', base .. (first + i - 1),
      math.max(start, lo) - lo, math.min(stop, hi) - lo)
    for _, v in ipairs(items) do
      if v ~= ARGV[3] then out[#out + 1] = v end
    end
  end
  offset = offset + n
  if offset > stop then break end
end
return out
