"""``cribbage-bot`` as a real subprocess: an external client over /ws that decides from its
patched view alone, playing whole games against a computer seat."""

from __future__ import annotations

import json
import subprocess
import sys

import httpx
import pytest
from crib_wire import ROOT

from protocol.bot import parse_args


def test_bot_plays_against_a_computer_seat_to_game_over(make_server):
    server = make_server(bot_delay_seconds=0)
    created = httpx.post(f"{server.http}/api/rooms", json={
        "options": {"players": 2, "target": 61, "muggins": True},
        "computers": {"0": "standard"},
    }).json()
    room = created["room"]
    done = subprocess.run(
        [sys.executable, "-m", "protocol.bot", server.ws, room, "1", "--level", "easy",
         "--name", "Robo", "--msgpack", "--rematches", "1"],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    assert summary["room"] == room and summary["seat"] == 1
    assert summary["games"] == 2 and summary["actions"] > 20
    assert summary["result"]["reason"] == "target_reached"
    info = httpx.get(f"{server.http}/api/rooms/{room}").json()
    assert info["status"] == "game_over" and info["games_played"] == 1
    assert info["seats"][1]["name"] == "Robo" and info["seats"][1]["kind"] == "human"


def test_bot_refuses_a_taken_seat(make_server):
    server = make_server(bot_delay_seconds=0)
    created = httpx.post(f"{server.http}/api/rooms", json={
        "options": {"players": 2}, "computers": {"0": "standard"}}).json()
    done = subprocess.run(
        [sys.executable, "-m", "protocol.bot", server.ws, created["room"], "0"],
        cwd=ROOT, capture_output=True, text=True, timeout=60,
    )
    assert done.returncode == 1
    assert "seat_taken" in done.stderr


def test_bot_arguments():
    args = parse_args(["ws://h/ws", "abcdEFGH12", "2", "easy", "--json"])
    assert (args.room, args.seat, args.level, args.encoding) == ("abcdEFGH12", 2, "easy", "json")
    args = parse_args(["ws://h/ws", "abcdEFGH12", "1", "--level", "standard", "--msgpack"])
    assert (args.level, args.encoding, args.rematches) == ("standard", "msgpack", 0)
    assert parse_args(["ws://h/ws", "abcdEFGH12", "1"]).level == "standard"
    assert parse_args(["ws://h/ws", "abcdEFGH12", "1", "expert", "--level", "expert"]
                      ).level == "expert"


def test_bot_refuses_two_different_levels(capsys):
    """``LEVEL`` and ``--level`` naming different levels is an error, not a silent choice."""
    with pytest.raises(SystemExit) as stop:
        parse_args(["ws://h/ws", "abcdEFGH12", "0", "easy", "--level", "expert"])
    assert stop.value.code == 2
    assert "different levels" in capsys.readouterr().err
