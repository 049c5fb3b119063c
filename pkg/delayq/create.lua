-- create: make a queue's attribute hash unless it exists (RSMQ createQueue).
-- KEYS[1] <ns>:<q>:Q, KEYS[2] <ns>:<q>:R (chatq's index of received
-- messages, for stats)
-- ARGV[1] vt (s), ARGV[2] delay (s), ARGV[3] maxsize, ARGV[4] maxreceives
-- ("" for none), ARGV[5] deadletter queue ("" for none), ARGV[6] the
-- namespace's registry <ns>:QUEUES and ARGV[7] the queue's name, which the
-- caller adds to it next: checked here so that a refused SADD leaves no
-- queue behind.
-- Returns 1 when created, 0 when the queue exists.
-- Redis 3.2 to 4 replicate scripts verbatim and refuse writes after TIME
-- unless told to replicate effects (the default since Redis 5).
if redis.replicate_commands then
  redis.replicate_commands()
end
local function keytype(k)
  local t = redis.call("TYPE", k)
  return t.ok or t
end
local function wrong(k, ty)
  local got = keytype(k)
  if got ~= ty and got ~= "none" then
    return redis.error_reply("WRONGTYPE " .. k .. " is a " .. got .. ", not a " .. ty)
  end
end
local e = wrong(KEYS[1], "hash")
if e then
  return e
end
if redis.call("HEXISTS", KEYS[1], "vt") == 1 then
  return 0
end
e = wrong(KEYS[2], "zset")
if e then
  return e
end
-- Redis 7 lets a script ask what its user may do; on 6.2 a refused
-- command fails at its first write, before anything changed.
if redis.acl_check_cmd then
  if not redis.acl_check_cmd("SADD", ARGV[6], ARGV[7]) or not redis.acl_check_cmd("HSET", KEYS[1], "vt", "0")
    or not redis.acl_check_cmd("UNLINK", KEYS[2]) then
    return redis.error_reply("NOPERM this user may not create queue " .. ARGV[7] .. " (HSET, UNLINK and SADD " .. ARGV[6] .. ")")
  end
end
local now = redis.call("TIME")[1]
redis.call("HSET", KEYS[1], "vt", ARGV[1], "delay", ARGV[2], "maxsize", ARGV[3],
  "created", now, "modified", now, "rsync", "0")
if ARGV[4] ~= "" then
  redis.call("HSET", KEYS[1], "maxreceives", ARGV[4], "deadletter", ARGV[5])
end
-- An index left by a queue of this name that rsmq deleted.
redis.call("UNLINK", KEYS[2])
return 1
