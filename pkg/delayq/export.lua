-- export: one page of a queue's messages, for a backup, walking the
-- attribute HASH with HSCAN (a field is a message when the queue's ZSET has
-- it). HSCAN returns every field present for the whole walk at least once
-- whatever the scores do (receives and retries move messages in the ZSET;
-- a walk by score would skip or repeat them); it repeats a field only when
-- the hash shrank during the walk. Read only.
-- KEYS[1] <ns>:<q>, KEYS[2] <ns>:<q>:Q
-- ARGV[1] HSCAN cursor, ARGV[2] COUNT hint
-- Returns {"ok", next cursor, now ms, id1, visible-at1, body1, rc1, fr1, ...}
-- (rc and fr "" when absent) or {"notfound"}.
if not attributes(KEYS[2]) then
  return {"notfound"}
end
local _, nowstr = clock()
local page = redis.call("HSCAN", KEYS[2], ARGV[1], "COUNT", ARGV[2])
local res = {"ok", page[1], nowstr}
local fields = page[2]
for i = 1, #fields, 2 do
  local id = fields[i]
  -- A 32-character id's receive count and first receive are not messages.
  local score = false
  local tail = string.sub(id, -3)
  if #id < 35 or (tail ~= ":rc" and tail ~= ":fr") then
    score = redis.call("ZSCORE", KEYS[1], id)
  end
  if score then
    local m = redis.call("HMGET", KEYS[2], id .. ":rc", id .. ":fr")
    res[#res + 1] = id
    res[#res + 1] = score
    res[#res + 1] = fields[i + 1]
    res[#res + 1] = m[1] or ""
    res[#res + 1] = m[2] or ""
  end
end
return res
