-- redrive: move up to count entries of a dead-letter stream, after the
-- id after ('' from the start), back to the stream they came from: XADD
-- of their own fields (the origin markers dropped) as a new entry, which
-- the group (and every other group of the stream) reads as new, then XDEL
-- from the dead-letter stream. An entry whose markers do not name this
-- stream and group is left where it is.
-- ARGV: group, after, count
-- KEYS[1] dead  <stream>:dead:<group>  STREAM  the group's dead-letter stream (chatq's)
-- KEYS[2] stream  <stream>  STREAM  the stream the consumer group reads
local dead, stream = KEYS[1], KEYS[2]
local name, after, count = ARGV[1], ARGV[2], ARGV[3]

if not writes_known() then
  return {'readonly'}
end
local dtype = redis.call('TYPE', dead)['ok']
if dtype == 'none' then
  return {'ok', '', {}}
elseif dtype ~= 'stream' then
  return {'wrongtype', dtype}
end
if not is_stream(stream) then
  return {'nostream'}
end
if not group_info(stream, name) then
  return {'nogroup'}
end
if not allowed({'XADD', stream, '*', 'f', 'v'}, {'XDEL', dead, '0-0'}) then
  return redis.error_reply("NOPERM this user may not redrive from " .. dead .. " to " .. stream .. " (XADD, XDEL): nothing written")
end

-- The markers deadletter.lua puts in front of an entry's own fields.
local markers = {'_origin_stream', '_origin_group', '_origin_id', '_origin_consumer', '_deliveries', '_dead_at'}

local start = '-'
if after ~= '' then
  start = '(' .. after
end
local out, last = {}, ''
for _, e in ipairs(redis.call('XRANGE', dead, start, '+', 'COUNT', count)) do
  local id, f = e[1], e[2]
  last = id
  local ours = #f > 2 * #markers
  for i, m in ipairs(markers) do
    ours = ours and f[2 * i - 1] == m
  end
  if not ours then
    out[#out + 1] = {id, 'foreign', ''}
  elseif f[2] ~= stream or f[4] ~= name then
    out[#out + 1] = {id, 'origin', f[2] .. ' ' .. f[4]}
  else
    local args = {'XADD', stream, '*'}
    for i = 2 * #markers + 1, #f do
      args[#args + 1] = f[i]
    end
    local back = redis.call(unpack(args))
    redis.call('XDEL', dead, id)
    out[#out + 1] = {id, 'done', back}
  end
end
return {'ok', last, out}
