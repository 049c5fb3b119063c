-- trim: delete the messages every member has seen, at most ARGV[1] of
-- them (so a call does bounded work however many there are).
-- KEYS[1] chat:{ID}  KEYS[2] msgs:{ID}
-- Returns the number of seen messages left to delete.
local kind = redis.call('TYPE', KEYS[1]).ok
if kind == 'none' then
  return 0
elseif kind ~= 'zset' then
  return redis.error_reply('WRONGTYPE ' .. KEYS[1] .. ' is a ' .. kind .. ', not a chat (zset)')
end
kind = redis.call('TYPE', KEYS[2]).ok
if kind == 'none' then
  return 0
elseif kind ~= 'zset' then
  return redis.error_reply('WRONGTYPE ' .. KEYS[2] .. ' is a ' .. kind .. ', not messages (zset)')
end
if not allowed({'ZREMRANGEBYRANK', KEYS[2], '0', '0'}) then
  return redis.error_reply('NOPERM this user may not ZREMRANGEBYRANK ' .. KEYS[2])
end
local low = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')[2]
local n = redis.call('ZCOUNT', KEYS[2], '-inf', low)
local k = math.min(n, tonumber(ARGV[1]))
if k > 0 then
  redis.call('ZREMRANGEBYRANK', KEYS[2], 0, k - 1)
end
return n - k
