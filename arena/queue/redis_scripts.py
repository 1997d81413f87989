"""The Lua scripts of the Redis backend: each runs atomically on the server.

Every key a script touches comes in KEYS (built by :mod:`arena.queue.keys`);
every value in ARGV. A job's stream entry has the fields ``job`` (its JSON) and
``deliveries`` (deliveries that counted before the entry was added), so its
delivery number is ``deliveries`` plus the consumer group's counter.
"""

from __future__ import annotations

from arena.queue.keys import GAMES_FIELD, RATING_FIELD
from arena.ratings.versions import MAX_POOL_VERSIONS
from arena.records import VERSION_JOIN

# The job queue's scripts build their keys from the arena's prefix (their first ARGV but the
# result script's, which gives it later): a claim reads the jobs waiting for each bot named, and a
# job's keys follow from what its hash holds, so they cannot all be named by the caller first. This
# needs a Redis that is not a cluster (a Sentinel's primary is fine), as every script here does:
# one script touches the keys of several tournaments and bots. The names are those of
# arena.queue.keys (tests/queue/test_redis_keys.py checks that they agree).
#
# A job ``<id>`` (a number from ``jobs:seq``: its place in the queue, never reused) is the hash
# ``job:<id>``: ``job`` (its JSON), ``match``, ``tid`` (its tournament), ``bots`` (the bot at each
# seat 0..3, space-separated), ``deliveries`` (the deliveries that counted; a release does not), and
# while a node holds it ``owner`` and ``delivery``; ``jobs:match`` maps a match id to its job, and
# ``jobs:of:<tournament>`` holds the ids of a tournament's jobs (a cancel drops those waiting). It is
# in exactly one of two places: waiting, in ``jobs:ready`` and in ``jobs:ready:<bot>`` of each of its
# bots (sorted sets scored by the id: first come, first served), each bot counted in the hash
# ``jobs:waiting``; or held, in ``jobs:leased`` scored by when its lease runs out (server time, ms).
# Every step that adds waiting jobs (an enqueue, a release, a lease run out) publishes a ``jobs``
# notice naming their bots, in the same step, so that the nodes that can seat them look at once.
LUA_JOBS_PRELUDE = """
local function key(...)
  return P .. ':' .. table.concat({...}, ':')
end
local READY, LEASED, WAITING = key('jobs', 'ready'), key('jobs', 'leased'), key('jobs', 'waiting')
local BY_MATCH = key('jobs', 'match')

local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

local function words(text)
  local t = {}
  for w in string.gmatch(text or '', '%S+') do t[#t + 1] = w end
  return t
end

local function distinct(list)
  local seen, out = {}, {}
  for _, x in ipairs(list) do
    if not seen[x] then seen[x] = true; out[#out + 1] = x end
  end
  return out
end

-- publish a notice (as LUA_NOTICE does): the next number, then the entry, the stream trimmed lazily
local function notice(kept, kind, data)
  local seq = redis.call('INCR', key('notices', 'seq'))
  redis.call('XADD', key('notices'), 'MAXLEN', '~', kept, '*', 'seq', seq, 'kind', kind, 'data', data)
end

-- the bots a 'jobs' notice names: all of them, or '*' when there are too many to name
local function named(bots)
  local list = distinct(bots)
  if #list > 64 then return '*' end
  return table.concat(list, ' ')
end

local function make_ready(id, bots)
  redis.call('ZADD', READY, id, id)
  for _, b in ipairs(distinct(bots)) do
    redis.call('ZADD', key('jobs', 'ready', b), id, id)
    redis.call('HINCRBY', WAITING, b, 1)
  end
end

local function unready(id, bots)
  if redis.call('ZREM', READY, id) == 0 then return end
  for _, b in ipairs(distinct(bots)) do
    redis.call('ZREM', key('jobs', 'ready', b), id)
    if redis.call('HINCRBY', WAITING, b, -1) <= 0 then redis.call('HDEL', WAITING, b) end
  end
end

-- remove a job for good (its result is written, its tournament cancelled, or it is dead-lettered):
-- the jobs of its tournament left after it (-1: it was gone already). Its tournament's last job
-- going reveals the tournament's secret, if the tournament has ended (``ended_at``).
local function drop(id, at, why)
  local j = key('job', id)
  local f = redis.call('HMGET', j, 'tid', 'bots', 'match')
  if not f[1] then return -1 end
  unready(id, words(f[2]))
  redis.call('ZREM', LEASED, id)
  redis.call('DEL', j)
  redis.call('SREM', key('jobs', 'of', f[1]), id)
  if redis.call('HGET', BY_MATCH, f[3]) == tostring(id) then redis.call('HDEL', BY_MATCH, f[3]) end
  local pending = key('pending', f[1])
  local left = redis.call('DECR', pending)
  if left <= 0 then
    redis.call('DEL', pending)
    local t = key('tournament', f[1])
    if redis.call('HEXISTS', t, 'ended_at') == 1 and redis.call('HEXISTS', t, 'revealed_at') == 0 then
      redis.call('HSET', t, 'revealed_at', at, 'revealed_reason', why)
    end
    return 0
  end
  return left
end

-- move a job to the dead letters (``reason``), for good
local function dead_letter(id, reason, deliveries, node, at, why)
  local f = redis.call('HMGET', key('job', id), 'job')
  redis.call('XADD', key('jobs', 'dead'), '*', 'job', f[1] or '', 'deliveries', deliveries,
             'reason', reason, 'node', node)
  drop(id, at, why)
end
"""

