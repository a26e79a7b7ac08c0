-- Atomic commit of one change to a room (server/store/redis.py, RedisStore.commit).
-- KEYS[1] room:{id}:state     hash: v (version), data (room record JSON)
-- KEYS[2] room:{id}:actions   hash: "<seat>:<action id>" -> "<version>|<digest>|<game>"
-- KEYS[3] room:{id}:log       stream: one entry per accepted change, id "<version>-0"
-- KEYS[4] room:{id}:presence  hash (only its expiry is refreshed here)
-- KEYS[5] room:{id}:deadlines zset: "<kind>|<key>" -> due time (or lease end once claimed)
-- KEYS[6] room:{id}:deadline_data hash: "<kind>|<key>" -> deadline JSON
-- KEYS[7] deadline index: room id -> its earliest deadline
-- KEYS[8] room:{id}:outbox    hash: game number -> the log entries of that ended game, kept
--                             until the archive takes them: JSON [v1, entry1, v2, entry2...]
-- ARGV[1] expected version    ARGV[2] new record JSON     ARGV[3] action key or ""
-- ARGV[4] log entry JSON      ARGV[5] message head (JSON object text up to `"room":`)
-- ARGV[6] channel             ARGV[7] ttl seconds         ARGV[8] log max length
-- ARGV[9] room id             ARGV[10] deadline changes JSON {"set": [[slot, due, json]...],
--                                      "clear": [slot...]}, or "" for none
-- ARGV[11] action digest     ARGV[12] the game the action is applied in
-- ARGV[13] "1" if a key recorded in the previous game also counts as done (a rematch)
-- ARGV[14] the game number this change ends (its log is copied to the outbox), or ""
-- ARGV[15] the version that started that game
-- Returns {status, version, digest}: 0 ok, 1 conflict, 2 duplicate, 3 missing.
local cur = redis.call('HGET', KEYS[1], 'v')
if not cur then return {3, -1, ''} end
cur = tonumber(cur)
if ARGV[3] ~= '' then
  local done = redis.call('HGET', KEYS[2], ARGV[3])
  if done then
    -- ids are scoped per game: one recorded in another game is not this action
    local dv, dd, dg = string.match(done, '^([^|]*)|([^|]*)|?(.*)$')
    dg = tonumber(dg) or 0
    local game = tonumber(ARGV[12])
    if dg == game or (ARGV[13] == '1' and dg == game - 1) then
      return {2, tonumber(dv), dd}
    end
  end
end
if cur ~= tonumber(ARGV[1]) then return {1, cur, ''} end
local v = cur + 1
redis.call('HSET', KEYS[1], 'v', v, 'data', ARGV[2])
if ARGV[3] ~= '' then
  redis.call('HSET', KEYS[2], ARGV[3], v .. '|' .. ARGV[11] .. '|' .. ARGV[12])
end
redis.call('XADD', KEYS[3], 'MAXLEN', '~', ARGV[8], v .. '-0', 'e', ARGV[4])
if ARGV[10] ~= '' then
  local ops = cjson.decode(ARGV[10])
  for _, slot in ipairs(ops.clear) do
    redis.call('ZREM', KEYS[5], slot)
    redis.call('HDEL', KEYS[6], slot)
  end
  for _, d in ipairs(ops.set) do
    redis.call('ZADD', KEYS[5], d[2], d[1])
    redis.call('HSET', KEYS[6], d[1], d[3])
  end
  local first = redis.call('ZRANGE', KEYS[5], 0, 0, 'WITHSCORES')
  if first[1] then
    redis.call('ZADD', KEYS[7], first[2], ARGV[9])
  else
    redis.call('ZREM', KEYS[7], ARGV[9])
  end
end
if ARGV[14] ~= '' then
  local entries = redis.call('XRANGE', KEYS[3], ARGV[15] .. '-0', v .. '-0')
  local parts = {}
  for _, e in ipairs(entries) do
    parts[#parts + 1] = string.match(e[1], '^(%d+)')
    parts[#parts + 1] = e[2][2]
  end
  redis.call('HSET', KEYS[8], ARGV[14], '[' .. table.concat(parts, ',') .. ']')
end
-- (ClusterRedisStore sends this script with SPUBLISH, sharded pub/sub, instead.)
redis.call('PUBLISH', ARGV[6], ARGV[5] .. ARGV[2] .. '}')
for i = 1, 6 do redis.call('EXPIRE', KEYS[i], ARGV[7]) end
redis.call('EXPIRE', KEYS[8], ARGV[7])
return {0, v, ''}
