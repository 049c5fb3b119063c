-- purge: delete every message of a queue, keeping its attributes and
-- counters.
-- KEYS[1] <ns>:<q>, KEYS[2] <ns>:<q>:Q
-- Returns the number of messages deleted, or -1 when the queue does not
-- exist.
local a = redis.call("HMGET", KEYS[2], "vt", "delay", "maxsize")
if not a[1] or not a[2] or not a[3] then
  return -1
end
local keep = {vt = 1, delay = 1, maxsize = 1, totalrecv = 1, totalsent = 1, created = 1,
  modified = 1, maxreceives = 1, deadletter = 1}
local n = redis.call("ZCARD", KEYS[1])
redis.call("DEL", KEYS[1])
-- Every other field is a body, an <id>:rc or an <id>:fr, including any
-- left behind by a crashed writer.
local drop = {}
for _, f in ipairs(redis.call("HKEYS", KEYS[2])) do
  if not keep[f] then
    drop[#drop + 1] = f
    if #drop == 1000 then
      redis.call("HDEL", KEYS[2], unpack(drop))
      drop = {}
    end
  end
end
if #drop > 0 then
  redis.call("HDEL", KEYS[2], unpack(drop))
end
return n
