-- ack: delete received messages (RSMQ deleteMessage, for many at once),
-- each named by a bare id or by a receipt (id, receive count and first
-- receive time of one delivery).
-- KEYS[1] <ns>:<q>, KEYS[2] <ns>:<q>:Q
-- ARGV: triples id, rc, fr; rc and fr are "" for a bare id
-- Returns {"notfound"} when the queue does not exist, else {"ok", s1, s2,
-- ...}, one status per triple: "acked", "missing" (not in the queue) or
-- "stale" (the receipt names an earlier delivery: the message was received
-- again since, and stays).
-- Every message is classified before the first write.
local a = redis.call("HMGET", KEYS[2], "vt", "delay", "maxsize")
if not a[1] or not a[2] or not a[3] then
  return {"notfound"}
end
local res = {"ok"}
for i = 1, #ARGV, 3 do
  local id = ARGV[i]
  local status = "acked"
  if not redis.call("ZSCORE", KEYS[1], id) then
    status = "missing"
  elseif ARGV[i + 1] ~= "" then
    local m = redis.call("HMGET", KEYS[2], id .. ":rc", id .. ":fr")
    if tonumber(m[1] or "") ~= tonumber(ARGV[i + 1]) or tonumber(m[2] or "") ~= tonumber(ARGV[i + 2]) then
      status = "stale"
    end
  end
  res[#res + 1] = status
end
for i = 1, #ARGV, 3 do
  local id = ARGV[i]
  local status = res[(i + 2) / 3 + 1]
  if status == "acked" then
    redis.call("ZREM", KEYS[1], id)
    redis.call("HDEL", KEYS[2], id, id .. ":rc", id .. ":fr")
  elseif status == "missing" then
    -- As rsmq: a body left without its ZSET entry goes too.
    redis.call("HDEL", KEYS[2], id, id .. ":rc", id .. ":fr")
  end
end
return res
