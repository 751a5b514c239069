"""The Lua scripts of :class:`bot.delivery._surfaces.RedisSurfaces`: each step on a table's surfaces is one
script on one key (the table's hash; the chat's pacing key), so that workers deciding at once see one order,
on a single server or a cluster.

The fields of a slot ``f`` (``{chat}:{slot}``) in the table's hash: ``f`` the message showing the slot and
``f:p`` its epoch; ``f:e`` the newest epoch offered and ``f:e0`` the one before (the only two kept); for an
epoch ``e``, ``f@e:v`` its newest version offered, ``f@e:view`` that view, ``f@e:h`` its digest, ``f@e:m``
the epoch's message, ``f@e:post`` the worker posting it (``{token}:{ms}``, on Redis's clock) until it is
recorded, and ``f@e:strip`` the worker removing its buttons (the same form) until that call lands; and what
that message is known to show, for the workers that would draw it again: ``f@e:n`` how many calls on it have
landed (counted when their worker heard back), ``f@e:d`` the digest of what it shows and ``f@e:b`` whether it
has buttons (``1``, ``0``; a strip leaves the digest empty: the text stays); ``f:bare`` the slot's message
once its epoch's fields are gone, if it was known to have no buttons. Known only while the last call that
landed was begun after every other that landed before it (its worker read ``f@e:n`` before the call, and it
had not moved when the call landed), or crossed only calls that drew the same: two calls on their way at once
may reach the platform in either order, and then nothing is known (both fields go) until the next call that
lands alone. A call on its way when a worker reads what the message shows is that call's worker's to check
after it (:meth:`bot.delivery._drawing.Drawer.after_call`). And ``f:gone``: the last :data:`GONE_KEPT`
messages of forgotten epochs known to have no buttons (their ids, newest first, spaced), so that a strip or
a check of one, queued while newer hands came, still knows it bare.
"""

from __future__ import annotations

#: Messages of forgotten epochs remembered bare per slot (``f:gone``): a strip queued behind two newer hands
#: still finds its message known bare.
GONE_KEPT = 4

#: How long a worker's claim to post an epoch's message holds (seconds), at most: until then other workers
#: leave their views of the epoch to it (it shows the newest offered once it posted) rather than post a second
#: copy. Past it (a worker that died posting, or a call held that long by a rate limiter) the next one posts.
POST_CLAIM = 5.0

# KEYS[1] the table's hash; ARGV: f, version, view, ttl, digest ('' for none), epoch, the worker's token if
# it posts the epoch's message when there is none ('' if it will not), the claim's length in ms, 1 if the
# digest is compared with the newest offered's (0: only kept, for the next offers to compare). Returns 1 if
# taken, 0 if not (a newer version of the epoch, or an epoch too old), 2 if the epoch's newest shows the
# same; the version offered before for the epoch, its message (false: none), the newest epoch, and the
# claim to post the epoch's message, if it has none: 1 this worker's (now), 2 another's, 0 none asked; the
# ms another worker's claim still holds; how many calls on the epoch's message have landed, and what it is
# known to show (its digest, '' after a strip, and 1 or 0 for its buttons; false, false: not known).
# Everything it reads is one HMGET (an epoch's fields do not depend on what the slot holds: the epoch is the
# caller's).
OFFER = (
    """
local f, e = ARGV[1], tonumber(ARGV[6])
local g = f .. '@' .. e
local read = redis.call(
  'HMGET', KEYS[1], f .. ':e', f .. ':e0', g .. ':v', g .. ':m', g .. ':post', g .. ':h',
  g .. ':n', g .. ':d', g .. ':b'
)
local newest, older = tonumber(read[1] or '-1'), tonumber(read[2] or '-1')
if e > newest then
  if older >= 0 then
    local g0 = f .. '@' .. older
    -- The slot's message may still be that epoch's (a newer epoch offered, never posted): if it is known to
    -- have no buttons, the slot keeps that much, for the record of the message that replaces it.
    local kept = redis.call('HMGET', KEYS[1], f, g0 .. ':m', g0 .. ':b', f .. ':gone')
    if kept[1] and kept[1] == kept[2] and kept[3] == '0' then
      redis.call('HSET', KEYS[1], f .. ':bare', kept[1])
    end
    if kept[2] and kept[3] == '0' then
      local gone = {kept[2]}
      for id in string.gmatch(kept[4] or '', '%S+') do
        if #gone < """
    + str(GONE_KEPT)
    + """ and id ~= kept[2] then gone[#gone + 1] = id end
      end
      redis.call('HSET', KEYS[1], f .. ':gone', table.concat(gone, ' '))
    end
    redis.call(
      'HDEL', KEYS[1], g0 .. ':v', g0 .. ':view', g0 .. ':h', g0 .. ':m', g0 .. ':post',
      g0 .. ':n', g0 .. ':d', g0 .. ':b', g0 .. ':strip'
    )
  end
  redis.call('HSET', KEYS[1], f .. ':e', e, f .. ':e0', newest)
  newest = e
elseif e ~= newest and e ~= older then
  return {0, 0, false, newest, 0, 0, 0, false, false}
end
local landed, shows, buttons = tonumber(read[7] or '0'), read[8], read[9]
local previous = tonumber(read[3] or '0')
local mine = read[4]
local function claim()
  if mine or ARGV[7] == '' or e ~= newest then return 0, 0 end
  local time = redis.call('TIME')
  local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
  local held = read[5]
  if held then
    local holder, since = string.match(held, '^(.*):(%d+)$')
    local left = holder and tonumber(ARGV[8]) - (now - tonumber(since)) or 0
    if holder ~= ARGV[7] and left > 0 then return 2, left end
  end
  redis.call('HSET', KEYS[1], g .. ':post', ARGV[7] .. ':' .. now)
  return 1, 0
end
if tonumber(ARGV[2]) < previous then
  local status, left = claim()
  return {0, previous, mine, newest, status, left, landed, shows, buttons}
end
if ARGV[9] == '1' and ARGV[5] ~= '' and read[6] == ARGV[5] then
  return {2, previous, mine, newest, 0, 0, landed, shows, buttons}
end
redis.call('HSET', KEYS[1], g .. ':v', ARGV[2], g .. ':view', ARGV[3], g .. ':h', ARGV[5])
-- The hash lives a week after its last new epoch (and its last message recorded): far longer than one.
if previous == 0 then redis.call('EXPIRE', KEYS[1], tonumber(ARGV[4])) end
local status, left = claim()
return {1, previous, mine, newest, status, left, landed, shows, buttons}
"""
)

