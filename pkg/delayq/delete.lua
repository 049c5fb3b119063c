-- delete: remove a queue's keys (RSMQ deleteQueue) after checking that
-- nothing can fail halfway: the keys' types and, on Redis 7, that this
-- user may UNLINK them and SREM the name from the registry, which the
-- caller does next. UNLINK frees big values in the background, so this is
-- O(1) in the server's main thread whatever the queue holds.
-- KEYS[1] <ns>:<q>, KEYS[2] <ns>:<q>:Q, KEYS[3] <ns>:<q>:R
-- ARGV[1] the registry <ns>:QUEUES, ARGV[2] the queue's name
-- Returns 1 when deleted, 0 when the queue does not exist.
local function keytype(k)
  local t = redis.call("TYPE", k)
  return t.ok or t
end
for i, ty in ipairs({"zset", "hash", "zset"}) do
  local got = keytype(KEYS[i])
  if got ~= ty and got ~= "none" then
    return redis.error_reply("WRONGTYPE " .. KEYS[i] .. " is a " .. got .. ", not a " .. ty .. ": nothing deleted")
  end
end
if redis.call("EXISTS", KEYS[2]) == 0 then
  return 0
end
if redis.acl_check_cmd then
  if not redis.acl_check_cmd("UNLINK", KEYS[1], KEYS[2], KEYS[3]) or not redis.acl_check_cmd("SREM", ARGV[1], ARGV[2]) then
    return redis.error_reply("NOPERM this user may not delete queue " .. ARGV[2] .. " (UNLINK its keys, SREM " .. ARGV[1] .. "): nothing deleted")
  end
end
redis.call("UNLINK", KEYS[1], KEYS[2], KEYS[3])
return 1