# Enqueue jobs, each at the end of the queue; with a marker, only if the marker is new
# (enqueue_once); with a ladder pool, only if its setting stored is still the one given (a ladder's
# batch, not enqueued once its ladder was stopped or changed: enqueue_ladder). One ``jobs`` notice
# names their bots.
# ARGV: 1 prefix, 2 the marker's key ('' for none), 3 notices kept, 4 the ladder pool ('' for none),
#       5 its setting as read, then for each job: its tournament, its match id, its seat bots
#       (space-separated), its JSON
LUA_ENQUEUE = "local P = ARGV[1]\n" + LUA_JOBS_PRELUDE + """
if ARGV[4] ~= '' and redis.call('HGET', key('ladders'), ARGV[4]) ~= ARGV[5] then return 0 end
if ARGV[2] ~= '' then
  if not redis.call('SET', ARGV[2], '1', 'NX') then return 0 end
end
local all = {}
for i = 6, #ARGV, 4 do
  local id = redis.call('INCR', key('jobs', 'seq'))
  redis.call('HSET', key('job', id), 'job', ARGV[i + 3], 'tid', ARGV[i], 'match', ARGV[i + 1],
             'bots', ARGV[i + 2], 'deliveries', 0)
  redis.call('INCR', key('pending', ARGV[i]))
  redis.call('SADD', key('jobs', 'of', ARGV[i]), id)
  redis.call('HSET', BY_MATCH, ARGV[i + 1], id)
  local bots = words(ARGV[i + 2])
  make_ready(id, bots)
  for _, b in ipairs(bots) do all[#all + 1] = b end
end
if #all > 0 then notice(ARGV[3], 'jobs', named(all)) end
return 1
"""

# Claim up to ``count`` jobs for a node, in one step:
# 1. the leases run out (their node died or hung) go back to the queue, each at its place, or to
#    the dead letters once delivered ``max deliveries`` times; a ``jobs`` notice names their bots;
# 2. the jobs to take, first come first served: with mode 'seats', only the jobs whose bots all
#    have free seats here (a bot at two seats needs two), looking at the first ``scan`` jobs
#    waiting for each bot with a free seat; 'absent', the jobs of the bots named (they forfeit:
#    no seat is needed); 'any', any job. A job whose tournament was cancelled, or whose result is
#    written already, is dropped instead of taken.
#    Before any of those, the jobs of the matches named in ARGV[11] (space-separated), if they wait:
#    the node holds their records (it played them, then died before their results were written).
#    With 'seats', at most ARGV[13] of the jobs taken may be of tournaments whose id starts with
#    ARGV[12] (a node's room for version tests; '' caps nothing); the others are taken past them.
# ARGV: 1 prefix, 2 node id, 3 lease (ms), 4 count, 5 max deliveries, 6 notices kept, 7 why a secret
#       is revealed, 8 now (unix s, what the revealed time says), 9 mode, 10 scan, 11 the matches
#       whose records the node holds ('' for none), 12 the capped tournaments' id prefix ('' for
#       none), 13 how many of them, then with 'seats' pairs (bot, free seats), with 'absent' bot names
# Returns {{{id, job JSON, delivery}, ...}, the earliest lease held (ms, server time; -1: none),
#          server time (ms), dead-lettered, dropped, given back (leases run out)}
LUA_CLAIM = "local P = ARGV[1]\n" + LUA_JOBS_PRELUDE + """
local node, lease, count = ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
local max_deliveries, kept, why, at = tonumber(ARGV[5]), ARGV[6], ARGV[7], ARGV[8]
local mode, scan = ARGV[9], tonumber(ARGV[10])
local capped, cap = ARGV[12], tonumber(ARGV[13])
local function is_capped(tid)
  return capped ~= '' and string.sub(tid, 1, #capped) == capped
end
local now = now_ms()
local dead, dropped, back = 0, 0, 0

local back_bots = {}
for _, id in ipairs(redis.call('ZRANGEBYSCORE', LEASED, '-inf', now, 'LIMIT', 0, 100)) do
  local f = redis.call('HMGET', key('job', id), 'bots', 'deliveries', 'owner')
  redis.call('ZREM', LEASED, id)
  if f[1] then
    if tonumber(f[2]) >= max_deliveries then
      dead_letter(id, 'max_deliveries', f[2], f[3] or '', at, why)
      dead = dead + 1
    else
      redis.call('HDEL', key('job', id), 'owner', 'delivery')
      local bots = words(f[1])
      make_ready(id, bots)
      for _, b in ipairs(bots) do back_bots[#back_bots + 1] = b end
      back = back + 1
    end
  end
end
if back > 0 then notice(kept, 'jobs', named(back_bots)) end

local out = {}
local free = {}
local function take(id, fields)
  local j = key('job', id)
  local f = fields or redis.call('HMGET', j, 'job', 'tid', 'match', 'bots', 'deliveries')
  if not f[1] then return false end
  if redis.call('HGET', key('tournament', f[2]), 'state') == 'cancelled'
      or redis.call('EXISTS', key('result', f[3])) == 1 then
    drop(id, at, why)
    dropped = dropped + 1
    return false
  end
  local delivery = tonumber(f[5]) + 1
  if delivery > max_deliveries then
    dead_letter(id, 'max_deliveries', f[5], node, at, why)
    dead = dead + 1
    return false
  end
  unready(id, words(f[4]))
  redis.call('HSET', j, 'owner', node, 'delivery', delivery, 'deliveries', delivery)
  redis.call('ZADD', LEASED, now + lease, id)
  out[#out + 1] = {id, f[1], delivery}
  return true
end

local function by_number(a, b) return tonumber(a) < tonumber(b) end

for _, m in ipairs(words(ARGV[11])) do
  local id = redis.call('HGET', BY_MATCH, m)
  if #out < count and id and redis.call('ZSCORE', READY, id) then take(id) end
end

if count > #out then
  if mode == 'any' then
    repeat
      local ids = redis.call('ZRANGE', READY, 0, count - #out - 1)
      for _, id in ipairs(ids) do take(id) end
    until #out >= count or #ids == 0
  else
    local seen, ids = {}, {}
    if mode == 'seats' then
      for i = 14, #ARGV, 2 do free[ARGV[i]] = tonumber(ARGV[i + 1]) end
    end
    local step = (mode == 'seats') and 2 or 1
    for i = 14, #ARGV, step do
      if mode ~= 'seats' or free[ARGV[i]] > 0 then
        local n = scan
        if mode ~= 'seats' then n = count end
        for _, id in ipairs(redis.call('ZRANGE', key('jobs', 'ready', ARGV[i]), 0, n - 1)) do
          if not seen[id] then seen[id] = true; ids[#ids + 1] = id end
        end
      end
    end
    table.sort(ids, by_number)
    for _, id in ipairs(ids) do
      if #out >= count then break end
      local f = redis.call('HMGET', key('job', id), 'job', 'tid', 'match', 'bots', 'deliveries')
      if f[1] then
        local fits = true
        local need = {}
        if mode == 'seats' then
          for _, b in ipairs(words(f[4])) do need[b] = (need[b] or 0) + 1 end
          for b, n in pairs(need) do
            if (free[b] or 0) < n then fits = false end
          end
          if is_capped(f[2]) and cap <= 0 then fits = false end
        end
        if fits and take(id, f) then
          for b, n in pairs(need) do free[b] = free[b] - n end
          if mode == 'seats' and is_capped(f[2]) then cap = cap - 1 end
        end
      end
    end
  end
end

local first = redis.call('ZRANGE', LEASED, 0, 0, 'WITHSCORES')
local next_expiry = -1
if first[2] then next_expiry = tonumber(first[2]) end
return {out, next_expiry, now, dead, dropped, back}
"""

