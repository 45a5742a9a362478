"""The Lua scripts of the Redis store: each change of a session's keys is one atomic
script, so that no other process sees half of it and no event falls between a replay
and the relay that follows it.

Keys of one session share the hash tag ``{<session id>}`` (one cluster slot):
``<p>{sid}:s`` the record (a hash; ``seq`` numbers the session's events),
``<p>{sid}:e:<stream>`` a stream's events (a Redis stream, entry ids ``<seq>-1``,
field ``d``), ``<p>{sid}:m:<stream>`` its meta (``p`` writer, ``h`` holder as
``<process>:<token>``, ``ids`` its requests as JSON, ``done``, ``sz`` bytes kept,
``ev`` the last sequence number evicted), ``<p>{sid}:st`` the request streams by last
use. A relayed event is published on ``<p>to:<process>`` as
``ev\\n<sid>\\n<stream>\\n<seq>\\n<payload>``.
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "ATTACH",
    "CREATE_SESSION",
    "DETACH",
    "END",
    "END_SESSION",
    "LEASE",
    "OPENED",
    "PUBLISH",
    "SAVE_SESSION",
    "SAVE_TASK",
    "SCRIPTS",
    "SESSIONS_LIVE",
    "SUBSCRIBE",
    "TASK_INDEX",
    "TOUCH",
]

#: The process part of a holder ``<process>:<token>``; and the relay of one envelope.
_COMMON: Final = r"""
local function holder_process(h)
  if not h then return nil end
  return tonumber(string.match(h, '^(%d+):'))
end
local function relay(chan, kind, sid, stream, seq, payload)
  local head = kind .. '\n' .. sid .. '\n' .. stream .. '\n' .. seq .. '\n'
  redis.call('PUBLISH', chan, head .. payload)
end
local function expire(ttl, ...)
  for _, key in ipairs({...}) do redis.call('PEXPIRE', key, ttl) end
end
-- a request stream was used at ``seq``: keep at most ``max`` of them (the session's
-- ``streams`` zset; ``prefix`` of its keys), the least recently used go whole
local function keep_streams(session, streams, prefix, stream, seq, max)
  redis.call('ZADD', streams, seq, stream)
  local excess = redis.call('ZCARD', streams) - max
  if excess <= 0 then return end
  for _, old in ipairs(redis.call('ZRANGE', streams, 0, excess - 1)) do
    local freed = tonumber(redis.call('HGET', prefix .. 'm:' .. old, 'sz') or '0')
    redis.call('HINCRBY', session, 'sz', 0 - freed)  -- never -0: not an integer to Redis
    redis.call('DEL', prefix .. 'e:' .. old, prefix .. 'm:' .. old)
    redis.call('ZREM', streams, old)
  end
end
"""

#: KEYS s e m st; ARGV stream payload last max_events max_bytes max_streams ttl self
#: chan_prefix sid key_prefix max_session_bytes. Returns the event's sequence number (0:
#: not kept, the stream or the session is unknown). Bounds: ``max_events`` and
#: ``max_bytes`` per stream, ``max_session_bytes`` across the session's streams (its
#: oldest event goes first, whichever stream holds it); an event larger than a bound is
#: not kept. What a bound evicts is remembered (``ev``): a replay from before it is a gap.
PUBLISH: Final = (
    _COMMON
    + r"""
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local fresh = redis.call('EXISTS', KEYS[3]) == 0
if fresh and ARGV[1] == '0' then return 0 end  -- the standalone stream was never opened
local payload = ARGV[2]
local size = #payload
local max_events = tonumber(ARGV[4])
local max_bytes = tonumber(ARGV[5])
local max_session = tonumber(ARGV[12])
local prefix = ARGV[11]
local seq = redis.call('HINCRBY', KEYS[1], 'seq', 1)
if ARGV[1] ~= '0' then
  keep_streams(KEYS[1], KEYS[4], prefix, ARGV[1], seq, tonumber(ARGV[6]))
