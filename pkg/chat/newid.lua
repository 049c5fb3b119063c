-- KEYS[1] ids  ids:chat:  STRING  the last automatic chat id
-- KEYS[2..12] records  {ids:chat:}:T:<minute>  HASH  token -> answer, minutes m..m-10
local ids = KEYS[1]
local records = 2 -- the first record key
-- newid: take the next automatic chat id (INCR ids:chat:) for a create
-- made with a client-chosen token, once per token and try.
-- ARGV[1] the records' lifetime in ms (luascript.Record)
-- ARGV[2] the record's field: the token, or <token>.<n> for the n-th try
-- The records are in ids:chat:'s slot (hash-tagged with its whole name).
-- Returns the id taken. When the field is recorded the id was taken
-- already: it is returned and nothing is written, so a create repeated
-- after a lost reply makes its chat under the same id (whose own record
-- answers it) instead of taking another id and making a second chat.
local r, key = recordOf(records, ARGV[2], #KEYS)
if r then
  local n = tonumber(r)
  if not n then
    return redis.error_reply('ERR ' .. key .. ' ' .. ARGV[2] .. ' is not the record of a chat id: nothing written')
  end
  return n
end
if not allowed({'INCR', ids}) or not mayRecord(records) then
  return redis.error_reply('NOPERM this user may not run INCR ' .. ids .. ' and HSET and PEXPIRE ' .. KEYS[records] ..
    ', which chat create with a token needs')
end
local n = redis.call('INCR', ids)
writeRecord(records, ARGV[2], n, ARGV[1])
return n
