-- permitted: the permission check every chatq script makes before its
-- first write, put in front of each script's text (luascript.Permitted).
-- It defines allowed, and writes nothing.

-- refusing returns, per command a script writes with, arguments that
-- the command itself refuses (an odd field list, a count, an increment or
-- a lifetime that is not a number, NX with XX) after the server's ACL
-- check and before it reads or changes anything. SET NX XX never sets
-- either way; PEXPIRE key x answers "not an integer" on Redis 6.2. Made
-- only there: Redis 7 has no use for it, and a table made at every call
-- of every script costs.
local function refusing()
  return {
    HSET = {'f', 'v', 'f'},
    HINCRBY = {'f', 'x'},
    ZADD = {'NX', 'XX', '0', 'm'},
    ZREMRANGEBYRANK = {'x', '0'},
    SET = {'v', 'NX', 'XX'},
    LTRIM = {'x', '0'},
    PEXPIRE = {'x'},
  }
end

-- permitted reports whether the ACL lets this user run command c,
-- {name, key, args...}. Redis 7 and Valkey answer redis.acl_check_cmd (a
-- command the server lacks, renamed or disabled, is not permitted: the
-- function raises for it). Redis 6.2 has no such function, but it checks
-- a script's declared keys when the script is called, and a command's ACL
-- (the command, then its keys) each time the script runs it, before the
-- command looks at its arguments: c runs in a form it refuses itself
-- (refusing), or removes a member that is not there (ZREM, HDEL), and the
-- error tells an ACL refusal from the command's own. A command with no
-- such form (UNLINK, INCR, LPUSH, SADD…) is not probed: a script runs it
-- as its first write, or the client checks it (docs/compatibility.md).
local function permitted(c)
  if redis.acl_check_cmd then
    local ok, yes = pcall(redis.acl_check_cmd, unpack(c))
    return ok and yes
  end
  local name, key = string.upper(c[1]), c[2]
  local r
  local refused = refusing()[name]
  if refused then
    r = redis.pcall(name, key, unpack(refused))
  elseif name == 'ZREM' or name == 'HDEL' then
    -- No chatq or rsmq key holds such a member; read first all the same.
    local probe = '\0chatq:acl'
    local there
    if name == 'ZREM' then
      there = redis.call('ZSCORE', key, probe)
    else
      there = redis.call('HMGET', key, probe)[1]
    end
    if there then
      return true
    end
    r = redis.pcall(name, key, probe)
  else
    return true
  end
  return not (type(r) == 'table' and r.err and string.find(r.err, 'The user executing the script ', 1, true))
end

-- allowed reports whether this user may run each command given as
-- {name, key, args...}: checked before a script's first write, so that a
-- refusal changes nothing.
local function allowed(...)
  for _, c in ipairs({...}) do
    if not permitted(c) then
      return false
    end
  end
  return true
end
