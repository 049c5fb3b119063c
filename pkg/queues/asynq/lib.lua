-- lib: what the scripts that write share, put after luascript.Permitted
-- and before each one's own text. It writes nothing.

-- wrongtype returns an error reply when key holds something other than
-- typ (nothing is fine), before a script's first write.
local function wrongtype(key, typ)
  local t = redis.call("TYPE", key)["ok"]
  if t ~= "none" and t ~= typ then
    return redis.error_reply("WRONGTYPE " .. key .. " holds a " .. t .. ", not a " .. typ .. ": nothing written")
  end
  return nil
end

-- check returns the first error of wrongtype over {key, typ} pairs, or a
-- refusal when the ACL lets this user run not every command of cmds.
local function check(types, cmds)
  for _, kt in ipairs(types) do
    local e = wrongtype(kt[1], kt[2])
    if e then
      return e
    end
  end
  if not allowed(unpack(cmds)) then
    return redis.error_reply("NOPERM this user may not run every command the operation needs: nothing written")
  end
  return nil
end

-- searched counts the list entries this call's listend compared (and its
-- LREM will), kept within search_budget, which the script sets.
local search_budget, searched = 0, 0

-- listend returns 1 when id is within limit entries of list's head, -1
-- when within limit of its tail, false when it is in neither stretch:
-- LREM with that count then stops where it finds id, so that removing it
-- does bounded work. It returns nil, looking at nothing, when this call's
-- budget cannot cover both stretches (the caller leaves the task for
-- another call).
local function listend(list, id, limit)
  local n = redis.call("LLEN", list)
  limit = math.min(limit, n)
  if searched + 4 * limit > search_budget then
    return nil
  end
  local i = redis.call("LPOS", list, id, "MAXLEN", limit)
  if i then
    searched = searched + 2 * (i + 1)
    return 1
  end
  searched = searched + limit
  i = redis.call("LPOS", list, id, "RANK", -1, "MAXLEN", limit)
  if i then
    searched = searched + 2 * (n - i)
    return -1
  end
  searched = searched + limit
  return false
end
