-- remove: acknowledge and delete entries of a stream for a consumer group
-- (XACK, then XDEL), each re-checked first: an entry pending in the group
-- (in flight), or that another group of the stream has yet to read or
-- holds pending (XDEL takes it from every group), is left unless force.
-- ARGV: group, force ('1' or '0'), id...
-- KEYS[1] stream  <stream>  STREAM  the stream the consumer group reads
local stream = KEYS[1]
local name, force = ARGV[1], ARGV[2] == '1'

if not writes_known() then
  return {'readonly'}
end
if not is_stream(stream) then
  return {'nostream'}
end
local all = groups(stream)
local found = false
for _, g in ipairs(all) do
  found = found or g.name == name
end
if not found then
  return {'nogroup'}
end
if not allowed({'XACK', stream, name, '0-0'}, {'XDEL', stream, '0-0'}) then
  return redis.error_reply("NOPERM this user may not remove entries of " .. stream .. " (XACK, XDEL): nothing written")
end

-- needed_elsewhere names another group that still needs entry id.
local function needed_elsewhere(id)
  for _, g in ipairs(all) do
    if g.name ~= name then
      if id_cmp(id, g.ldi) > 0 then
        return g.name .. ' (ready)'
      end
      if redis.call('XPENDING', stream, g.name, id, id, 1)[1] then
        return g.name .. ' (inflight)'
      end
    end
  end
  return nil
end

local out = {}
for i = 3, #ARGV do
  local id = ARGV[i]
  local p = redis.call('XPENDING', stream, name, id, id, 1)[1]
  local e = redis.call('XRANGE', stream, id, id)[1]
  local other = (e and not force) and needed_elsewhere(id) or nil
  if p and not force then
    out[#out + 1] = {id, 'inflight', p[2]}
  elseif not p and not e then
    out[#out + 1] = {id, 'notfound', ''}
  elseif other then
    out[#out + 1] = {id, 'needed', other}
  else
    if p then
      redis.call('XACK', stream, name, id)
    end
    if e then
      redis.call('XDEL', stream, id)
    end
    out[#out + 1] = {id, 'done', ''}
  end
end
return {'ok', out}
