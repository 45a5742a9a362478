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

__all__ = ["ATTACH", "DETACH", "END", "END_SESSION", "LEASE", "OPENED", "PUBLISH", "TOUCH"]

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
"""

#: KEYS s e m st; ARGV stream payload last max_events max_bytes max_streams ttl self
#: chan_prefix sid key_prefix. Returns {seq} (0: not kept, the stream is unknown).
PUBLISH: Final = (
    _COMMON
    + r"""
if redis.call('EXISTS', KEYS[1]) == 0 or redis.call('EXISTS', KEYS[3]) == 0 then
  return 0
end
local payload = ARGV[2]
local size = #payload
local max_events = tonumber(ARGV[4])
local max_bytes = tonumber(ARGV[5])
local seq = redis.call('HINCRBY', KEYS[1], 'seq', 1)
if size > max_bytes then
  redis.call('HSET', KEYS[3], 'ev', seq)
else
  redis.call('XADD', KEYS[2], seq .. '-1', 'd', payload)
  local kept = redis.call('HINCRBY', KEYS[3], 'sz', size)
  local count = redis.call('XLEN', KEYS[2])
  while count > max_events or kept > max_bytes do
    local oldest = redis.call('XRANGE', KEYS[2], '-', '+', 'COUNT', 1)[1]
    redis.call('XDEL', KEYS[2], oldest[1])
    kept = redis.call('HINCRBY', KEYS[3], 'sz', -#oldest[2][2])
    redis.call('HSET', KEYS[3], 'ev', string.match(oldest[1], '^(%d+)'))
    count = count - 1
  end
end
if ARGV[1] ~= '0' then
  redis.call('ZADD', KEYS[4], seq, ARGV[1])
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
redis.call('HSET', KEYS[2], 'p', ARGV[3], 'h', ARGV[3] .. ':' .. ARGV[4], 'ids', ARGV[2], 'done', 0)
local ttl = tonumber(ARGV[5])
if ARGV[1] ~= '0' then
  redis.call('ZADD', KEYS[3], seq, ARGV[1])
  local excess = redis.call('ZCARD', KEYS[3]) - tonumber(ARGV[6])
  if excess > 0 then
    for _, old in ipairs(redis.call('ZRANGE', KEYS[3], 0, excess - 1)) do
      redis.call('DEL', ARGV[7] .. 'e:' .. old, ARGV[7] .. 'm:' .. old)
      redis.call('ZREM', KEYS[3], old)
    end
  end
end
expire(ttl, KEYS[1], KEYS[2], KEYS[3])
return {seq, previous}
"""
)

#: KEYS s e m; ARGV stream after self token ttl.
#: Returns {status, done, writer, ids, previous, last_seq, entries...}: status 0 unknown,
#: -1 events after ``after`` were evicted (a gap), 1 attached.
ATTACH: Final = (
    _COMMON
    + r"""
if redis.call('EXISTS', KEYS[3]) == 0 then return {0} end
local after = tonumber(ARGV[2])
local last = tonumber(redis.call('HGET', KEYS[1], 'seq') or '0')
if after > last then return {0} end
local evicted = tonumber(redis.call('HGET', KEYS[3], 'ev') or '0')
if evicted > after then return {-1} end
local previous = holder_process(redis.call('HGET', KEYS[3], 'h')) or -1
redis.call('HSET', KEYS[3], 'h', ARGV[3] .. ':' .. ARGV[4])
local meta = redis.call('HMGET', KEYS[3], 'done', 'p', 'ids')
local out = {1, meta[1] or '0', meta[2] or '', meta[3] or '[]', previous, last}
for _, entry in ipairs(redis.call('XRANGE', KEYS[2], '(' .. after .. '-1', '+')) do
  out[#out + 1] = string.match(entry[1], '^(%d+)')
  out[#out + 1] = entry[2][2]
end
expire(tonumber(ARGV[5]), KEYS[1], KEYS[2], KEYS[3])
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

#: KEYS s st; ARGV ttl key_prefix: the session was used: every key of it lives on.
#: Returns 0 when the session is gone.
TOUCH: Final = r"""
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local ttl = tonumber(ARGV[1])
redis.call('PEXPIRE', KEYS[1], ttl)
redis.call('PEXPIRE', KEYS[2], ttl)
redis.call('PEXPIRE', ARGV[2] .. 'e:0', ttl)
redis.call('PEXPIRE', ARGV[2] .. 'm:0', ttl)
for _, stream in ipairs(redis.call('ZRANGE', KEYS[1 + 1], 0, -1)) do
  redis.call('PEXPIRE', ARGV[2] .. 'e:' .. stream, ttl)
  redis.call('PEXPIRE', ARGV[2] .. 'm:' .. stream, ttl)
end
return 1
"""

#: KEYS s st; ARGV key_prefix: every key of the session goes.
END_SESSION: Final = r"""
for _, stream in ipairs(redis.call('ZRANGE', KEYS[2], 0, -1)) do
  redis.call('DEL', ARGV[1] .. 'e:' .. stream, ARGV[1] .. 'm:' .. stream)
end
redis.call('DEL', KEYS[1], KEYS[2], ARGV[1] .. 'e:0', ARGV[1] .. 'm:0')
return 1
"""

#: KEYS lease procs; ARGV value ttl process: renew this process's lease, unless another
#: process holds its number (0). A Redis that lost its data (restarted without
#: persistence) gets the lease back, and a process counter past this number.
LEASE: Final = r"""
local current = redis.call('GET', KEYS[1])
if current and current ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
if tonumber(redis.call('GET', KEYS[2]) or '0') < tonumber(ARGV[3]) then
  redis.call('SET', KEYS[2], ARGV[3])
end
return 1
"""
