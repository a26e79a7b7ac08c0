-- Atomic commit of one change to a room (server/store/redis.py, RedisStore.commit).
-- KEYS[1] room:{id}:state     hash: v (version), data (room record JSON)
-- KEYS[2] room:{id}:actions   hash: "<seat>:<action id>" -> version it made
-- KEYS[3] room:{id}:log       stream: one entry per accepted change
-- KEYS[4] room:{id}:presence  hash (only its expiry is refreshed here)
-- KEYS[5] room:{id}:deadlines zset: "<kind>|<key>" -> due time (or lease end once claimed)
-- KEYS[6] room:{id}:deadline_data hash: "<kind>|<key>" -> deadline JSON
-- KEYS[7] deadlines (global index, no hash tag): room id -> its earliest deadline
-- ARGV[1] expected version    ARGV[2] new record JSON     ARGV[3] action key or ""
-- ARGV[4] log entry JSON      ARGV[5] message head (JSON object text up to `"room":`)
-- ARGV[6] channel             ARGV[7] ttl seconds         ARGV[8] log max length
-- ARGV[9] room id             ARGV[10] deadline changes JSON {"set": [[slot, due, json]...],
--                                      "clear": [slot...]}, or "" for none
-- Returns {status, version}: 0 ok, 1 conflict, 2 duplicate, 3 missing.
local cur = redis.call('HGET', KEYS[1], 'v')
if not cur then return {3, -1} end
cur = tonumber(cur)
if ARGV[3] ~= '' then
  local done = redis.call('HGET', KEYS[2], ARGV[3])
  if done then return {2, tonumber(done)} end
end
if cur ~= tonumber(ARGV[1]) then return {1, cur} end
local v = cur + 1
redis.call('HSET', KEYS[1], 'v', v, 'data', ARGV[2])
if ARGV[3] ~= '' then redis.call('HSET', KEYS[2], ARGV[3], v) end
redis.call('XADD', KEYS[3], 'MAXLEN', '~', ARGV[8], '*', 'v', v, 'e', ARGV[4])
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
redis.call('PUBLISH', ARGV[6], ARGV[5] .. ARGV[2] .. '}')
for i = 1, 6 do redis.call('EXPIRE', KEYS[i], ARGV[7]) end
return {0, v}
