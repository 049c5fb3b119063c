-- newid: take the next automatic chat id (INCR ids:chat:) for a create
-- made with a client-chosen token, once per token and try.
-- KEYS[1] ids:chat:  KEYS[2] the record of this try, in ids:chat:'s slot
-- ARGV[1] the record's lifetime in ms
-- Returns the id taken. When the record exists the id was taken already:
-- it is returned and nothing is written, so a create repeated after a lost
-- reply makes its chat under the same id (whose own record answers it)
-- instead of taking another id and making a second chat.
local ids, record = KEYS[1], KEYS[2]
-- GET refuses a record of another type (WRONGTYPE) before any write.
local r = redis.call('GET', record)
if r then
  local n = tonumber(r)
  if not n then
    return redis.error_reply('ERR ' .. record .. ' is not the record of a chat id: nothing written')
  end
  return n
end
if not allowed({'INCR', ids}, {'SET', record, 'x', 'PX', '1'}) then
  return redis.error_reply('NOPERM this user may not run INCR ' .. ids .. ' and SET ' .. record ..
    ', which chat create with a token needs')
end
local n = redis.call('INCR', ids)
redis.call('SET', record, n, 'PX', ARGV[1])
return n
