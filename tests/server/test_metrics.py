"""``/metrics``: scraped from a real server after a few actions, in the Prometheus text
format, parsed with prometheus-client's own parser."""

from __future__ import annotations

import gc
import random

import httpx
from crib_wire import choose, seat_players
from prometheus_client.parser import text_string_to_metric_families


def scrape(server) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:  # noqa: ANN001
    answer = httpx.get(f"{server.http}/metrics")
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("text/plain")
    out = {}
    for family in text_string_to_metric_families(answer.text):
        for sample in family.samples:
            out[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return out


async def test_metrics_count_what_happens(server, clients) -> None:
    before = scrape(server)
    assert before[("cribbage_connections", ())] == 0
    room, players, _ = await seat_players(server.ws, {"players": 2})
    clients.extend(players)
    ann, bob = players
    rng = random.Random(1)
    acks = 0
    for client in (ann, bob):
        answer = await client.act(choose(client.view, rng))
        acks += answer["type"] == "ack"
    # A card ann does not hold: refused whatever the deal (5H was accepted when she held it
    # and it was her turn, about one deal in twenty-five).
    card = next(c for c in ("5H", "5S", "5D", "5C", "6H") if c not in ann.view["hand"])
    rejected = await ann.act({"type": "play", "card": card})
    assert rejected["type"] == "reject"
    again = await ann.act({"type": "play", "card": card}, action_id="x")
    await ann.act({"type": "play", "card": card}, action_id="x")
    assert again["type"] == "reject"
    after = scrape(server)
    assert after[("cribbage_connections", ())] == 2
    assert after[("cribbage_rooms_followed", ())] == 1
    assert after[("cribbage_actions_total", (("outcome", "accepted"),))] == acks == 2
    code = rejected["code"]
    assert after[("cribbage_action_rejects_total", (("code", code),))] == 3
    assert after[("cribbage_action_seconds_count", ())] == 5
    assert after[("cribbage_store_up", ())] == 1
    assert after[("cribbage_store_errors_total", ())] == 0
    for name in ("cribbage_commit_conflicts_total", "cribbage_deadlines_fired_total",
                 "cribbage_pubsub_reconnects_total", "cribbage_catch_ups_total",
                 "cribbage_presence_reaped_total", "cribbage_event_loop_lag_seconds_count"):
        assert (name, ()) in after, name
    # The server runs in this process (a thread): a full collection here is one it sees.
    gc.collect()
    pauses = scrape(server)[("cribbage_gc_pause_seconds_count", (("generation", "2"),))]
    assert pauses >= 1
