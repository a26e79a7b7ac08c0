"""``cribbage-bot``: a computer player as an external client of a cribbage server.

It proves the protocol is enough to write a bot: it connects to ``/ws`` like any client
(:class:`protocol.client.Client`), takes a seat, keeps its seat's view up to date from the
snapshot and the JSON patches of each update, computes its legal actions from that view
alone (:func:`engine.computer.legal_from_view`) and decides with the same function as the
server's computer seats (:func:`engine.computer.decide`) — from the view only, never a game
state. It plays until game over (and, with ``--rematches N``, N more games in the room)::

    cribbage-bot ws://127.0.0.1:8000/ws k3JfQ9xa2B 1 --level standard --name Robo

On exit it prints one JSON line: ``{"room", "seat", "games", "result", "actions",
"reconnects"}``. Exit status 0 after the last game over, 1 on a refused action or a
protocol failure, 2 on bad arguments.

When the connection drops (close codes 1000, 1001, 1005, 1006, 1011, 1012 — a server's
graceful restart —, 1013 and 1014, or a network error: docs/protocol.md "Reconnecting") it
reconnects with exponential backoff and jitter, says ``hello``
with its player token, ``join``s the same seat with the seat token and carries on; an action
whose answer was lost is sent again with the same ``action_id`` (the server applies it at
most once). An action answered ``outcome_unknown`` or ``store_unavailable`` is likewise sent
again after a pause.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import random
import sys
from typing import Any

import websockets

from engine.computer import LEVELS, decide, legal_from_view

from .client import Client, ClientError

log = logging.getLogger("cribbage-bot")

TOO_LATE = frozenset(
    ["nothing_to_answer", "already_answered", "wrong_phase", "not_an_opponent", "game_over",
     "stale_answer"]
)
"""Reject codes that mean "another seat got there first" (docs/rules.md §5.2): carry on."""


RETRY_CODES = frozenset(["outcome_unknown", "store_unavailable", "busy"])
"""Reject codes after which the same action (same id) is sent again after a pause."""

RECONNECT_CLOSE_CODES = frozenset([1000, 1001, 1005, 1006, 1011, 1012, 1013, 1014])
"""WebSocket close codes after which the bot reconnects (docs/protocol.md "Reconnecting"):
a close it did not ask for (1000 from the other side, going away, no status), abnormal
closure, server error, service restart, try again later, bad gateway. The same set as the
JavaScript client's ``RECONNECT_CLOSE_CODES``."""


class BotError(Exception):
    """The server refused one of the bot's actions for a reason other than a race."""


class Disconnected(Exception):
    """The connection dropped in a way worth reconnecting after."""


def backoff(attempt: int, base: float = 0.25, cap: float = 8.0) -> float:
    """Seconds to wait before reconnect ``attempt`` (1, 2, ...): exponential with full
    jitter, capped."""
    return random.uniform(0, min(cap, base * 2 ** attempt))


def _has_move(view: dict[str, Any] | None) -> bool:
    return any(a.get("type") != "rematch" for a in legal_from_view(view))


async def play(
    url: str,
    room: str,
    seat: int,
    *,
    level: str = "standard",
    name: str | None = None,
    encoding: str = "json",
    token: str | None = None,
    rematches: int = 0,
    idle_timeout: float = 3600.0,
    max_reconnects: int = 50,
) -> dict[str, Any]:
    """Sit at ``seat`` of ``room`` and play until game over (plus ``rematches`` games),
    reconnecting when the connection drops.

    Args:
        url: the server's WebSocket URL, e.g. ``ws://127.0.0.1:8000/ws``.
        room: the room id.
        seat: the seat to take (or resume, with ``token``).
        level: ``easy``, ``standard`` or ``expert``.
        name: display name (default ``"Bot (<level>)"``).
        encoding: ``json`` or ``msgpack``.
        token: a player token to resume a seat held earlier.
        rematches: how many more games to ask for after the first game over.
        idle_timeout: seconds to wait for anything to happen before giving up.
        max_reconnects: reconnections in a row (without a successful join between) before
            giving up.

    Returns:
        ``{"room", "seat", "games", "result", "actions", "reconnects"}`` — ``result`` is
        the last game's ``view["result"]``.

    Raises:
        ValueError: unknown level. ClientError: the server refused the connection or the
        join (e.g. ``seat_taken``). BotError: an action was refused. TimeoutError: nothing
        happened for ``idle_timeout`` seconds. OSError: could not reconnect.
    """
    if level not in LEVELS:
        raise ValueError(f"level must be one of {', '.join(LEVELS)}")
    tally = {"room": room, "seat": seat, "games": 0, "result": None, "actions": 0,
             "reconnects": 0}
    over: set[int] = set()
    seat_token: str | None = None
    failures = 0
    while True:
        try:
            client = await Client.connect(
                url, name=name or f"Bot ({level})", token=token,
                encoding=encoding, record=False,  # type: ignore[arg-type]
            )
        except (OSError, TimeoutError, websockets.exceptions.WebSocketException) as exc:
            failures += 1
            if failures > max_reconnects:
                raise OSError(f"could not reconnect: {exc}") from exc
            tally["reconnects"] += 1
            await asyncio.sleep(backoff(failures))
            continue
        token = client.player_token
        try:
            await client.join(room, seat, token=seat_token)
            seat_token = client.seat_token
            failures = 0
            await _play_games(client, room, seat, level, rematches, idle_timeout, tally, over)
            return tally
        except ClientError:
            if not client.closed.is_set() or client.close_code not in RECONNECT_CLOSE_CODES:
                raise
            failures += 1
            if failures > max_reconnects:
                raise
            tally["reconnects"] += 1
            log.info("connection closed (%s); reconnecting", client.close_code)
            await asyncio.sleep(backoff(failures))
        finally:
            await client.close()