# Remove a job for good (ack): its result is written. ARGV: 1 prefix, 2 job id, 3 now, 4 why a
# secret is revealed. Returns the jobs of its tournament left (-1: it was gone already).
LUA_DROP = "local P = ARGV[1]\n" + LUA_JOBS_PRELUDE + """
return drop(ARGV[2], ARGV[3], ARGV[4])
"""

# Extend the leases still held: for each claim (job id, node id, delivery) 1 if that node still
# holds that delivery of the job (its lease now runs ``lease`` ms from now), else 0.
# ARGV: 1 prefix, 2 lease (ms), then the claims' triples
LUA_RENEW = "local P = ARGV[1]\n" + LUA_JOBS_PRELUDE + """
local until_ms = now_ms() + tonumber(ARGV[2])
local out = {}
for i = 3, #ARGV, 3 do
  local f = redis.call('HMGET', key('job', ARGV[i]), 'owner', 'delivery')
  if f[1] == ARGV[i + 1] and f[2] == ARGV[i + 2] then
    redis.call('ZADD', LEASED, 'XX', until_ms, ARGV[i])
    out[#out + 1] = 1
  else
    out[#out + 1] = 0
  end
end
return out
"""

# Give a job back unplayed (its bots could not sit here after all, or a draining node): it waits
# again at its place in the queue. A release is not a failed delivery: the job keeps the
# deliveries that counted before this one. ARGV: 1 prefix, 2 notices kept, 3 job id, 4 node id,
# 5 delivery. Returns 1, or 0 if the node no longer held it.
LUA_RELEASE = "local P = ARGV[1]\n" + LUA_JOBS_PRELUDE + """
local j = key('job', ARGV[3])
local f = redis.call('HMGET', j, 'owner', 'delivery', 'bots')
if f[1] ~= ARGV[4] or f[2] ~= ARGV[5] then return 0 end
redis.call('ZREM', LEASED, ARGV[3])
redis.call('HDEL', j, 'owner', 'delivery')
redis.call('HSET', j, 'deliveries', tonumber(ARGV[5]) - 1)
local bots = words(f[3])
make_ready(ARGV[3], bots)
notice(ARGV[2], 'jobs', named(bots))
return 1
"""

# The jobs of the stream an older version queued them in (``<prefix>:jobs``, a consumer group
# ``<prefix>:referees``) move to the queue above, at most ARGV[3] at a time, in their order: the
# waiting ones wait, the ones a node held wait again with the deliveries that counted (their node
# is of the older version: stopped before this one started). Returns how many moved (0: none is
# left, and the stream is gone).
# ARGV: 1 prefix, 2 notices kept, 3 how many at most
LUA_MIGRATE = "local P = ARGV[1]\n" + LUA_JOBS_PRELUDE + """
local stream, group = P .. ':jobs', P .. ':referees'
if redis.call('EXISTS', stream) == 0 then return 0 end
if redis.call('TYPE', stream)['ok'] ~= 'stream' then return 0 end
local times = {}
local ok, pel = pcall(redis.call, 'XPENDING', stream, group, '-', '+', tonumber(ARGV[3]))
if ok then
  for _, p in ipairs(pel) do times[p[1]] = p[4] end
end
local entries = redis.call('XRANGE', stream, '-', '+', 'COUNT', tonumber(ARGV[3]))
if #entries == 0 then
  redis.call('DEL', stream)
  return 0
end
local all = {}
for _, e in ipairs(entries) do
  local fields = {}
  for i = 1, #e[2], 2 do fields[e[2][i]] = e[2][i + 1] end
  local ok2, job = pcall(cjson.decode, fields['job'] or '')
  if ok2 and type(job) == 'table' then
    local bots = {}
    if type(job['seats']) == 'table' then
      bots = job['seats']
    else
      bots = {job['team0'], job['team1'], job['team0'], job['team1']}
    end
    local id = redis.call('INCR', key('jobs', 'seq'))
    redis.call('HSET', key('job', id), 'job', fields['job'], 'tid', job['tournament_id'], 'match',
               job['match_id'], 'bots', table.concat(bots, ' '),
               'deliveries', tonumber(fields['deliveries'] or '0') + (times[e[1]] or 0))
    redis.call('HSET', BY_MATCH, job['match_id'], id)
    redis.call('SADD', key('jobs', 'of', job['tournament_id']), id)
    make_ready(id, bots)
    for _, b in ipairs(bots) do all[#all + 1] = b end
  else
    redis.call('XADD', key('jobs', 'dead'), '*', 'job', fields['job'] or '', 'deliveries', 0,
               'reason', 'unreadable', 'node', '')
  end
  redis.call('XDEL', stream, e[1])
end
if #all > 0 then notice(ARGV[2], 'jobs', named(all)) end
return #entries
"""

