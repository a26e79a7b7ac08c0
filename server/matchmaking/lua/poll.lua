-- One process's poll: renew its heartbeat, take the results of its players' matches,
-- read its players' entries and its queues' counts.
-- KEYS[1] owners, KEYS[2] entries, KEYS[3] counts, KEYS[4] placed, KEYS[5..]
-- matched:<ticket> (one per ticket asked about).
-- ARGV[1] owner, ARGV[2] now (ms), ARGV[3] n players, ARGV[4..3+n] players (the k-th the
-- player of the k-th ticket), then queues.
-- Returns {results (per ticket: the result JSON, {"pending": id}, or nil), entries (per player), counts (per queue)}.
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
local results = {}
local n = tonumber(ARGV[3])
for k = 5, #KEYS do
  local v = redis.call('GET', KEYS[k])
  -- a result is taken once; the marker of a match whose room is not ready stays
  if v and string.sub(v, 1, 10) ~= '{"pending"' then
    redis.call('DEL', KEYS[k])
    local player = ARGV[3 + k - 4]
    if k - 4 <= n and redis.call('HGET', KEYS[4], player) == string.sub(KEYS[k], -16) then
      redis.call('HDEL', KEYS[4], player)
    end
  end
  results[k - 4] = v
end
local entries = {}
if n > 0 then entries = redis.call('HMGET', KEYS[2], unpack(ARGV, 4, 3 + n)) end
local counts = {}
if #ARGV > 3 + n then counts = redis.call('HMGET', KEYS[3], unpack(ARGV, 4 + n, #ARGV)) end
return {results, entries, counts}
