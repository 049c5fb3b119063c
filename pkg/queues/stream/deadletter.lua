-- deadletter: move entries a consumer group has delivered at least min
-- times from its PEL into a dead-letter stream, each re-checked first
-- (still pending, delivered often enough, still in the stream): XADD to
-- the dead-letter stream with the markers of its origin in front of its
-- own fields, then XACK in the group. Never XDEL: the stream's other
-- groups still read the entry.
-- ARGV: group, min deliveries, id...
-- KEYS[1] stream  <stream>  STREAM  the stream the consumer group reads
-- KEYS[2] dead  <stream>:dead:<group>  STREAM  the group's dead-letter stream (chatq's)
local stream, dead = KEYS[1], KEYS[2]
local name, min = ARGV[1], tonumber(ARGV[2])

if not writes_known() then
  return {'readonly'}
end
if not is_stream(stream) then
  return {'nostream'}
end
local dtype = redis.call('TYPE', dead)['ok']
if dtype ~= 'stream' and dtype ~= 'none' then
  return {'wrongtype', dtype}
end
if not group_info(stream, name) then
  return {'nogroup'}
end
if not allowed({'XADD', dead, '*', 'f', 'v'}, {'XACK', stream, name, '0-0'}) then
  return redis.error_reply("NOPERM this user may not dead-letter from " .. stream .. " to " .. dead .. " (XADD, XACK): nothing written")
end

local t = redis.call('TIME')
local now = t[1] .. string.format('%03d', math.floor(tonumber(t[2]) / 1000))
local out = {}
for i = 3, #ARGV do
  local id = ARGV[i]
  local p = redis.call('XPENDING', stream, name, id, id, 1)[1]
  local e = p and redis.call('XRANGE', stream, id, id)[1]
  if not p then
    out[#out + 1] = {id, 'notpending', ''}
  elseif p[4] < min then
    out[#out + 1] = {id, 'attempts', tostring(p[4])}
  elseif not e then
    out[#out + 1] = {id, 'deleted', ''}
  elseif #e[2] > 7000 then
    -- unpack could not pass so many fields to XADD
    out[#out + 1] = {id, 'toolarge', tostring(#e[2] / 2)}
  else
    local args = {'XADD', dead, '*',
      '_origin_stream', stream, '_origin_group', name, '_origin_id', id,
      '_origin_consumer', p[2], '_deliveries', tostring(p[4]), '_dead_at', now}
    for _, v in ipairs(e[2]) do
      args[#args + 1] = v
    end
    local moved = redis.call(unpack(args))
    redis.call('XACK', stream, name, id)
    out[#out + 1] = {id, 'done', moved}
  end
end
return {'ok', out}