# Write a result once and count it in its pools (arena.queue.broker.RatingPlan): each pool's
# Elo, pair counts and history. A mirror duplicate pair's first leg is kept until the second counts
# the pair (arena.ratings.online.duplicate_score, the same rule in Lua); a field duplicate
# quartet's tables are kept until the fourth counts its one or two games
# (arena.ratings.online.quartet_scores, the same rule in Lua).
# With the result, its summary goes at the end of the tournament's log of summaries and at the
# head of each of its bots' lists of recent matches (trimmed): written once, with the result.
# A game of mixed partnerships (sides of two different bots: a and b are side names) counts in
# no pool here: it is appended to each of its pools' to-rate queues, which openskill rates in
# order outside this script (RedisBroker.apply_mixed). One script, one call a result.
# A result whose tournament was cancelled first is refused (returns 2, writes nothing): a cancel
# freezes the tournament's results and moves no pool.
# KEYS: 1 result, 2 results index of the tournament, 3 pools set, 4 leg key or quartet key (any
#       key when neither), 5 the tournament's summaries, 6 7 8 9 the recent matches of the bots at
#       seats 0..3 (one bot a side: team 0's, team 1's, team 0's, team 1's; a key repeated is
#       pushed once), then for each counted pool i = 1..n: 7+3i its Elo hash, 8+3i its pairs hash,
#       9+3i its history hash, then from 10+3n each mixed pool's to-rate queue, and last
#       (KEYS[#KEYS]) the tournament's hash
# ARGV: 1 result JSON, 2 match id, 3 K, 4 initial rating, 5 history every, 6 history kept,
#       7 bot (or side) a, 8 bot (or side) b, 9 the pair's field (a quartet: the table 0..3),
#       10 '1' if a is the pair's first bot (a quartet: '2' if R vs S is scored, else '1'),
#       11 'game', 'leg' or 'quartet', 12 a's score (game), the leg's text (leg) or the table's
#       part (quartet: arena.ratings.online.Part.to_text), 13 the summary's JSON, 14 the recent
#       matches kept per bot, 15 the quartet's id ('' if none), 16 the arena's key prefix, 17 the
#       job to remove with it ('' for none: LUA_WRITE_RESULT below), 18 why a secret is revealed, 19
#       now (unix s), 20 21 the players of a and b (a single game's: arena.ratings.versions; a leg's
#       and a table's are in its text), 22 the bots' history (JSON: ``kept``, the entries kept a bot,
#       and ``bots``, each ``bot``, ``entry`` (its JSON without the closing brace), ``stats`` and
#       ``h2h``: arena.tournament.botstats.BotGame; ``pending``, the key of its duplicate group's
#       counters held ('' for none), and ``counters``, the bots' counters as that list holds them),
#       23.. the counted pools' names (n = #ARGV - 22; none for a mixed game)
# Each bot's history entry goes at the head of ``bhist:<bot>`` (trimmed to ``kept``), with the
# rating change this write made in each pool appended (``"rating_change":{pool: change}``: empty
# for a duplicate leg or table whose game waits for the others, and for a mixed game), and its
# counters are added to ``bstats:<bot>`` (its head-to-head's under ``vs ``; read and written whole:
# one HMGET, one HSET):
# a written result is in them once, whichever path of the script it took; a duplicate leg's or
# table's are held in its
# group's list until the group's last table, which adds them all (no statistic moves while a
# table of it is sealed).
# A side whose player is one of its bot's versions (not its name) counts the game in the pool's
# version tables too (arena.ratings.versions.add_game, the same rule in Lua): ``vgames:<pool>:<player>``
# (opponent player -> "wins draws losses" from its side) and ``vorder:<pool>`` (bot -> its versions in
# the order they first played, space-separated); past MAX_POOL_VERSIONS the oldest is folded into the
# bot's name. Those keys are built from the prefix (the pools' names and the players come in ARGV).
_WRITE_RESULT_BODY = f"""
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
if redis.call('HGET', KEYS[#KEYS], 'state') == 'cancelled' then return 2 end
redis.call('SET', KEYS[1], ARGV[1])
redis.call('SADD', KEYS[2], ARGV[2])
redis.call('RPUSH', KEYS[5], ARGV[13])
local kept = tonumber(ARGV[14])
for i = 6, 9 do
  local first = true
  for j = 6, i - 1 do
    if KEYS[j] == KEYS[i] then first = false end
  end
  if first then
    redis.call('LPUSH', KEYS[i], ARGV[13])
    redis.call('LTRIM', KEYS[i], 0, kept - 1)
  end
end

local history = cjson.decode(ARGV[22])
-- counters added to a hash: one HMGET and one HSET, whatever their number (a HINCRBY each cost
-- twice the rest of the result's script); whole numbers, exact below 2^53
local function add_all(hash, t)
  local fields = {{}}
  for f, _ in pairs(t) do fields[#fields + 1] = f end
  if #fields == 0 then return end
  local old = redis.call('HMGET', hash, unpack(fields))
  local args = {{}}
  for i, f in ipairs(fields) do
    args[#args + 1] = f
    args[#args + 1] = string.format('%.0f', (tonumber(old[i]) or 0) + t[f])
  end
  redis.call('HSET', hash, unpack(args))
end
-- one hash a bot: its counters, and its head-to-head's under ``vs `` (``vs beta w``)
local function count(g)
  local t = {{}}
  for f, v in pairs(g['stats']) do t[f] = v end
  for f, v in pairs(g['h2h']) do t['vs ' .. f] = v end
  add_all(key('bstats', g['bot']), t)
end
-- the entries, then the counters: at once, or a duplicate group's held until its last table
-- (waiting: not this one), which counts the group's all
local function keep_history(moved, waiting)
  for _, g in ipairs(history['bots']) do
    local change = '{{}}'
    if moved[g['bot']] then change = cjson.encode(moved[g['bot']]) end
    local h = key('bhist', g['bot'])
    redis.call('LPUSH', h, g['entry'] .. ',"rating_change":' .. change .. '}}')
    redis.call('LTRIM', h, 0, tonumber(history['kept']) - 1)
  end
  local held = history['pending']
  if held ~= '' and waiting then
    redis.call('RPUSH', held, history['counters'])
    return
  end
  if held ~= '' then
    for _, text in ipairs(redis.call('LRANGE', held, 0, -1)) do
      for _, g in ipairs(cjson.decode(text)) do count(g) end
    end
    redis.call('DEL', held)
  end
  for _, g in ipairs(history['bots']) do count(g) end
end

local function leg(text)
  local t = {{}}
  for w in string.gmatch(text, '%S+') do t[#t + 1] = tonumber(w) end
  return t
end

-- byte order, as Python compares names (Lua's own < follows the server's locale)
local function before(x, y)
  for i = 1, math.min(#x, #y) do
    local p, q = string.byte(x, i), string.byte(y, i)
    if p ~= q then return p < q end
  end
  return #x < #y
end

-- a game: {{a, b, the pair's field (json.dumps([first, second]) as Python writes it), '1' if a is
-- first, a's score, its id, a's player, b's player}}
local function game(a, b, score, id, pa, pb)
  local first, second, a_first = a, b, '1'
  if before(b, a) then first, second, a_first = b, a, '0' end
  return {{a, b, '[' .. cjson.encode(first) .. ', ' .. cjson.encode(second) .. ']', a_first, score, id,
          pa, pb}}
end

-- the player a side's two parts agree on (arena.ratings.online.duplicate_players and quartet_players),
-- else its name
local function agreed(x, y, name)
  if x and x ~= '' and x == y then return x end
  return name
end

local games = {{}}
if ARGV[11] == 'quartet' then
  redis.call('HSET', KEYS[4], ARGV[9], ARGV[12])
  if redis.call('HLEN', KEYS[4]) < 4 then
    keep_history({{}}, true)
    return 1
  end
  local t = {{}}
  local stored = redis.call('HGETALL', KEYS[4])
  for i = 1, #stored, 2 do t[tonumber(stored[i]) + 1] = cjson.decode(stored[i + 1]) end
  redis.call('DEL', KEYS[4])
  local forfeit = false
  for i = 1, 4 do
    if t[i][6] == 1 then forfeit = true end
  end
  -- where each side sat, P Q R S: {{table (from 1), team}} twice
  -- (arena.ratings.online.QUARTET_ROLES)
  local roles = {{{{{{1, 0}}, {{3, 0}}}}, {{{{2, 0}}, {{4, 0}}}},
                 {{{{1, 1}}, {{4, 1}}}}, {{{{2, 1}}, {{3, 1}}}}}}
  local function side(r)
    local v = 0
    for _, seat in ipairs(roles[r]) do
      local p, team = t[seat[1]], seat[2]
      if forfeit then
        if team == 0 then v = v + p[5] else v = v + 1 - p[5] end
      elseif team == 0 then
        v = v + p[3] - p[4]
      else
        v = v + p[4] - p[3]
      end
    end
    local one, two = roles[r][1], roles[r][2]
    local name = t[one[1]][one[2] + 1]
    return name, v, agreed(t[one[1]][one[2] + 7], t[two[1]][two[2] + 7], name)
  end
  local compared = {{{{1, 2, 'PQ'}}}}
  if ARGV[10] == '2' then compared[2] = {{3, 4, 'RS'}} end
  for _, xy in ipairs(compared) do
    local a, va, pa = side(xy[1])
    local b, vb, pb = side(xy[2])
    local s = 0.5
    if va > vb then s = 1 elseif va < vb then s = 0 end
    games[#games + 1] = game(a, b, s, ARGV[15] .. '/' .. xy[3], pa, pb)
  end
elseif ARGV[11] == 'leg' then
  local other = redis.call('GET', KEYS[4])
  if not other then
    redis.call('SET', KEYS[4], ARGV[12])
    keep_history({{}}, true)
    return 1
  end
  redis.call('DEL', KEYS[4])
  local p, q = leg(other), leg(ARGV[12])
  local score
  if p[4] == 1 or q[4] == 1 then
    local mean = (p[3] + q[3]) / 2
    if mean > 0.5 then score = 1 elseif mean < 0.5 then score = 0 else score = 0.5 end
  else
    local d = p[1] + q[1] - p[2] - q[2]
    if d > 0 then score = 1 elseif d < 0 then score = 0 else score = 0.5 end
  end
  -- the players, A's and B's, after the leg's four numbers (none in a leg kept before versions were)
  local wp, wq = words(other), words(ARGV[12])
  games[1] = {{ARGV[7], ARGV[8], ARGV[9], ARGV[10], score, ARGV[2], agreed(wp[5], wq[5], ARGV[7]),
              agreed(wp[6], wq[6], ARGV[8])}}
else
  games[1] = {{ARGV[7], ARGV[8], ARGV[9], ARGV[10], tonumber(ARGV[12]), ARGV[2], ARGV[20], ARGV[21]}}
end

local k, init = tonumber(ARGV[3]), tonumber(ARGV[4])
local every, kept = tonumber(ARGV[5]), tonumber(ARGV[6])

local function point(hist, bot, games, rating)
  if games % every ~= 0 then return end
  local p = string.format('%d %.17g', games, rating)
  local s = redis.call('HGET', hist, bot)
  if s then
    if games / every > kept then
      local cut = string.find(s, ';', 1, true)
      if cut then s = string.sub(s, cut + 1) .. ';' .. p else s = p end
    else
      s = s .. ';' .. p
    end
  else
    s = p
  end
  redis.call('HSET', hist, bot, s)
end

local function rate(elo, hist, bot, rating)
  redis.call('HSET', elo, '{RATING_FIELD}' .. bot, string.format('%.17g', rating))
  point(hist, bot, redis.call('HINCRBY', elo, '{GAMES_FIELD}' .. bot, 1), rating)
end

local function add(t, field, w, d, l)
  local c = leg(redis.call('HGET', t, field) or '0 0 0')
  redis.call('HSET', t, field, string.format('%d %d %d', c[1] + w, c[2] + d, c[3] + l))
end

-- the oldest version of a bot leaves the pool's version tables: its games are its name's (the bot's
-- pair counts hold them), and its versioned opponents' rows against it become rows against the name
local function fold(pool, bot, oldest)
  local gone = bot .. '{VERSION_JOIN}' .. oldest
  local mine = key('vgames', pool, gone)
  local rows = redis.call('HGETALL', mine)
  for i = 1, #rows, 2 do
    local theirs = key('vgames', pool, rows[i])
    local text = redis.call('HGET', theirs, gone)
    if text then
      redis.call('HDEL', theirs, gone)
      local c = leg(text)
      add(theirs, bot, c[1], c[2], c[3])
    end
  end
  redis.call('DEL', mine)
end

-- one game of player ``me`` (a version of ``bot``) against player ``other``, scored ``s`` by ``me``
local function versioned(pool, bot, me, other, s)
  local w, d, l = 0, 0, 0
  if s > 0.5 then w = 1 elseif s < 0.5 then l = 1 else d = 1 end
  add(key('vgames', pool, me), other, w, d, l)
  local version = string.sub(me, #bot + {len(VERSION_JOIN) + 1})
  local order = key('vorder', pool)
  local known = words(redis.call('HGET', order, bot))
  for _, v in ipairs(known) do
    if v == version then return end
  end
  known[#known + 1] = version
  if #known > {MAX_POOL_VERSIONS} then fold(pool, bot, table.remove(known, 1)) end
  redis.call('HSET', order, bot, table.concat(known, ' '))
end

local moved = {{}}
local function move(bot, pool, d)
  if not moved[bot] then moved[bot] = {{}} end
  moved[bot][pool] = (moved[bot][pool] or 0) + d
end

local counted = #ARGV - 22
for i = 1, counted do
  local elo, pairs, hist = KEYS[7 + 3 * i], KEYS[8 + 3 * i], KEYS[9 + 3 * i]
  local pool = ARGV[22 + i]
  redis.call('SADD', KEYS[3], pool)
  for _, g in ipairs(games) do
    local a, b, score = g[1], g[2], g[5]
    local ra = tonumber(redis.call('HGET', elo, '{RATING_FIELD}' .. a) or init)
    local rb = tonumber(redis.call('HGET', elo, '{RATING_FIELD}' .. b) or init)
    if a ~= b then
      local e = 1 / (1 + 10 ^ ((rb - ra) / 400))
      local d = k * (score - e)
      ra, rb = ra + d, rb - d
      move(a, pool, d)
      move(b, pool, -d)
      rate(elo, hist, b, rb)
      local s = score
      if g[4] ~= '1' then s = 1 - s end
      local c = leg(redis.call('HGET', pairs, g[3]) or '0 0 0')
      if s > 0.5 then c[1] = c[1] + 1 elseif s < 0.5 then c[3] = c[3] + 1 else c[2] = c[2] + 1 end
      redis.call('HSET', pairs, g[3], string.format('%d %d %d', c[1], c[2], c[3]))
      if g[7] and g[7] ~= a then versioned(pool, a, g[7], g[8] or b, score) end
      if g[8] and g[8] ~= b then versioned(pool, b, g[8], g[7] or a, 1 - score) end
    end
    if a == b then move(a, pool, 0) end
    rate(elo, hist, a, ra)
  end
end

-- mixed partnerships: the keys after the counted pools' are their to-rate queues (openskill
-- rates them in order outside this script: RedisBroker.apply_mixed)
for j = 10 + 3 * counted, #KEYS - 1 do
  for _, g in ipairs(games) do
    redis.call('RPUSH', KEYS[j], string.format('%s %s %s %s', g[6], g[1], g[2], tostring(g[5])))
  end
end
keep_history(moved, false)
return 1
"""

