-- trim: delete the messages every member has seen, at most ARGV[1] of
-- them (so a call does bounded work however many there are).
-- KEYS[1] members  chat:{ID}  ZSET  member -> highest message id seen
-- KEYS[2] messages  msgs:{ID}  ZSET  message JSON -> id
local members, messages = KEYS[1], KEYS[2]
-- Returns the number of seen messages left to delete.
local kind = redis.call('TYPE', members).ok
if kind == 'none' then
  return 0
elseif kind ~= 'zset' then
  return redis.error_reply('WRONGTYPE ' .. members .. ' is a ' .. kind .. ', not a chat (zset)')
end
kind = redis.call('TYPE', messages).ok
if kind == 'none' then
  return 0
elseif kind ~= 'zset' then
  return redis.error_reply('WRONGTYPE ' .. messages .. ' is a ' .. kind .. ', not messages (zset)')
end
if not allowed({'ZREMRANGEBYRANK', messages, '0', '0'}) then
  return redis.error_reply('NOPERM this user may not ZREMRANGEBYRANK ' .. messages)
end
local low = redis.call('ZRANGE', members, 0, 0, 'WITHSCORES')[2]
local n = redis.call('ZCOUNT', messages, '-inf', low)
local k = math.min(n, tonumber(ARGV[1]))
if k > 0 then
  redis.call('ZREMRANGEBYRANK', messages, 0, k - 1)
end
return n - k
