"""The rate-limit counter in Redis: the sliding-window counter of runtime/clients/ratelimit.py as one atomic Lua
script, so that every replica counts one budget per client (or bot).

One round trip per request: the script reads the key's (window number, previous count, current count),
rolls the windows, allows or refuses, writes the counts back and returns them with the seconds elapsed
in the window; Python turns that into the same `Decision` the in-process counter makes (`decide`). The
clock is Redis' own (`TIME`), so replicas whose clocks differ still agree on the windows, and the key
expires when the window after its last one ends. While Redis is away the in-process counter counts.
"""

from __future__ import annotations

import hashlib

import redis.asyncio as redis
from redis.exceptions import NoScriptError

from runtime.clients.ratelimit import Decision, WindowCounter, decide
from runtime.clients.sharedstore import SharedStore, StoreUnavailable

PREFIX = "petgen:rate"

# KEYS[1]: the budget's key. ARGV: limit, window (seconds), take (1: count the request; 0: only read the counts,
# for a CORS preflight). Returns {allowed, previous, current, elapsed}.
SCRIPT = """
local limit, window = tonumber(ARGV[1]), tonumber(ARGV[2])
local time = redis.call('TIME')
local now = tonumber(time[1]) + tonumber(time[2]) / 1000000
local number = math.floor(now / window)
local elapsed = now - number * window
local stored = redis.call('HMGET', KEYS[1], 'n', 'p', 'c')
local n = tonumber(stored[1])
local previous, current = 0, 0
if n == nil or n < number - 1 then
  previous, current = 0, 0
elseif n == number - 1 then
  previous, current = tonumber(stored[3]), 0
else
  previous, current = tonumber(stored[2]), tonumber(stored[3])
end
local allowed = 0
if math.floor(previous * (1 - elapsed / window)) + current < limit then
  allowed = 1
  if ARGV[3] == '0' then
    return {allowed, previous, current, string.format('%.6f', elapsed)}
  end
  current = current + 1
elseif ARGV[3] == '0' then
  return {allowed, previous, current, string.format('%.6f', elapsed)}
end
redis.call('HSET', KEYS[1], 'n', number, 'p', previous, 'c', current)
redis.call('PEXPIREAT', KEYS[1], (number + 2) * window * 1000)
return {allowed, previous, current, string.format('%.6f', elapsed)}
"""
SHA = hashlib.sha1(SCRIPT.encode()).hexdigest()


async def run_script(client: redis.Redis, keys: list[str], args: list[int]) -> list[bytes | int]:
    try:
        return await client.evalsha(SHA, len(keys), *keys, *args)  # type: ignore[no-any-return]
    except NoScriptError:  # a new or restarted Redis: load it once
        await client.script_load(SCRIPT)
        return await client.evalsha(SHA, len(keys), *keys, *args)  # type: ignore[no-any-return]


class SharedWindowCounter:
    def __init__(self, store: SharedStore, fallback: WindowCounter) -> None:
        self.store = store
        self.fallback = fallback
        self.window = fallback.window

    async def hit(self, key: str, limit: int, take: bool = True) -> Decision:
        """Count a request for `key` in Redis, or in this process while Redis is away (with `take` off, only
        read what the budget stands at)."""
        redis_key = f"{PREFIX}:{self.window}:{key}"
        try:
            allowed, previous, current, elapsed = await self.store.run(
                lambda client: run_script(client, [redis_key], [limit, self.window, int(take)]))
        except StoreUnavailable:
            return Decision(*self.fallback.count(key, limit, take))
        return decide(limit, self.window, int(previous), int(current), float(elapsed), bool(allowed))
