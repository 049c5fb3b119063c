-- pending: one page of a consumer group's PEL, from start, with each
-- entry's fields (read only). Entries idle less than idle ms are left out
-- here, not by XPENDING's IDLE, which reads on past count entries until
-- count match: a page reads count entries of the PEL whatever it keeps.
-- An entry may have been deleted from the stream while pending.
-- KEYS[1] stream  <stream>  STREAM  the stream the consumer group reads
local stream = KEYS[1]
local name, start, count, idle = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4])

if not is_stream(stream) then
  return {'nostream'}
end
if not group_info(stream, name) then
  return {'nogroup'}
end
local out, last = {}, ''
for _, p in ipairs(redis.call('XPENDING', stream, name, start, '+', count)) do
  last = p[1]
  if p[3] >= idle then
    local e = redis.call('XRANGE', stream, p[1], p[1])[1]
    local found, fields = 0, {}
    if e then
      found, fields = 1, e[2]
    end
    out[#out + 1] = {p[1], p[2], p[3], p[4], found, fields}
  end
end
local t = redis.call('TIME')
return {'ok', last, out, t[1], t[2]}
