-- Take entries out of their queues, each only if it is still the one with that ticket.
-- KEYS[1] entries, KEYS[2] counts. ARGV: player, ticket, player, ticket, ...
-- Returns how many were taken out.
local n = 0
for i = 1, #ARGV, 2 do
  local cur = redis.call('HGET', KEYS[1], ARGV[i])
  if cur then
    local e = cjson.decode(cur)
    if e['t'] == ARGV[i + 1] then
      redis.call('HDEL', KEYS[1], ARGV[i])
      if redis.call('HINCRBY', KEYS[2], e['q'], -1) <= 0 then redis.call('HDEL', KEYS[2], e['q']) end
      n = n + 1
    end
  end
end
return n