# KEYS[1] the table's hash; ARGV: f, message id, epoch (-1: no epoch, just the slot's message), ttl, the
# message it replaces ('' for none). Returns 1 if taken (else 0) and the message replaced: the slot's, or for
# an epoch older than the slot's message, that epoch's (else the message that was recorded first), the
# epoch of the message replaced (-1: none, or not known), and 1 if that message is known to have no buttons.
RECORD = """
local f, e = ARGV[1], tonumber(ARGV[3])
local current = redis.call('HGET', KEYS[1], f)
if e < 0 then
  redis.call('HSET', KEYS[1], f, ARGV[2], f .. ':p', 0)
  redis.call('EXPIRE', KEYS[1], tonumber(ARGV[4]))
  return {1, current, -1, 0}
end
local g = f .. '@' .. e
local mine = redis.call('HGET', KEYS[1], g .. ':m')
if mine and mine ~= ARGV[5] then return {0, mine, e, 0} end
redis.call('HSET', KEYS[1], g .. ':m', ARGV[2])
-- A new message of the epoch: nothing is known of what it shows until its own call lands.
redis.call('HDEL', KEYS[1], g .. ':post', g .. ':d', g .. ':b', g .. ':strip')
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[4]))
local posted = tonumber(redis.call('HGET', KEYS[1], f .. ':p') or '0')
if e >= posted then
  redis.call('HSET', KEYS[1], f, ARGV[2], f .. ':p', e)
  if not current then return {1, current, -1, 0} end
  local g0 = f .. '@' .. posted
  local was = redis.call('HMGET', KEYS[1], g0 .. ':m', g0 .. ':b', f .. ':bare')
  redis.call('HDEL', KEYS[1], f .. ':bare')
  local bare = (was[1] == current and was[2] == '0') or was[3] == current
  return {1, current, posted, bare and 1 or 0}
end
return {1, mine, e, 0}
"""

# KEYS[1] the table's hash; ARGV: f, the epoch, the message a call landed on, the digest of what the call
# drew ('' for a strip: the text stays), 1 if the message has buttons now (0: none), and how many calls on
# the message had landed when the call began (-1: not known). Records the call if the message is the
# epoch's (the fields in the module's docstring); returns the epoch's newest version offered, that view,
# the epoch's message and the slot's newest epoch (what :meth:`RedisSurfaces.newest` reads), and 1 if what the
# message shows is known after the call (else 0): it landed alone (recorded, and begun after every other call
# on the message had landed), or it crossed others but drew the same as what was known (the same view, or a
# strip of a message known bare): whichever landed last, the message shows that; else nothing is known.
LANDED = """
local f = ARGV[1]
local g = f .. '@' .. ARGV[2]
local read = redis.call(
  'HMGET', KEYS[1], g .. ':v', g .. ':view', g .. ':m', f .. ':e', g .. ':n', g .. ':d', g .. ':b',
  f .. ':gone'
)
if ARGV[5] == '1' and read[8] then
  -- A call that drew buttons (or nobody knows what) on a forgotten message known bare: it is not, any more.
  local kept = {}
  for id in string.gmatch(read[8], '%S+') do
    if id ~= ARGV[3] then kept[#kept + 1] = id end
  end
  redis.call('HSET', KEYS[1], f .. ':gone', table.concat(kept, ' '))
end
local known = 0
if read[3] == ARGV[3] then
  local landed = tonumber(read[5] or '0')
  if tonumber(ARGV[6]) == landed then
    redis.call('HSET', KEYS[1], g .. ':n', landed + 1, g .. ':d', ARGV[4], g .. ':b', ARGV[5])
    known = 1
  else
    redis.call('HSET', KEYS[1], g .. ':n', landed + 1)
    -- (A call whose digest is '' with buttons drew what nobody knows: an edit that timed out.)
    local strip = ARGV[4] == '' and ARGV[5] == '0'
    local same = (ARGV[4] ~= '' and read[6] == ARGV[4]) or (strip and read[7] == '0')
    if same then known = 1 else redis.call('HDEL', KEYS[1], g .. ':d', g .. ':b') end
  end
  -- A strip landed: its claim is over (the next worker that would strip finds what it shows, if known).
  if ARGV[5] == '0' then redis.call('HDEL', KEYS[1], g .. ':strip') end
end
return {read[1], read[2], read[3], read[4], known}
"""


