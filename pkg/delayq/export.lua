-- export: one page of a queue's messages, for a backup or a search,
-- walking the attribute HASH with HSCAN (a field is a message when the
-- queue's ZSET has it). HSCAN returns every field present for the whole
-- walk at least once whatever the scores do (receives and retries move
-- messages in the ZSET; a walk by score would skip or repeat them); it
-- repeats a field only when the hash shrank during the walk. Read only.
-- KEYS[1] queue  <ns>:<q>  ZSET  message id -> visible-at ms
-- KEYS[2] attrs  <ns>:<q>:Q  HASH  queue attributes and message bodies
local queue, attrs = KEYS[1], KEYS[2]
-- ARGV[1] HSCAN cursor, ARGV[2] COUNT hint
-- ARGV[3..7] a filter (queue.lua's filter): only the messages that pass it
-- are returned
-- Returns {"ok", next cursor, now ms, messages examined, their body bytes,
-- id1, visible-at1, body1, rc1, fr1, dead-letter record1, ...} (rc, fr and
-- the record "" when absent) or {"notfound"}.
if not attributes(attrs) then
  return {"notfound"}
end
local now, nowstr, t = clock()
local f = filter(3, now, t)
local page = redis.call("HSCAN", attrs, ARGV[1], "COUNT", ARGV[2])
local res = {"ok", page[1], nowstr, 0, 0}
local examined, read = 0, 0
local fields = page[2]
for i = 1, #fields, 2 do
  local id = fields[i]
  -- A 32-character id's receive count, first receive and dead-letter
  -- record are not messages.
  local score = false
  local tail = string.sub(id, -3)
  if #id < 35 or (tail ~= ":rc" and tail ~= ":fr" and tail ~= ":dl") then
    score = redis.call("ZSCORE", queue, id)
  end
  if score then
    local body = fields[i + 1]
    examined = examined + 1
    read = read + #body
    if not young(f, id) then
      local m
      if f.counts then
        m = redis.call("HMGET", attrs, id .. ":rc", id .. ":fr", id .. ":dl")
      end
      if passes(f, now, score, m and m[1], m and m[2]) and found(f, id, body) then
        m = m or redis.call("HMGET", attrs, id .. ":rc", id .. ":fr", id .. ":dl")
        add(res, id, score, body, m)
      end
    end
  end
end
res[4] = examined
res[5] = read
return res
