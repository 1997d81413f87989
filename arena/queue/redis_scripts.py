"""The Lua scripts of the Redis backend: each runs atomically on the server.

Every key a script touches comes in KEYS (built by :mod:`arena.queue.keys`);
every value in ARGV. A job's stream entry has the fields ``job`` (its JSON) and
``deliveries`` (deliveries that counted before the entry was added), so its
delivery number is ``deliveries`` plus the consumer group's counter.
"""

from __future__ import annotations

from arena.queue.keys import GAMES_FIELD, RATING_FIELD

# Lua helpers shared by the scripts below. A stream entry's fields come as a flat
# array; ``owned`` is true when ``consumer`` holds entry ``id`` at delivery ``delivery``.
LUA_PRELUDE = """
local function field(fields, name)
  for i = 1, #fields, 2 do
    if fields[i] == name then return fields[i + 1] end
  end
  return nil
end

local function owned(stream, group, consumer, id, delivery)
  local p = redis.pcall('XPENDING', stream, group, id, id, 1)
  if p.err or not p[1] or p[1][2] ~= consumer then return nil end
  local e = redis.call('XRANGE', stream, id, id)
  if not e[1] then return nil end
  local base = tonumber(field(e[1][2], 'deliveries') or '0')
  if base + p[1][4] ~= tonumber(delivery) then return nil end
  return e[1][2]
end
"""

# KEYS: jobs stream, enqueue marker, then one pending counter per job
# ARGV: '1' to enqueue only if the marker is new, then the jobs' JSON
LUA_ENQUEUE = """
if ARGV[1] == '1' then
  if not redis.call('SET', KEYS[2], '1', 'NX') then return 0 end
end
for i = 2, #ARGV do
  redis.call('XADD', KEYS[1], '*', 'job', ARGV[i], 'deliveries', '0')
  redis.call('INCR', KEYS[i + 1])
end
return 1
"""

# KEYS: jobs stream.  ARGV: group, consumer, min idle (ms), start id, how many
# Returns {next start id, {{id, fields, times delivered by the group}, ...}}
LUA_RECLAIM = """
local need = tonumber(ARGV[5])
local start = ARGV[4]
local out = {}
repeat
  local r = redis.call('XAUTOCLAIM', KEYS[1], ARGV[1], ARGV[2], ARGV[3], start, 'COUNT', need)
  start = r[1]
  for _, e in ipairs(r[2]) do
    if type(e) == 'table' and type(e[2]) == 'table' then
      local p = redis.call('XPENDING', KEYS[1], ARGV[1], e[1], e[1], 1)
      local times = 1
      if p[1] then times = p[1][4] end
      out[#out + 1] = {e[1], e[2], times}
      need = need - 1
    end
  end
until start == '0-0' or need <= 0
return {start, out}
"""

# Ack (and drop) one entry; with a reason, also add it to the dead-letter stream. The last job of
# a tournament that has ended (its hash has ``ended_at``) going reveals its secret, in this step.
# KEYS: jobs stream, the job's pending counter, dead-letter stream, the job's tournament hash
# ARGV: group, entry id, reason or '', job JSON, deliveries, node id, now, why the secret is revealed
LUA_DROP = """
redis.pcall('XACK', KEYS[1], ARGV[1], ARGV[2])
if redis.call('XDEL', KEYS[1], ARGV[2]) == 0 then return 0 end
if redis.call('DECR', KEYS[2]) <= 0 then
  redis.call('DEL', KEYS[2])
  local ended = redis.call('HEXISTS', KEYS[4], 'ended_at') == 1
  if ended and redis.call('HEXISTS', KEYS[4], 'revealed_at') == 0 then
    redis.call('HSET', KEYS[4], 'revealed_at', ARGV[7], 'revealed_reason', ARGV[8])
  end
end
if ARGV[3] ~= '' then
  redis.call('XADD', KEYS[3], '*', 'job', ARGV[4], 'deliveries', ARGV[5], 'reason', ARGV[3], 'node', ARGV[6])
end
return 1
"""

# KEYS: jobs stream.  ARGV: group, consumer, entry id, delivery
LUA_RENEW = (
    LUA_PRELUDE
    + """
if not owned(KEYS[1], ARGV[1], ARGV[2], ARGV[3], ARGV[4]) then return 0 end
redis.call('XCLAIM', KEYS[1], ARGV[1], ARGV[2], 0, ARGV[3], 'JUSTID')
return 1
"""
)