# The result script: the write above, and then (ARGV[17] names a job) the job's removal, in the
# same step: a result written is never left with its job queued, nor its job gone without it. The
# job goes whatever the write said (written, written before, or refused for its tournament was
# cancelled). Returns {what the write said (0, 1 or 2), the jobs of the tournament left (-1: the
# job was gone already or none was named)}.
LUA_WRITE_RESULT = (
    "local P = ARGV[16]\n" + LUA_JOBS_PRELUDE
    + "local function write_result()\n" + _WRITE_RESULT_BODY + "\nend\n"
    + """
local written = write_result()
local left = -1
if ARGV[17] ~= '' then left = drop(ARGV[17], ARGV[19], ARGV[18]) end
return {written, left}
"""
)

# Summaries of results written by an older version, which kept none: appended to the
# tournament's log only if it still has the length the caller saw (else 0: read and try again),
# and to the tail of each bot's recent matches (as older than what it holds) while it is short.
# KEYS: 1 the tournament's summaries, then per summary (ARGV[i], i >= 3) the recent matches of
#       the bots at its seats 0..3: KEYS[4i - 10] .. KEYS[4i - 7] (a key repeated: added once)
# ARGV: 1 the log's length seen, 2 the recent matches kept per bot, 3.. the summaries' JSON
LUA_ADD_SUMMARIES = """
if redis.call('LLEN', KEYS[1]) ~= tonumber(ARGV[1]) then return 0 end
local kept = tonumber(ARGV[2])
for i = 3, #ARGV do
  redis.call('RPUSH', KEYS[1], ARGV[i])
  local base = 4 * i - 10
  for s = base, base + 3 do
    local first = true
    for t = base, s - 1 do
      if KEYS[t] == KEYS[s] then first = false end
    end
    if first and redis.call('LLEN', KEYS[s]) < kept then redis.call('RPUSH', KEYS[s], ARGV[i]) end
  end
end
return 1
"""

