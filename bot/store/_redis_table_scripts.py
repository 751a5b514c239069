"""The Lua scripts of :class:`~bot.store._redis_store.RedisTableStore`: every write of a table is one of them.

Each script is atomic and says what it takes (``KEYS``, ``ARGV``) and what it returns; the keys are those of
:mod:`bot.store._redis_layout`. On a single server ``LUA_CREATE``, ``LUA_CAS`` and ``LUA_DELETE`` also keep
the chat and user index entries (they build those keys from the prefix). On a cluster those entries are in
other slots: the store writes them after the table's script (``LUA_CLAIM_INDEX``, ``LUA_DEL_IF``), and a
create is ``LUA_CREATE_PENDING``, the chat's claim, then ``LUA_CREATE_DONE``. There a write's script tells
whether its entries must be written at all (most writes change neither the chat nor the users): the table's
field ``ix`` holds the version whose entries are being written, until the store has written them and clears
it (``LUA_HDEL_IF``), so that the next write writes them again if a worker died in between.
"""

__all__ = [
    "LUA_CAS",
    "LUA_CLAIM_INDEX",
    "LUA_CREATE",
    "LUA_CREATE_DONE",
    "LUA_CREATE_PENDING",
    "LUA_DELETE",
    "LUA_DEL_IF",
    "LUA_HDEL_IF",
    "LUA_LIVE",
    "LUA_MARK_ENTRIES",
]

# Shared Lua helpers. del_if: delete KEY only if it still points at TID (never clobber a newer table's index).
# json_array: cjson encodes an empty table as {} (an object); the users field is always an array.
_LUA_HELPERS = """
local function del_if(key, tid)
  if redis.call('GET', key) == tid then redis.call('DEL', key) end
end
local function json_array(list)
  if #list == 0 then return '[]' end
  return cjson.encode(list)
end
"""

# Single server. KEYS[1] table key, KEYS[2] live set; ARGV: prefix, table id, data, chat key, user keys...
# Returns {1} created, {-1} table exists, {-2, other_id} chat busy.
LUA_CREATE = (
    _LUA_HELPERS
    + """
local tkey = KEYS[1]
local prefix, tid, data, chat = ARGV[1], ARGV[2], ARGV[3], ARGV[4]
if redis.call('EXISTS', tkey) == 1 then return {-1} end
local ckey = prefix .. 'chat:' .. chat
local other = redis.call('GET', ckey)
if other and other ~= tid then
  local okey = prefix .. 'table:' .. other
  if redis.call('EXISTS', okey) == 1 and redis.call('HGET', okey, 'fin') ~= '1' then return {-2, other} end
end
local users = {}
for i = 5, #ARGV do users[#users + 1] = ARGV[i] end
redis.call('HSET', tkey, 'v', 1, 'data', data, 'chat', chat, 'users', json_array(users), 'fin', '0')
redis.call('SET', ckey, tid)
for _, u in ipairs(users) do redis.call('SET', prefix .. 'user:' .. u, tid) end
redis.call('SADD', KEYS[2], tid)
return {1}
"""
)

# Cluster, first step of a create. KEYS[1] table key; ARGV: data, chat key, ttl, user keys... Writes the
# table, expiring (it is not in the live set yet), with its entries marked pending (ix = 1, the version whose
# entries are not all written yet). Returns 1, or -1 if the table exists.
LUA_CREATE_PENDING = (
    _LUA_HELPERS
    + """
local tkey = KEYS[1]
if redis.call('EXISTS', tkey) == 1 then return -1 end
local users = {}
for i = 4, #ARGV do users[#users + 1] = ARGV[i] end
redis.call('HSET', tkey, 'v', 1, 'data', ARGV[1], 'chat', ARGV[2], 'users', json_array(users), 'fin', '0',
  'ix', 1)
redis.call('EXPIRE', tkey, ARGV[3])
return 1
"""
)

# Cluster, last step of a create. KEYS[1] table key, KEYS[2] live set shard; ARGV[1] table id.
# Returns 1, or 0 if the table expired before the chat was claimed.
LUA_CREATE_DONE = """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('PERSIST', KEYS[1])
redis.call('SADD', KEYS[2], ARGV[1])
return 1
"""

