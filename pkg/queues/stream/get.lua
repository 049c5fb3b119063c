-- get: one entry of a stream as a consumer group sees it (read only):
-- its fields, whether it is in the group's PEL, and the group's
-- last-delivered-id.
-- KEYS[1] stream  <stream>  STREAM  the stream the consumer group reads
local stream = KEYS[1]
local name, id = ARGV[1], ARGV[2]

if not is_stream(stream) then
  return {'nostream'}
end
local g = group_info(stream, name)
if not g then
  return {'nogroup'}
end
local e = redis.call('XRANGE', stream, id, id)[1]
local p = redis.call('XPENDING', stream, name, id, id, 1)[1]
local t = redis.call('TIME')
local found, fields = 0, {}
if e then
  found, fields = 1, e[2]
end
local pending, consumer, idle, count = 0, '', 0, 0
if p then
  pending, consumer, idle, count = 1, p[2], p[3], p[4]
end
return {'ok', g.ldi, found, fields, pending, consumer, idle, count, t[1], t[2]}