# A tournament made only in the arena's data: -1 when the data's mark is not the one the node started
# on (a Redis restarted empty), so that a create refused for the data loss stores nothing there.
# KEYS: tournament hash, tournaments list, the data's mark.  ARGV: spec JSON, tournament id, the mark
LUA_PUT_TOURNAMENT = """
if redis.call('GET', KEYS[3]) ~= ARGV[3] then return -1 end
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'spec', ARGV[1], 'state', 'created')
redis.call('RPUSH', KEYS[2], ARGV[2])
return 1
"""

# Forget an ended tournament whole (a version test past those the arena keeps: arena.node.versions):
# its hash and its place in the list, its results and their summaries, its mirror pairs' first legs
# left waiting, its own pool's ratings, counts and history. Only once it ended and none of its jobs is
# left, queued or held (no match of it can still be written).
# ARGV: 1 prefix, 2 tournament id, 3 its own pool. Returns 1 if forgotten, 0 if not (none, open, jobs).
LUA_FORGET_TOURNAMENT = "local P = ARGV[1]\n" + LUA_JOBS_PRELUDE + """
local tid, pool = ARGV[2], ARGV[3]
local t = key('tournament', tid)
local state = redis.call('HGET', t, 'state')
if not state or state == 'created' or state == 'running' then return 0 end
if tonumber(redis.call('GET', key('pending', tid)) or '0') > 0 then return 0 end
if redis.call('SCARD', key('jobs', 'of', tid)) > 0 then return 0 end
for _, m in ipairs(redis.call('SMEMBERS', key('results', tid))) do
  redis.call('DEL', key('result', m))
  local pair = string.match(m, '^(.*)%-leg[01]$')
  if pair then redis.call('DEL', key('leg', pair), key('bpend', 'pair/' .. pair)) end
  local quartet = string.match(m, '^(.*)%-[tf][0-3]$')
  if quartet then redis.call('DEL', key('bpend', 'quartet/' .. quartet)) end
end
redis.call('DEL', t, key('results', tid), key('summaries', tid), key('pending', tid), key('jobs', 'of', tid))
redis.call('LREM', key('tournaments'), 0, tid)
redis.call('SREM', key('pools'), pool)
redis.call('DEL', key('elo', pool), key('pairs', pool), key('history', pool), key('mixed', 'queue', pool),
           key('mixed', pool))
return 1
"""