# Give the entry back unplayed: ack, delete, add again at the end of the stream.
# A release is not a failed delivery: the entry is added with the deliveries that
# counted before this one, so the next claim gets the same delivery number.
# KEYS: jobs stream.  ARGV: group, consumer, entry id, delivery
LUA_RELEASE = (
    LUA_PRELUDE
    + """
local fields = owned(KEYS[1], ARGV[1], ARGV[2], ARGV[3], ARGV[4])
if not fields then return 0 end
redis.call('XACK', KEYS[1], ARGV[1], ARGV[3])
redis.call('XDEL', KEYS[1], ARGV[3])
redis.call('XADD', KEYS[1], '*', 'job', field(fields, 'job'), 'deliveries', tonumber(ARGV[4]) - 1)
return 1
"""
)

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
#       matches kept per bot, 15 the quartet's id ('' if none), 16.. the counted pools' names
#       (n = #ARGV - 15; none for a mixed game)
LUA_WRITE_RESULT = f"""
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
-- first, a's score, its id}}
local function game(a, b, score, id)
  local first, second, a_first = a, b, '1'
  if before(b, a) then first, second, a_first = b, a, '0' end
  return {{a, b, '[' .. cjson.encode(first) .. ', ' .. cjson.encode(second) .. ']', a_first, score, id}}
end

local games = {{}}
if ARGV[11] == 'quartet' then
  redis.call('HSET', KEYS[4], ARGV[9], ARGV[12])
  if redis.call('HLEN', KEYS[4]) < 4 then return 1 end
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
    return t[roles[r][1][1]][roles[r][1][2] + 1], v
  end
  local compared = {{{{1, 2, 'PQ'}}}}
  if ARGV[10] == '2' then compared[2] = {{3, 4, 'RS'}} end
  for _, xy in ipairs(compared) do
    local a, va = side(xy[1])
    local b, vb = side(xy[2])
    local s = 0.5
    if va > vb then s = 1 elseif va < vb then s = 0 end
    games[#games + 1] = game(a, b, s, ARGV[15] .. '/' .. xy[3])
  end
elseif ARGV[11] == 'leg' then
  local other = redis.call('GET', KEYS[4])
  if not other then
    redis.call('SET', KEYS[4], ARGV[12])
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
  games[1] = {{ARGV[7], ARGV[8], ARGV[9], ARGV[10], score, ARGV[2]}}
else
  games[1] = {{ARGV[7], ARGV[8], ARGV[9], ARGV[10], tonumber(ARGV[12]), ARGV[2]}}
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

local counted = #ARGV - 15
for i = 1, counted do
  local elo, pairs, hist = KEYS[7 + 3 * i], KEYS[8 + 3 * i], KEYS[9 + 3 * i]
  redis.call('SADD', KEYS[3], ARGV[15 + i])
  for _, g in ipairs(games) do
    local a, b, score = g[1], g[2], g[5]
    local ra = tonumber(redis.call('HGET', elo, '{RATING_FIELD}' .. a) or init)
    local rb = tonumber(redis.call('HGET', elo, '{RATING_FIELD}' .. b) or init)
    if a ~= b then
      local e = 1 / (1 + 10 ^ ((rb - ra) / 400))
      local d = k * (score - e)
      ra, rb = ra + d, rb - d
      rate(elo, hist, b, rb)
      local s = score
      if g[4] ~= '1' then s = 1 - s end
      local c = leg(redis.call('HGET', pairs, g[3]) or '0 0 0')
      if s > 0.5 then c[1] = c[1] + 1 elseif s < 0.5 then c[3] = c[3] + 1 else c[2] = c[2] + 1 end
      redis.call('HSET', pairs, g[3], string.format('%d %d %d', c[1], c[2], c[3]))
    end
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
return 1
"""

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

# KEYS: tournament hash, tournaments list.  ARGV: spec JSON, tournament id
LUA_PUT_TOURNAMENT = """
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'spec', ARGV[1], 'state', 'created')
redis.call('RPUSH', KEYS[2], ARGV[2])
return 1
"""

# Moving from an open state to an ended one keeps when and why (``ended_at``, ``ended_reason``),
# and reveals the secret at once (``revealed_at``, ``revealed_reason``) if none of its jobs is left;
# else the drop of its last job does (LUA_DROP).
# KEYS: tournament hash, its pending counter.  ARGV: new state, expected state or '', now, why it
# ended, why its secret is revealed at once
LUA_SET_STATE = """
local cur = redis.call('HGET', KEYS[1], 'state')
if not cur then return 0 end
if ARGV[2] ~= '' and cur ~= ARGV[2] then return 0 end
redis.call('HSET', KEYS[1], 'state', ARGV[1])
local open = {created = true, running = true}
if open[cur] and not open[ARGV[1]] then
  redis.call('HSET', KEYS[1], 'ended_at', ARGV[3], 'ended_reason', ARGV[4])
  if tonumber(redis.call('GET', KEYS[2]) or '0') <= 0 then
    redis.call('HSET', KEYS[1], 'revealed_at', ARGV[3], 'revealed_reason', ARGV[5])
  end
end
return 1
"""
