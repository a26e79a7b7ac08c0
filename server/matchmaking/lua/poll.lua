-- One process's poll: renew its heartbeat, take the results of its players' matches,
-- read its players' entries and its queues' counts.
-- KEYS[1] owners, KEYS[2] entries, KEYS[3] counts, KEYS[4] placed, KEYS[5..]
-- matched:<ticket> (one per ticket asked about).
-- ARGV[1] owner, ARGV[2] now (ms), ARGV[3] n players, ARGV[4..3+n] players (the k-th the
-- player of the k-th ticket), then queues, and last how long a taken result stays (ms).
-- Returns {results (per ticket: the result JSON, {"pending": id}, or nil), entries (per player), counts (per queue)}.
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
local results = {}
local n = tonumber(ARGV[3])
for k = 5, #KEYS do
  local v = redis.call('GET', KEYS[k])
  -- A result is taken once: it stays ARGV[#ARGV] ms more, marked taken, for a player who
  -- queues again at once (their connection went as it was sent: they are given this match
  -- again, never a second one). The marker of a match whose room is not ready stays.
  if v and string.sub(v, 1, 10) ~= '{"pending"' and string.sub(v, 1, 8) ~= '{"taken"' then
    redis.call('SET', KEYS[k], '{"taken":1,' .. string.sub(v, 2), 'PX', ARGV[#ARGV])
  end
  results[k - 4] = v
end
local entries = {}
if n > 0 then entries = redis.call('HMGET', KEYS[2], unpack(ARGV, 4, 3 + n)) end
local counts = {}
if #ARGV - 1 > 3 + n then
  counts = redis.call('HMGET', KEYS[3], unpack(ARGV, 4 + n, #ARGV - 1))
end
return {results, entries, counts}