# KEYS: schedule hash, schedules set.  ARGV: schedule JSON, schedule id
LUA_PUT_SCHEDULE = """
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'spec', ARGV[1], 'last', '0')
redis.call('SADD', KEYS[2], ARGV[2])
return 1
"""

# KEYS: schedule hash, schedules set.  ARGV: schedule id
LUA_DELETE_SCHEDULE = """
redis.call('SREM', KEYS[2], ARGV[1])
return redis.call('DEL', KEYS[1])
"""

# One occurrence of a schedule, made once whoever asks (arena.tournament.schedule): the schedule is
# the one the caller read, its last occurrence is earlier, the tournament's id is free.
# KEYS: schedule hash, tournament hash, tournaments list.
# ARGV: the schedule's JSON as read, the occurrence (unix seconds), the tournament's spec JSON, its id
LUA_ADD_OCCURRENCE = """
local stored = redis.call('HMGET', KEYS[1], 'spec', 'last')
if stored[1] ~= ARGV[1] then return 0 end
if tonumber(stored[2] or '0') >= tonumber(ARGV[2]) then return 0 end
redis.call('HSET', KEYS[1], 'last', ARGV[2])
if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
redis.call('HSET', KEYS[2], 'spec', ARGV[3], 'state', 'created')
redis.call('RPUSH', KEYS[3], ARGV[4])
return 1
"""

