-- peek: one page of messages by visible-at time, without receiving them,
-- optionally only those that pass a filter (queue.lua's filter: a state,
-- an age, a substring, a least receive count, a time in flight). Read
-- only; the caller pages through with bounded counts.
-- KEYS[1] queue  <ns>:<q>  ZSET  message id -> visible-at ms
-- KEYS[2] attrs  <ns>:<q>:Q  HASH  queue attributes and message bodies
-- KEYS[3] index  <ns>:<q>:R  ZSET  chatq's index of received messages: id -> visible-at ms
local queue, attrs, index = KEYS[1], KEYS[2], KEYS[3]
-- ARGV[1] first rank within the walked range: the queue's ZSET without a
-- state, its due part for "ready", its not-yet-due part for "delayed"
-- (skipping received messages), the index of received messages' not-yet-due
-- part for "inflight"
-- ARGV[2] the most messages returned
-- ARGV[3] the most entries examined
-- ARGV[4] the most body bytes read (returned, or searched for the
-- substring): the call stops after the message that reaches it
-- ARGV[5..9] the filter (queue.lua's filter)
-- Returns {"ok", now ms, examined, done (1 at the end of the range), id1,
-- visible-at1, body1, rc1, fr1, dead-letter record1, ...} (rc, fr and the
-- record "" when absent) or
-- {"notfound"}.
if not attributes(attrs) then
  return {"notfound"}
end
local now, nowstr, t = clock()
local want = tonumber(ARGV[2])
local budget = tonumber(ARGV[3])
local bytes = tonumber(ARGV[4])
local f = filter(5, now, t)
local state = f.state
local key = queue
local rank = tonumber(ARGV[1])
local stop = nil -- last rank of the range, nil for the end
if state == "ready" then
  stop = redis.call("ZCOUNT", queue, "-inf", nowstr) - 1
elseif state == "delayed" then
  rank = rank + redis.call("ZCOUNT", queue, "-inf", nowstr)
elseif state == "inflight" then
  key = index
  rank = rank + redis.call("ZCOUNT", index, "-inf", nowstr)
end
local res = {"ok", nowstr, 0, 0}
local got, examined, done, read = 0, 0, 0, 0
while got < want and examined < budget and read < bytes do
  local last = rank + math.min(100, budget - examined) - 1
  if stop and last > stop then
    last = stop
  end
  local page = {}
  if not stop or rank <= stop then
    page = redis.call("ZRANGE", key, rank, last, "WITHSCORES")
  end
  if #page == 0 then
    done = 1
    break
  end
  for i = 1, #page, 2 do
    if got >= want or read >= bytes then
      break
    end
    local id, score = page[i], page[i + 1]
    examined = examined + 1
    rank = rank + 1
    if not young(f, id) then
      local m
      if f.counts then
        m = redis.call("HMGET", attrs, id .. ":rc", id .. ":fr", id .. ":dl")
      end
      if state == "inflight" then
        -- the score in the queue is the truth; a stale index entry (a
        -- message another client deleted) is skipped
        score = redis.call("ZSCORE", queue, id)
      end
      if score and passes(f, now, score, m and m[1], m and m[2]) then
        local body = redis.call("HGET", attrs, id) or ""
        read = read + #body
        if found(f, id, body) then
          m = m or redis.call("HMGET", attrs, id .. ":rc", id .. ":fr", id .. ":dl")
          add(res, id, score, body, m)
          got = got + 1
        end
      end
    end
  end
end
res[3] = examined
res[4] = done
return res