# Cluster. KEYS[1] an index entry; ARGV: table id, the id it must hold now ('' for none).
# Points the entry at the table if it still holds what the caller saw. Returns 1, or 0 if it changed.
LUA_CLAIM_INDEX = """
if (redis.call('GET', KEYS[1]) or '') ~= ARGV[2] then return 0 end
redis.call('SET', KEYS[1], ARGV[1])
return 1
"""

# Cluster. KEYS[1] an index entry; ARGV[1] table id. Removes the entry if it still names the table.
LUA_DEL_IF = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""

# Cluster. KEYS[1] a table key; ARGV: a field, a value. Removes the field if it still holds the value (the
# entries of the version in ``ix`` are written; a later write that set ``ix`` again keeps its own).
LUA_HDEL_IF = """
if redis.call('HGET', KEYS[1], ARGV[1]) == ARGV[2] then return redis.call('HDEL', KEYS[1], ARGV[1]) end
return 0
"""

# Cluster. KEYS[1] a table key. Marks the table's entries pending (``ix``, unless marked already) if the table
# exists, so that its next write writes them all. Returns 1 if it marked them.
LUA_MARK_ENTRIES = """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
return redis.call('HSETNX', KEYS[1], 'ix', '0')
"""

# KEYS[1] table key, KEYS[2] its deadlines (shard), KEYS[3] its live set (shard); ARGV: inline indexes ('1':
# single server, the script keeps the chat and user indexes; '0': cluster, the caller does), prefix, table
# id, expected version, data, has chat ('1'/'0'), chat key, finished ('1'/'0'), ttl seconds, n (deadlines to
# schedule), n × (key, due), m (to cancel), m × key, user keys... Deadlines change only if the write does.
# Returns {1, new version, old chat, old users (JSON), chat, entries} ('' for no chat), {0, current version,
# current data} on conflict, {-1} if the table does not exist, and (inline only) {-2, other id} if the table
# would move to a chat whose entry names another live table (nothing written; on a cluster the store claims
# that entry before the script). ``entries`` (cluster only, else 0) is 1 if the caller must write the index
# entries: the write finishes or reopens the table, changes its chat or its users, is the first after its
# create, or follows a write whose entries may not all be written (``ix`` is set); the script then sets
# ``ix`` to the new version. A write adds the table to the live set and makes it persistent only when it
# reopens a finished table or, on a cluster, may complete a pending create (a table at version 1, or one
# whose entries are pending): no command for what is there already.
LUA_CAS = (
    _LUA_HELPERS
    + """
local tkey, dkey, lkey = KEYS[1], KEYS[2], KEYS[3]
local inline, prefix, tid, expected, data = ARGV[1] == '1', ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local has_chat, finished, ttl = ARGV[6] == '1', ARGV[8] == '1', ARGV[9]
local before = redis.call('HMGET', tkey, 'v', 'chat', 'users', 'fin', 'ix')
local cur, old_chat, old_users_json, pending = before[1], before[2], before[3], before[5]
if not cur then return {-1} end
if cur ~= expected then return {0, tonumber(cur), redis.call('HGET', tkey, 'data')} end
local newv = tonumber(cur) + 1
-- A finished table left the live set and expires: a write that reopens it puts it back and keeps it.
local reopened = before[4] ~= '0'
local old_users = {}
if old_users_json then old_users = cjson.decode(old_users_json) end
local chat = old_chat
if has_chat then chat = ARGV[7] end
if inline and not finished and chat and chat ~= old_chat then
  local other = redis.call('GET', prefix .. 'chat:' .. chat)
  if other and other ~= tid then
    local okey = prefix .. 'table:' .. other
    if redis.call('EXISTS', okey) == 1 and redis.call('HGET', okey, 'fin') ~= '1' then return {-2, other} end
  end
end
local n_sched = tonumber(ARGV[10])
local i = 11
local sched = {}
for _ = 1, n_sched do sched[#sched + 1] = ARGV[i + 1]; sched[#sched + 1] = ARGV[i]; i = i + 2 end
local n_cancel = tonumber(ARGV[i])
local cancel = {}
for j = i + 1, i + n_cancel do cancel[#cancel + 1] = ARGV[j] end
i = i + n_cancel + 1
local users, listed = {}, {}
for j = i, #ARGV do users[#users + 1] = ARGV[j]; listed[ARGV[j]] = true end
local users_json = json_array(users)
local fields = {'v', newv, 'data', data, 'users', users_json, 'fin', finished and '1' or '0'}
if chat then fields[#fields + 1] = 'chat'; fields[#fields + 1] = chat end
local entries = 0
-- (The first write after a create writes them too: a create of an earlier version that died did not mark it.)
local moved = chat ~= old_chat or users_json ~= old_users_json
if not inline and (finished or reopened or pending or cur == '1' or moved) then
  entries = 1
  fields[#fields + 1] = 'ix'; fields[#fields + 1] = newv
end
redis.call('HSET', tkey, unpack(fields))
if finished then
  if inline then
    if old_chat then del_if(prefix .. 'chat:' .. old_chat, tid) end
    if chat then del_if(prefix .. 'chat:' .. chat, tid) end
    for _, u in ipairs(old_users) do del_if(prefix .. 'user:' .. u, tid) end
    for _, u in ipairs(users) do del_if(prefix .. 'user:' .. u, tid) end
  end
  redis.call('EXPIRE', tkey, ttl)
  redis.call('SREM', lkey, tid)
else
  if inline and (moved or reopened) then
    if old_chat and old_chat ~= chat then del_if(prefix .. 'chat:' .. old_chat, tid) end
    -- Only a write that changes the chat or the people (or reopens the table) sets the entries, in one MSET,
    -- as on a cluster: most writes (a bet, a discard) touch none.
    local set = {}
    if chat then set[1] = prefix .. 'chat:' .. chat; set[2] = tid end
    for _, u in ipairs(users) do
      set[#set + 1] = prefix .. 'user:' .. u
      set[#set + 1] = tid
    end
    if #set > 0 then redis.call('MSET', unpack(set)) end
    for _, u in ipairs(old_users) do
      if not listed[u] then del_if(prefix .. 'user:' .. u, tid) end
    end
  end
  -- (On a cluster a table may still be pending, with a short TTL and outside the live set, until its first
  -- write: see create.)
  if reopened or (not inline and (cur == '1' or pending)) then
    redis.call('PERSIST', tkey)
    redis.call('SADD', lkey, tid)
  end
end
if #cancel > 0 then redis.call('ZREM', dkey, unpack(cancel)) end
if #sched > 0 then redis.call('ZADD', dkey, unpack(sched)) end
return {1, newv, old_chat or '', old_users_json or '[]', chat or '', entries}
"""
)

