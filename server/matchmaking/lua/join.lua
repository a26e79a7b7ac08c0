-- Put a player in a queue (replacing any entry of theirs, in any queue: one at a time),
-- unless a match of theirs was recorded and its result not taken, or taken moments ago
-- for this same queue (their connection went before hearing of it, or as it was sent):
-- then nothing is queued and that match's ticket is returned. A player who heard of their
-- match and now asks for another table is queued for it.
-- KEYS[1] entries (hash player -> entry JSON), KEYS[2] counts (hash queue -> players),
-- KEYS[3] owners (hash owner -> heartbeat ms), KEYS[4] placed (hash player -> ticket of
-- their last recorded match), KEYS[5] key prefix of results (matched:).
-- ARGV[1] player, ARGV[2] entry JSON, ARGV[3] queue, ARGV[4] owner, ARGV[5] now (ms).
-- Returns {replaced entry JSON or false, ticket of an untaken match or false}.
local placed = redis.call('HGET', KEYS[4], ARGV[1])
if placed then
  local v = redis.call('GET', KEYS[5] .. placed)
  if v and (string.sub(v, 1, 8) ~= '{"taken"' or cjson.decode(v)['queue'] == ARGV[3]) then
    return {false, placed}
  end
  redis.call('HDEL', KEYS[4], ARGV[1])
end
local old = redis.call('HGET', KEYS[1], ARGV[1])
if old then
  local q = cjson.decode(old)['q']
  if redis.call('HINCRBY', KEYS[2], q, -1) <= 0 then redis.call('HDEL', KEYS[2], q) end
end
redis.call('HSET', KEYS[3], ARGV[4], ARGV[5])
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('HINCRBY', KEYS[2], ARGV[3], 1)
return {old or false, false}