async def _act(client: Client, action: dict[str, Any], action_id: str,
               idle_timeout: float) -> dict[str, Any]:
    """Send an action, again with the same id while its outcome is unknown or the store is
    down (at most once applied)."""
    for attempt in range(1, 30):
        answer = await client.act(action, action_id, timeout=idle_timeout)
        if answer["type"] == "ack" or answer["code"] not in RETRY_CODES:
            return answer
        # A busy server names how long it let the action wait (retry_after): no sooner.
        await asyncio.sleep(max(backoff(attempt, 0.1, 2.0), answer.get("retry_after") or 0.0))
    return answer


async def _play_games(
    client: Client, room: str, seat: int, level: str, rematches: int,
    idle_timeout: float, tally: dict[str, Any], over: set[int],
) -> None:
    """Play on the connected client until the last game is over (updating ``tally``;
    ``over``: the game numbers seen ending, across reconnections)."""
    while True:
        await client.wait_until(
            lambda c: c.view is not None
            and (c.view["phase"] == "game_over" or _has_move(c.view)),
            idle_timeout,
        )
        view = client.view
        assert view is not None
        if view["phase"] == "game_over":
            number = view["game_number"]
            over.add(number)
            tally["games"] = len(over)
            tally["result"] = view["result"]
            log.info("game %s over: %s", number, view["result"])
            if len(over) > rematches:
                return
            await _act(client, {"type": "rematch"}, f"bot-rematch-{number}", idle_timeout)
            await client.wait_until(
                lambda c, n=number: c.view is not None and c.view["game_number"] > n,
                idle_timeout,
            )
            continue
        legal = legal_from_view(view)
        action = decide(view, legal, level, seed=f"{room}:{seat}:{client.version}")
        if action is None:  # only a rematch left: wait for the next change
            seen = client.version
            await client.wait_until(lambda c, s=seen: c.version > s, idle_timeout)
            continue
        seen = client.version
        answer = await _act(client, action, f"bot-v{seen}", idle_timeout)
        tally["actions"] += 1
        if answer["type"] == "reject":
            if answer["code"] in TOO_LATE:
                await client.wait_until(lambda c, s=seen: c.version > s, idle_timeout)
                continue
            raise BotError(f"{action} refused: {answer['code']}: {answer['message']}")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command line of ``cribbage-bot``."""
    parser = argparse.ArgumentParser(
        prog="cribbage-bot", description="Play a seat of a cribbage room as a computer player."
    )
    parser.add_argument("url", help="the server's WebSocket URL, e.g. ws://127.0.0.1:8000/ws")
    parser.add_argument("room", help="room id")
    parser.add_argument("seat", type=int, help="seat number (0..3)")
    parser.add_argument("level", nargs="?", default=None, choices=LEVELS,
                        help="easy, standard or expert (default standard)")
    parser.add_argument("--level", dest="level_opt", choices=LEVELS,
                        help="same as LEVEL (give one or the other, or both the same)")
    parser.add_argument("--name", help="display name (default 'Bot (<level>)')")
    enc = parser.add_mutually_exclusive_group()
    enc.add_argument("--json", dest="encoding", action="store_const", const="json",
                     help="JSON text frames (default)")
    enc.add_argument("--msgpack", dest="encoding", action="store_const", const="msgpack",
                     help="msgpack binary frames")
    parser.add_argument("--token", help="player token, to resume a seat held earlier")
    parser.add_argument("--rematches", type=int, default=0,
                        help="games to ask for after the first game over (default 0)")
    parser.add_argument("--max-reconnects", type=int, default=50,
                        help="reconnections in a row before giving up (default 50)")
    parser.add_argument("--log-level", default="warning", help="debug, info, warning, error")
    args = parser.parse_args(argv)
    if args.level_opt and args.level and args.level_opt != args.level:
        parser.error(f"LEVEL {args.level} and --level {args.level_opt} name different levels")
    args.level = args.level_opt or args.level or "standard"
    args.encoding = args.encoding or "json"
    return args


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``cribbage-bot`` console script. Returns the exit status."""
    args = parse_args(argv)
    logging.basicConfig(level=args.log_level.upper(), format="%(levelname)s %(name)s %(message)s")
    try:
        summary = asyncio.run(
            play(args.url, args.room, args.seat, level=args.level, name=args.name,
                 encoding=args.encoding, token=args.token, rematches=args.rematches,
                 max_reconnects=args.max_reconnects)
        )
    except (BotError, ClientError, TimeoutError, OSError) as exc:
        log.error("%s", exc)
        return 1
    sys.stdout.write(json.dumps(summary) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