# KEYS[1] table key, KEYS[2] its live set (shard); ARGV: inline indexes ('1'/'0', as above), prefix, table id.
# Returns {chat, users (JSON)} of the table deleted ('' and '[]' if there was none).
LUA_DELETE = (
    _LUA_HELPERS
    + """
local tkey = KEYS[1]
local inline, prefix, tid = ARGV[1] == '1', ARGV[2], ARGV[3]
local chat = redis.call('HGET', tkey, 'chat')
local users_json = redis.call('HGET', tkey, 'users')
if inline then
  if chat then del_if(prefix .. 'chat:' .. chat, tid) end
  if users_json then
    for _, u in ipairs(cjson.decode(users_json)) do del_if(prefix .. 'user:' .. u, tid) end
  end
end
redis.call('DEL', tkey)
redis.call('SREM', KEYS[2], tid)
return {chat or '', users_json or '[]'}
"""
)

# KEYS[1] live set (shard); ARGV[1] what the keys of its tables start with. Returns the ids of the live
# tables, dropping from the set those whose table is finished or gone (a finished table has already left it;
# this only tidies what a crash or a manual deletion left behind).
LUA_LIVE = """
local live = {}
for _, tid in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  if redis.call('HGET', ARGV[1] .. tid, 'fin') == '0' then
    live[#live + 1] = tid
  else
    redis.call('SREM', KEYS[1], tid)
  end
end
return live
"""
