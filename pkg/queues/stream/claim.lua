-- claim: claim a consumer group's idle pending entries for a consumer,
-- ids only (JUSTID: chatq delivers nothing, so the delivery counts stay;
-- the consumer's next read of its own history counts its delivery).
-- XAUTOCLAIM and XCLAIM check each entry's idle time themselves,
-- atomically, and are the only writes.
-- ARGV: group, consumer, min idle (ms), then 'auto', cursor, count
-- (XAUTOCLAIM) or 'ids', id... (XCLAIM).
-- KEYS[1] stream  <stream>  STREAM  the stream the consumer group reads
local stream = KEYS[1]
local name, consumer, idle, mode = ARGV[1], ARGV[2], ARGV[3], ARGV[4]

if not writes_known() then
  return {'readonly'}
end
if not is_stream(stream) then
  return {'nostream'}
end
if not group_info(stream, name) then
  return {'nogroup'}
end
if mode == 'auto' then
  local r = redis.call('XAUTOCLAIM', stream, name, consumer, idle, ARGV[5], 'COUNT', ARGV[6], 'JUSTID')
  -- Redis 7.0 adds the ids of entries deleted while pending, which
  -- XAUTOCLAIM took out of the PEL.
  return {'ok', r[1], r[2], r[3] or {}}
end
-- Each id's reason is read before XCLAIM, which skips an entry not
-- pending or not idle long enough, and (Redis 7.0) takes an entry deleted
-- while pending out of the PEL without claiming it.
local ids, why = {}, {}
for i = 5, #ARGV do
  local id = ARGV[i]
  ids[#ids + 1] = id
  local p = redis.call('XPENDING', stream, name, id, id, 1)[1]
  if not p then
    why[#why + 1] = {id, 'not pending in the group'}
  elseif p[3] < tonumber(idle) then
    why[#why + 1] = {id, 'idle ' .. p[3] .. ' ms, less than asked'}
  elseif not redis.call('XRANGE', stream, id, id)[1] then
    why[#why + 1] = {id, 'deleted from the stream while pending: XCLAIM took it out of the PEL'}
  end
end
ids[#ids + 1] = 'JUSTID'
return {'ok', '', redis.call('XCLAIM', stream, name, consumer, idle, unpack(ids)), why}