end
if fresh then  -- evicted whole, written again: nothing from before this event is kept
  redis.call('HSET', KEYS[3], 'p', ARGV[8], 'ids', '[]', 'done', 0, 'ev', seq - 1)
end
-- drop the first event of the stream whose keys are ``events``/``meta``
local function pop(events, meta)
  local oldest = redis.call('XRANGE', events, '-', '+', 'COUNT', 1)[1]
  if not oldest then return false end
  redis.call('XDEL', events, oldest[1])
  local size = 0 - #oldest[2][2]  -- never -0: not an integer to Redis
  redis.call('HINCRBY', meta, 'sz', size)
  redis.call('HINCRBY', KEYS[1], 'sz', size)
  redis.call('HSET', meta, 'ev', string.match(oldest[1], '^(%d+)'))
  return true
end
-- drop the session's oldest event, whichever stream holds it
local function pop_oldest()
  local best, best_seq = nil, nil
  local streams = redis.call('ZRANGE', KEYS[4], 0, -1)
  streams[#streams + 1] = '0'
  for _, stream in ipairs(streams) do
    local first = redis.call('XRANGE', prefix .. 'e:' .. stream, '-', '+', 'COUNT', 1)[1]
    if first then
      local n = tonumber(string.match(first[1], '^(%d+)'))
      if not best_seq or n < best_seq then best, best_seq = stream, n end
    end
  end
  if not best then return false end
  return pop(prefix .. 'e:' .. best, prefix .. 'm:' .. best)
end
if size > max_bytes or size > max_session then
  redis.call('HSET', KEYS[3], 'ev', seq)
else
  local count = redis.call('XLEN', KEYS[2])
  local kept = tonumber(redis.call('HGET', KEYS[3], 'sz') or '0')
  while count >= max_events or kept + size > max_bytes do
    if not pop(KEYS[2], KEYS[3]) then break end
    count = count - 1
    kept = tonumber(redis.call('HGET', KEYS[3], 'sz') or '0')
  end
  while tonumber(redis.call('HGET', KEYS[1], 'sz') or '0') + size > max_session do
    if not pop_oldest() then break end
  end
  redis.call('XADD', KEYS[2], seq .. '-1', 'd', payload)
  redis.call('HINCRBY', KEYS[3], 'sz', size)
  redis.call('HINCRBY', KEYS[1], 'sz', size)
end
local h = holder_process(redis.call('HGET', KEYS[3], 'h'))
local me = tonumber(ARGV[8])
if h and h ~= me then
  relay(ARGV[9] .. h, 'ev', ARGV[10], ARGV[1], seq, payload)
end
if ARGV[3] == '1' then
  redis.call('HSET', KEYS[3], 'done', 1)
  if h and h ~= me then relay(ARGV[9] .. h, 'end', ARGV[10], ARGV[1], seq, '') end
end
expire(tonumber(ARGV[7]), KEYS[1], KEYS[2], KEYS[3], KEYS[4])
return seq
"""
)

#: KEYS s m st; ARGV stream ids self token ttl max_streams key_prefix.
#: Returns {seq, previous holder or -1} ({0, -1}: the session is gone).
OPENED: Final = (
    _COMMON
    + r"""
if redis.call('EXISTS', KEYS[1]) == 0 then return {0, -1} end
local seq = redis.call('HINCRBY', KEYS[1], 'seq', 1)
local previous = holder_process(redis.call('HGET', KEYS[2], 'h')) or -1
if ARGV[1] ~= '0' and redis.call('EXISTS', KEYS[2]) == 0 then
  redis.call('HSET', KEYS[2], 'ev', seq - 1)  -- nothing from before it is kept
end
redis.call('HSET', KEYS[2], 'p', ARGV[3], 'h', ARGV[3] .. ':' .. ARGV[4], 'ids', ARGV[2], 'done', 0)
local ttl = tonumber(ARGV[5])
if ARGV[1] ~= '0' then
  keep_streams(KEYS[1], KEYS[3], ARGV[7], ARGV[1], seq, tonumber(ARGV[6]))
end
expire(ttl, KEYS[1], KEYS[2], KEYS[3])
return {seq, previous}
"""
)

#: KEYS s e m; ARGV stream after self token ttl hold. Returns {status, done, writer, ids,
#: previous, last_seq, entries...}: status 0 for an id past the session's events
#: (unknown), -1 when events after ``after`` are gone (evicted, or the stream is), 1
#: with the replay; with ``hold`` = 1 the stream is held by ``self`` from now on.
ATTACH: Final = (
    _COMMON
    + r"""
local after = tonumber(ARGV[2])
local last = tonumber(redis.call('HGET', KEYS[1], 'seq') or '-1')
if after > last then return {0} end
if redis.call('EXISTS', KEYS[3]) == 0 then return {-1} end
local evicted = tonumber(redis.call('HGET', KEYS[3], 'ev') or '0')
if evicted > after then return {-1} end
local previous = holder_process(redis.call('HGET', KEYS[3], 'h')) or -1
if ARGV[6] == '1' then
  redis.call('HSET', KEYS[3], 'h', ARGV[3] .. ':' .. ARGV[4])
  expire(tonumber(ARGV[5]), KEYS[1], KEYS[2], KEYS[3])
end
local meta = redis.call('HMGET', KEYS[3], 'done', 'p', 'ids')
local out = {1, meta[1] or '0', meta[2] or '', meta[3] or '[]', previous, last}
for _, entry in ipairs(redis.call('XRANGE', KEYS[2], '(' .. after .. '-1', '+')) do
  out[#out + 1] = string.match(entry[1], '^(%d+)')
  out[#out + 1] = entry[2][2]
end
return out
"""
)

#: KEYS m; ARGV holder (``<process>:<token>``): ends that attachment only.
DETACH: Final = r"""
if redis.call('HGET', KEYS[1], 'h') == ARGV[1] then redis.call('HDEL', KEYS[1], 'h') end
return 1
"""

#: KEYS m; ARGV stream self chan_prefix sid: the stream is complete.
END: Final = (
    _COMMON
    + r"""
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], 'done', 1)
local h = holder_process(redis.call('HGET', KEYS[1], 'h'))
if h and h ~= tonumber(ARGV[2]) then relay(ARGV[3] .. h, 'end', ARGV[4], ARGV[1], 0, '') end
return 1
"""
)

#: KEYS s st sessions; ARGV ttl key_prefix sid expiry_ms: the session was used: every
#: key of it lives on, and so does its listing among the live sessions (``sessions``, a
#: zset by expiry living as long as its newest member; not a key of the session's slot:
#: the store runs on one Redis). Returns 0 (nothing renewed) when the session is gone.
TOUCH: Final = r"""
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local ttl = tonumber(ARGV[1])
redis.call('PEXPIRE', KEYS[1], ttl)
redis.call('PEXPIRE', KEYS[2], ttl)
redis.call('PEXPIRE', ARGV[2] .. 'e:0', ttl)
redis.call('PEXPIRE', ARGV[2] .. 'm:0', ttl)
for _, stream in ipairs(redis.call('ZRANGE', KEYS[2], 0, -1)) do
  redis.call('PEXPIRE', ARGV[2] .. 'e:' .. stream, ttl)
  redis.call('PEXPIRE', ARGV[2] .. 'm:' .. stream, ttl)
end
redis.call('ZADD', KEYS[3], ARGV[4], ARGV[3])
redis.call('PEXPIRE', KEYS[3], ttl)
return 1
"""

#: KEYS s st sessions; ARGV key_prefix sid channel notice: every key of the session
#: goes, it leaves the live sessions, and ``notice`` is published on ``channel``.
END_SESSION: Final = r"""
for _, stream in ipairs(redis.call('ZRANGE', KEYS[2], 0, -1)) do
  redis.call('DEL', ARGV[1] .. 'e:' .. stream, ARGV[1] .. 'm:' .. stream)
end
redis.call('DEL', KEYS[1], KEYS[2], ARGV[1] .. 'e:0', ARGV[1] .. 'm:0')
redis.call('ZREM', KEYS[3], ARGV[2])
redis.call('PUBLISH', ARGV[3], ARGV[4])
return 1
"""

#: KEYS lease procs; ARGV value ttl process counter_ttl: renew this process's lease,
#: unless another process holds its number (0). A Redis that lost its data (restarted
#: without persistence) gets the lease back, and a process counter past this number.
#: The counter outlives every session (``counter_ttl``): numbers, which stream ids
#: carry, are never reused while a session that could hold one lives.
LEASE: Final = r"""
local current = redis.call('GET', KEYS[1])
if current and current ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
if tonumber(redis.call('GET', KEYS[2]) or '0') < tonumber(ARGV[3]) then
  redis.call('SET', KEYS[2], ARGV[3])
end
redis.call('PEXPIRE', KEYS[2], ARGV[4])
return 1
"""

#: KEYS listing; ARGV task_key_prefix: the task mirrors listed (oldest first), the
#: listed ones whose mirror expired removed from the listing, in one atomic step (a
#: task saved again meanwhile is never unlisted). Mirror keys are derived from the
#: members (``<task_key_prefix><id>``): the store runs on one Redis.
TASK_INDEX: Final = r"""
local docs = {}
for _, id in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  local doc = redis.call('GET', ARGV[1] .. id)
  if doc then docs[#docs + 1] = doc else redis.call('ZREM', KEYS[1], id) end
end
return docs
"""

# The scripts below hold what used to be several commands, in one round trip and
# atomically (the store's module doc says why not as a transaction).

#: KEYS s sessions; ARGV ttl sid expiry_ms field value...: a new session's record, and
#: its listing among the live sessions.
CREATE_SESSION: Final = r"""
redis.call('HSET', KEYS[1], unpack(ARGV, 4))
redis.call('PEXPIRE', KEYS[1], ARGV[1])
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[2])
redis.call('PEXPIRE', KEYS[2], ARGV[1])
return 1
"""

#: KEYS s; ARGV ttl channel notice field value...: a change of the record, then its
#: notice; a record that expired meanwhile is written again with a TTL.
SAVE_SESSION: Final = r"""
redis.call('HSET', KEYS[1], unpack(ARGV, 4))
redis.call('PEXPIRE', KEYS[1], ARGV[1], 'NX')
redis.call('PUBLISH', ARGV[2], ARGV[3])
return 1
"""

#: KEYS mirror [listing]; ARGV doc ttl channel notice task_id score: a task's mirror,
#: listed (the listing lives as long as its longest-lived task), then its notice.
SAVE_TASK: Final = r"""
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
if KEYS[2] then
  redis.call('ZADD', KEYS[2], 'NX', ARGV[6], ARGV[5])
  redis.call('PEXPIRE', KEYS[2], ARGV[2], 'GT')
  redis.call('PEXPIRE', KEYS[2], ARGV[2], 'NX')
end
redis.call('PUBLISH', ARGV[3], ARGV[4])
return 1
"""

#: KEYS sessions; ARGV now_ms: the live sessions, the expired dropped.
SESSIONS_LIVE: Final = r"""
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
return redis.call('ZRANGEBYSCORE', KEYS[1], ARGV[1], '+inf')
"""

#: KEYS subscribers; ARGV ttl sid: a subscriber added, the set never without a TTL.
SUBSCRIBE: Final = r"""
redis.call('SADD', KEYS[1], ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return 1
"""

#: Every script above (the store has Redis load them when it starts).
SCRIPTS: Final = (
    ATTACH,
    CREATE_SESSION,
    DETACH,
    END,
    END_SESSION,
    LEASE,
    OPENED,
    PUBLISH,
    SAVE_SESSION,
    SAVE_TASK,
    SESSIONS_LIVE,
    SUBSCRIBE,
    TASK_INDEX,
    TOUCH,
)