# Moving from an open state to an ended one keeps when and why (``ended_at``, ``ended_reason``);
# a cancel drops the tournament's waiting jobs there and then (those held are stopped by their nodes,
# which drop them); and the secret is revealed at once (``revealed_at``, ``revealed_reason``) if none
# of its jobs is left, else the drop of its last job does (LUA_DROP).
# KEYS: tournament hash, its pending counter.  ARGV: new state, expected state or '', now, why it
# ended, why its secret is revealed at once, the arena's prefix, the tournament's id
LUA_SET_STATE = "local P = ARGV[6]\n" + LUA_JOBS_PRELUDE + """
local cur = redis.call('HGET', KEYS[1], 'state')
if not cur then return 0 end
if ARGV[2] ~= '' and cur ~= ARGV[2] then return 0 end
redis.call('HSET', KEYS[1], 'state', ARGV[1])
local open = {created = true, running = true}
if open[cur] and not open[ARGV[1]] then
  redis.call('HSET', KEYS[1], 'ended_at', ARGV[3], 'ended_reason', ARGV[4])
  if ARGV[1] == 'cancelled' then
    for _, id in ipairs(redis.call('SMEMBERS', key('jobs', 'of', ARGV[7]))) do
      if redis.call('ZSCORE', READY, id) then drop(id, ARGV[3], ARGV[5]) end
    end
  end
  local left = tonumber(redis.call('GET', KEYS[2]) or '0')
  if left <= 0 and redis.call('HEXISTS', KEYS[1], 'revealed_at') == 0 then
    redis.call('HSET', KEYS[1], 'revealed_at', ARGV[3], 'revealed_reason', ARGV[5])
  end
end
return 1
"""


# Publishing a notice, for the scripts below: the next number, then the entry, the stream trimmed
# lazily to about ARGV[1] entries. KEYS[1]: the notices stream, KEYS[2]: its number.
LUA_NOTICE_PRELUDE = """
local function notice(kind, data)
  local seq = redis.call('INCR', KEYS[2])
  redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], '*', 'seq', seq, 'kind', kind, 'data', data)
  return seq
end
"""

# KEYS: notices stream, notice number.  ARGV: how many to keep, kind, data
LUA_NOTICE = LUA_NOTICE_PRELUDE + """
return notice(ARGV[2], ARGV[3])
"""

# KEYS: notices stream, notice number, bots hash.  ARGV: how many to keep, notice kind, name, entry JSON
LUA_ADD_BOT = LUA_NOTICE_PRELUDE + """
if redis.call('HSETNX', KEYS[3], ARGV[3], ARGV[4]) == 0 then return 0 end
notice(ARGV[2], ARGV[3])
return 1
"""

# KEYS: notices stream, notice number, bots hash.
# ARGV: how many to keep, notice kind, name, entry JSON, '1' to compare first, the entry expected
LUA_REPLACE_BOT = LUA_NOTICE_PRELUDE + """
if ARGV[5] == '1' and redis.call('HGET', KEYS[3], ARGV[3]) ~= ARGV[6] then return 0 end
redis.call('HSET', KEYS[3], ARGV[3], ARGV[4])
notice(ARGV[2], ARGV[3])
return 1
"""

# A bot asking to join a pool's ladder (its Hello's flag): in, unless an admin took it out.
# KEYS: the pool's ladder bots, the pool's bots removed by an admin.  ARGV: the bot
LUA_LADDER_JOIN = """
if redis.call('SISMEMBER', KEYS[2], ARGV[1]) == 1 then return 0 end
return redis.call('SADD', KEYS[1], ARGV[1])
"""

# A bot's ladder conduct swapped if it is what the caller read: KEYS[1] the conduct hash; ARGV the bot,
# the new text ("": forget it), the text expected ("": none stored). 1 if swapped.
LUA_SWAP_CONDUCT = """
local current = redis.call('HGET', KEYS[1], ARGV[1]) or ''
if current ~= ARGV[3] then return 0 end
if ARGV[2] == '' then redis.call('HDEL', KEYS[1], ARGV[1])
else redis.call('HSET', KEYS[1], ARGV[1], ARGV[2]) end
return 1
"""


# A pool's Bradley-Terry history point: kept only if the pool's last one was taken at least ARGV[3]
# games before ARGV[2] (or there was none), so that nodes fitting the pool at once keep one.
# KEYS: 1 the marks hash (pool -> its games at the last point), 2 the pool's history hash (bot ->
#       "games bot_games rating low high;..." oldest first)
# ARGV: 1 the pool, 2 its games now, 3 the games between two points, 4 the points kept a bot, then
#       per bot: its name and its point's text ("games bot_games rating low high")
LUA_NOTE_BT = """
local last = tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '-1')
local games = tonumber(ARGV[2])
if last >= 0 and games - last < tonumber(ARGV[3]) then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
local kept = tonumber(ARGV[4])
for i = 5, #ARGV, 2 do
  local s = redis.call('HGET', KEYS[2], ARGV[i])
  if s then s = s .. ';' .. ARGV[i + 1] else s = ARGV[i + 1] end
  local n = select(2, string.gsub(s, ';', ';')) + 1
  while n > kept do
    s = string.sub(s, string.find(s, ';', 1, true) + 1)
    n = n - 1
  end
  redis.call('HSET', KEYS[2], ARGV[i], s)
end
return 1
"""
