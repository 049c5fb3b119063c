-- counts: one consumer group's counts, read at one instant (read only).
-- KEYS[1] stream  <stream>  STREAM  the stream the consumer group reads
local stream = KEYS[1]
local name = ARGV[1]

if not is_stream(stream) then
  return {'nostream'}
end
local g = group_info(stream, name)
if not g then
  return {'nogroup'}
end

-- ready is the count of entries after the group's last-delivered-id: the
-- server's lag when it has one; without (Redis 6.2, or after deletions
-- the server cannot count past) 0 when no entry is after it, the
-- stream's length when every entry is, else a count of at most 100
-- entries read; -1 when there are more.
local function ready()
  if g.lag then
    return g.lag
  end
  local last = redis.call('XREVRANGE', stream, '+', '-', 'COUNT', 1)[1]
  if not last or id_cmp(last[1], g.ldi) <= 0 then
    return 0
  end
  local first = redis.call('XRANGE', stream, '-', '+', 'COUNT', 1)[1]
  if id_cmp(first[1], g.ldi) > 0 then
    return redis.call('XLEN', stream)
  end
  local after = redis.call('XRANGE', stream, '(' .. g.ldi, '+', 'COUNT', 101)
  if #after <= 100 then
    return #after
  end
  return -1
end

local n = ready()
local oldest = ''
if n ~= 0 then
  local first = redis.call('XRANGE', stream, '(' .. g.ldi, '+', 'COUNT', 1)[1]
  if first then
    oldest = first[1]
  end
end
local t = redis.call('TIME')
return {'ok', g.pending, g.ldi, n, oldest, t[1], t[2], g.v7 and 1 or 0, g.consumers}