# KEYS[1] the chat's pacing key; ARGV[1] the interval in ms. Returns the wait in ms (Redis's clock, so every
# worker books on one clock).
PACE = """
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local at = math.max(tonumber(redis.call('GET', KEYS[1]) or '0'), now)
local interval = tonumber(ARGV[1])
redis.call('SET', KEYS[1], at + interval, 'PX', at + interval - now + 1000)
return at - now
"""

# KEYS[1] the table's hash; ARGV: f@e (the slot's epoch), the worker's token, the claim ('post' or 'strip'),
# how long (ms) it holds beyond its length from now. Renews the worker's claim to post the epoch's message, or
# to remove its buttons (its call is still on its way: a rate limiter holds it); 1 if renewed, 0 if the claim
# is gone (another worker's now, or a post's message recorded, or a strip landed). A claim held beyond its
# length is written as taken that much later (its time is in the future).
RENEW = """
local g, what = ARGV[1], ARGV[3]
local read = redis.call('HMGET', KEYS[1], g .. ':m', g .. ':' .. what)
if what == 'post' and read[1] then return 0 end
local held = read[2]
if not held or string.match(held, '^(.*):%d+$') ~= ARGV[2] then return 0 end
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
redis.call('HSET', KEYS[1], g .. ':' .. what, ARGV[2] .. ':' .. (now + tonumber(ARGV[4])))
return 1
"""

# KEYS[1] the table's hash; ARGV: f@e (the slot's epoch), the message whose buttons go, the worker's token,
# the claim's length in ms. One worker at a time removes the buttons of an epoch's message: returns how many
# calls on it have landed (-1: it is not the epoch's message: nothing is kept of it, nor claimed — but it is
# known bare if it is among the slot's forgotten messages known bare), what it is known to show (digest and
# buttons, or false, false), and the ms another worker's claim still holds (0: the claim is this worker's now,
# or the message is known to have no buttons: no call to make).
STRIP = """
local g = ARGV[1]
local f = string.match(g, '^(.*)@[^@]*$')
local read = redis.call(
  'HMGET', KEYS[1], g .. ':m', g .. ':n', g .. ':d', g .. ':b', g .. ':strip', f .. ':gone'
)
if read[1] ~= ARGV[2] then
  for id in string.gmatch(read[6] or '', '%S+') do
    if id == ARGV[2] then return {-1, '', '0', 0} end
  end
  return {-1, false, false, 0}
end
local landed = tonumber(read[2] or '0')
if read[4] == '0' then return {landed, read[3], read[4], 0} end
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
if read[5] then
  local holder, since = string.match(read[5], '^(.*):(%d+)$')
  local left = holder and tonumber(ARGV[4]) - (now - tonumber(since)) or 0
  if holder ~= ARGV[3] and left > 0 then return {landed, read[3], read[4], left} end
end
redis.call('HSET', KEYS[1], g .. ':strip', ARGV[3] .. ':' .. now)
return {landed, read[3], read[4], 0}
"""

# KEYS[1] the table's hash; ARGV[1] a chat's prefix of its fields ('{chat}:'). Deletes every field of the
# chat's slots; returns each slot and the message that showed it (slot, message, slot, message...).
FORGET_CHAT = """
local prefix = ARGV[1]
local flat = redis.call('HGETALL', KEYS[1])
local fields, shown = {}, {}
for i = 1, #flat, 2 do
  local f = flat[i]
  if string.sub(f, 1, #prefix) == prefix then
    fields[#fields + 1] = f
    local slot = string.sub(f, #prefix + 1)
    if not string.find(slot, '[:@]') then
      shown[#shown + 1] = slot
      shown[#shown + 1] = flat[i + 1]
    end
  end
end
if #fields > 0 then redis.call('HDEL', KEYS[1], unpack(fields)) end
return shown
"""
