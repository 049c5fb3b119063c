-- reindex_begin: start rebuilding chatq's index of received messages
-- (KEYS[3]) for a queue whose index is not complete (rsmq clients received
-- from it, or rsmq created it). The old index is dropped with UNLINK (freed
-- in the background); chatq's receives keep adding to the new one while
-- reindex_step walks the queue. "rscan" holds totalrecv as of now, kept in
-- step by chatq's receives, so reindex_end can tell whether another client
-- received meanwhile.
-- KEYS[1] <ns>:<q>, KEYS[2] <ns>:<q>:Q, KEYS[3] <ns>:<q>:R
-- Returns 1, or 0 when the queue does not exist.
local a = redis.call("HMGET", KEYS[2], "vt", "delay", "maxsize", "totalrecv")
if not a[1] or not a[2] or not a[3] then
  return 0
end
for _, k in ipairs({KEYS[1], KEYS[3]}) do
  local ty = redis.call("TYPE", k)
  ty = ty.ok or ty
  if ty ~= "zset" and ty ~= "none" then
    return redis.error_reply("WRONGTYPE " .. k .. " is a " .. ty .. ", not a sorted set")
  end
end
if redis.acl_check_cmd then
  if not redis.acl_check_cmd("UNLINK", KEYS[3]) or not redis.acl_check_cmd("HSET", KEYS[2], "rscan", "0")
    or not redis.acl_check_cmd("ZADD", KEYS[3], "0", "x") then
    return redis.error_reply("NOPERM this user may not rebuild " .. KEYS[3])
  end
end
redis.call("UNLINK", KEYS[3])
redis.call("HDEL", KEYS[2], "rsync")
redis.call("HSET", KEYS[2], "rscan", a[4] or "0")
return 1
