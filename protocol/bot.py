"""``cribbage-bot``: a computer player as an external client of a cribbage server.

It proves the protocol is enough to write a bot: it connects to ``/ws`` like any client
(:class:`protocol.client.Client`), takes a seat, keeps its seat's view up to date from the
snapshot and the JSON patches of each update, computes its legal actions from that view
alone (:func:`engine.computer.legal_from_view`) and decides with the same function as the
server's computer seats (:func:`engine.computer.decide`) — from the view only, never a game
state. It plays until game over (and, with ``--rematches N``, N more games in the room)::

    cribbage-bot ws://127.0.0.1:8000/ws k3JfQ9xa2B 1 --level standard --name Robo

On exit it prints one JSON line: ``{"room", "seat", "games", "result", "actions"}``.
Exit status 0 after the last game over, 1 on a refused action or a protocol failure,
2 on bad arguments.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import sys
from typing import Any

from engine.computer import LEVELS, decide, legal_from_view

from .client import Client, ClientError

log = logging.getLogger("cribbage-bot")

TOO_LATE = frozenset(
    ["nothing_to_answer", "already_answered", "wrong_phase", "not_an_opponent", "game_over",
     "stale_answer"]
)
"""Reject codes that mean "another seat got there first" (docs/rules.md §5.2): carry on."""


class BotError(Exception):
    """The server refused one of the bot's actions for a reason other than a race."""


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
) -> dict[str, Any]:
    """Sit at ``seat`` of ``room`` and play until game over (plus ``rematches`` games).

    Args:
        url: the server's WebSocket URL, e.g. ``ws://127.0.0.1:8000/ws``.
        room: the room id.
        seat: the seat to take (or resume, with ``token``).
        level: ``easy`` or ``standard``.
        name: display name (default ``"Bot (<level>)"``).
        encoding: ``json`` or ``msgpack``.
        token: a player token to resume a seat held earlier.
        rematches: how many more games to ask for after the first game over.
        idle_timeout: seconds to wait for anything to happen before giving up.

    Returns:
        ``{"room", "seat", "games", "result", "actions"}`` — ``result`` is the last game's
        ``view["result"]``.

    Raises:
        ValueError: unknown level. ClientError: the server refused the connection or the
        join (e.g. ``seat_taken``). BotError: an action was refused. TimeoutError: nothing
        happened for ``idle_timeout`` seconds.
    """
    if level not in LEVELS:
        raise ValueError(f"level must be one of {', '.join(LEVELS)}")
    client = await Client.connect(
        url, name=name or f"Bot ({level})", token=token, encoding=encoding,  # type: ignore[arg-type]
        record=False,
    )
    actions = 0
    games = 0
    try:
        await client.join(room, seat)
        while True:
            await client.wait_until(
                lambda c: c.view is not None
                and (c.view["phase"] == "game_over" or _has_move(c.view)),
                idle_timeout,
            )
            view = client.view
            assert view is not None
            if view["phase"] == "game_over":
                games += 1
                log.info("game %s over: %s", view["game_number"], view["result"])
                if games > rematches:
                    return {"room": room, "seat": seat, "games": games,
                            "result": view["result"], "actions": actions}
                number = view["game_number"]
                await client.act({"type": "rematch"}, f"bot-rematch-{number}")
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
            answer = await client.act(action, f"bot-v{seen}")
            actions += 1
            if answer["type"] == "reject":
                if answer["code"] in TOO_LATE:
                    await client.wait_until(lambda c, s=seen: c.version > s, idle_timeout)
                    continue
                raise BotError(f"{action} refused: {answer['code']}: {answer['message']}")
    finally:
        await client.close()


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command line of ``cribbage-bot``."""
    parser = argparse.ArgumentParser(
        prog="cribbage-bot", description="Play a seat of a cribbage room as a computer player."
    )
    parser.add_argument("url", help="the server's WebSocket URL, e.g. ws://127.0.0.1:8000/ws")
    parser.add_argument("room", help="room id")
    parser.add_argument("seat", type=int, help="seat number (0..3)")
    parser.add_argument("level", nargs="?", default="standard", choices=LEVELS,
                        help="easy or standard (default standard)")
    parser.add_argument("--level", dest="level_opt", choices=LEVELS, help="same as LEVEL")
    parser.add_argument("--name", help="display name (default 'Bot (<level>)')")
    enc = parser.add_mutually_exclusive_group()
    enc.add_argument("--json", dest="encoding", action="store_const", const="json",
                     help="JSON text frames (default)")
    enc.add_argument("--msgpack", dest="encoding", action="store_const", const="msgpack",
                     help="msgpack binary frames")
    parser.add_argument("--token", help="player token, to resume a seat held earlier")
    parser.add_argument("--rematches", type=int, default=0,
                        help="games to ask for after the first game over (default 0)")
    parser.add_argument("--log-level", default="warning", help="debug, info, warning, error")
    args = parser.parse_args(argv)
    if args.level_opt:
        args.level = args.level_opt
    args.encoding = args.encoding or "json"
    return args


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``cribbage-bot`` console script. Returns the exit status."""
    args = parse_args(argv)
    logging.basicConfig(level=args.log_level.upper(), format="%(levelname)s %(name)s %(message)s")
    try:
        summary = asyncio.run(
            play(args.url, args.room, args.seat, level=args.level, name=args.name,
                 encoding=args.encoding, token=args.token, rematches=args.rematches)
        )
    except (BotError, ClientError, TimeoutError, OSError) as exc:
        log.error("%s", exc)
        return 1
    sys.stdout.write(json.dumps(summary) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
