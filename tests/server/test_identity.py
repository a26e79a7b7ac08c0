"""Identity without sign-up, hardened: tokens the server did not issue are never taken as an
identity, one token holds at most one seat of a room, presence names the seat, and fields are
strictly typed. Real uvicorn, real Redis, real WebSocket clients."""

from __future__ import annotations

import httpx
import pytest
from crib_wire import events_of

from protocol.client import Client, ClientError
from server.names import imitated_label
from server.tokens import TokenIssuer

FORGED = "BBBBBBBBBBBBBBBBBBBBBB"


def test_tokens_carry_a_tag_that_other_secrets_do_not_make() -> None:
    ours, theirs = TokenIssuer(b"a" * 32), TokenIssuer(b"b" * 32)
    token = ours.issue()
    assert len(token) == 32 and ours.is_issued(token)
    assert not theirs.is_issued(token)
    assert not ours.is_issued(FORGED)
    assert not ours.is_issued(token[:-1] + ("A" if token[-1] != "A" else "B"))
    assert not ours.is_issued(None) and not ours.is_issued("!" * 32)


async def test_a_made_up_hello_token_is_replaced_by_a_fresh_one(server) -> None:
    c = await Client.connect(server.ws, name="Forge", token=FORGED)
    try:
        assert c.player_token != FORGED
        # A token the server issued is taken back as it is.
        again = await Client.connect(server.ws, name="Forge", token=c.player_token)
        assert again.player_token == c.player_token
        await again.close()
    finally:
        await c.close()


async def test_join_with_a_made_up_token_is_refused_and_sits_nobody(server) -> None:
    ann = await Client.connect(server.ws, name="Ann")
    try:
        room = (await ann.create_room({"players": 2}))["room"]
        with pytest.raises(ClientError) as err:
            await ann.join(room, 0, token=FORGED)
        assert err.value.code == "bad_token"
        async with httpx.AsyncClient() as http:
            summary = (await http.get(f"{server.http}/api/rooms/{room}")).json()
        assert summary["seats_taken"] == 0
    finally:
        await ann.close()


async def test_one_token_holds_one_seat_of_a_room(server) -> None:
    ann = await Client.connect(server.ws, name="Ann")
    try:
        room = (await ann.create_room({"players": 3}))["room"]
        await ann.join(room, 0)
        with pytest.raises(ClientError) as err:
            await ann.join(room, 1)
        assert err.value.code == "already_seated"
        # Her own seat is still hers.
        snap = await ann.join(room, 0)
        assert snap["seat"] == 0
    finally:
        await ann.close()


async def test_presence_names_the_seat_not_the_connection(server) -> None:
    ann = await Client.connect(server.ws, name="Ann")
    bob = await Client.connect(server.ws, name="Bob")
    imposter = None
    try:
        room = (await ann.create_room({"players": 2}))["room"]
        await ann.join(room, 0)
        await bob.join(room, 1)
        imposter = await Client.connect(server.ws, name="Imposter", token=ann.player_token)
        await imposter.join(room, 0)
        await imposter.close()
        await ann.close()
        await bob.wait_until(
            lambda c: any(
                f["type"] == "presence" and f["seat"] == 0 and not f["connected"]
                for f in c.frames
            )
        )
        names = {f.get("name") for f in bob.frames if f["type"] == "presence" and f["seat"] == 0}
        assert names == {"Ann"}
    finally:
        for c in (ann, bob, imposter):
            if c is not None:
                await c.close()


@pytest.mark.parametrize(
    "message,code",
    [
        ({"type": "join", "room": "abcdefgh", "seat": "0"}, "bad_message"),
        ({"type": "join", "room": "abcdefgh", "seat": True}, "bad_message"),
        ({"type": "hello", "name": "a\u202eb"}, "bad_name"),
        # an option value (docs/protocol.md, "Error codes": bad_message or bad_options)
        ({"type": "create_room", "options": {"muggins": "yes"}}, "bad_options"),
    ],
    ids=["seat-as-text", "seat-as-bool", "name-with-rtl-override", "option-as-text"],
)
async def test_loosely_typed_fields_are_refused(server, message, code) -> None:
    c = await Client.connect(server.ws, name="Strict")
    try:
        frame = await c.request(message, lambda f: f["type"] == "error")
    except ClientError as exc:
        assert exc.code == code
    else:  # pragma: no cover - request raises on an error frame
        raise AssertionError(frame)
    finally:
        await c.close()


async def test_room_options_are_the_effective_ones(server) -> None:
    """Lowball with Muggins is played without Muggins, and the room says so (docs/rules.md §1.3)."""
    async with httpx.AsyncClient() as http:
        made = await http.post(
            f"{server.http}/api/rooms", json={"options": {"lowball": True, "muggins": True}}
        )
        assert made.status_code == 201
        assert made.json()["options"]["muggins"] is False
        summary = (await http.get(f"{server.http}/api/rooms/{made.json()['room']}")).json()
        assert summary["options"]["muggins"] is False and summary["options"]["lowball"] is True


def test_http_answers_json_when_redis_is_down(make_server) -> None:
    from crib_wire import free_port

    dead = f"redis://127.0.0.1:{free_port()}/0"
    server = make_server(redis_url=dead)
    made = httpx.post(f"{server.http}/api/rooms", json={}, timeout=10)
    assert made.status_code == 503
    assert made.json()["error"]["code"] == "store_unavailable"
    assert httpx.get(f"{server.http}/readyz", timeout=10).status_code == 503


async def test_every_seat_sees_the_game_start_after_identity_checks(server) -> None:
    ann = await Client.connect(server.ws, name="Ann")
    bob = await Client.connect(server.ws, name="Bob")
    try:
        room = (await ann.create_room({"players": 2}))["room"]
        await ann.join(room, 0)
        await bob.join(room, 1)
        await ann.wait_until(lambda c: c.view is not None and c.view["phase"] == "discard")
        assert events_of(ann, "deal")
    finally:
        await ann.close()
        await bob.close()


def test_room_ids_are_letters_and_digits() -> None:
    """An id starting with "-" was read as an option by ``cribbage-bot URL ROOM SEAT``."""
    import re

    from server.rooms import new_room_id

    ids = {new_room_id() for _ in range(2000)}
    assert len(ids) == 2000
    assert all(re.fullmatch(r"[A-Za-z0-9]{10}", i) for i in ids)


IMITATIONS = [
    # another seat's name, as it reads (case, width, spaces, punctuation, look-alikes)
    ("Ann", "name_taken"), ("ANN", "name_taken"), ("Ａｎｎ", "name_taken"),
    ("A n n.", "name_taken"), ("Аnn", "name_taken"),  # a Cyrillic А
    # the table's own labels, in English, Danish and Swedish
    ("You", "bad_name"), ("du", "bad_name"), ("Dig", "bad_name"),
    ("Computer (standard)", "bad_name"), ("computer(easy)", "bad_name"),
    ("Ｃｏｍｐｕｔｅｒ", "bad_name"), ("Computer 2", "bad_name"), ("Dator 3", "bad_name"),
    ("Computeren", "bad_name"), ("Datorn", "bad_name"), ("Seat 2", "bad_name"),
    ("Plads 1", "bad_name"), ("Plats 4", "bad_name"), ("team A", "bad_name"),
    ("hold B", "bad_name"), ("Computerspiller (let)", "bad_name"),
    ("dator · lätt", "bad_name"), ("Ben (you)", "bad_name"), ("Ben (dig)", "bad_name"),
    ("Ben (du)", "bad_name"), ("nobody", "bad_name"), ("ingen", "bad_name"),
]


async def test_a_seat_name_cannot_pass_for_a_label_or_another_seat(server) -> None:
    """Ann sits; a second person may not take the free seat under a name that reads like
    hers, nor like one of the table's own labels in any of its languages (docs/protocol.md,
    "Seat names"); each refusal changes nothing, and an honest name then sits. Watching
    under any name is fine."""
    ann = await Client.connect(server.ws, name="Ann")
    created = await ann.create_room({"players": 2})
    room = created["room"]
    await ann.join(room, 0)
    version = ann.version
    others: list[Client] = []
    try:
        for name, code in IMITATIONS:
            other = await Client.connect(server.ws, name=name)
            others.append(other)
            with pytest.raises(ClientError) as refused:
                await other.join(room, 1)
            assert refused.value.code == code, name
        watcher = await Client.connect(server.ws, name="You")
        others.append(watcher)
        assert (await watcher.join(room, None))["seat"] is None
        assert ann.version == version
        for fine in ("Thank you", "Anna", "Hold fast", "Søren", "Guest", "Ｗ" * 32):
            assert not imitated_label(fine), fine
        ben = await Client.connect(server.ws, name="Ben")
        others.append(ben)
        snap = await ben.join(room, 1)
        assert [s["name"] for s in snap["seats"]] == ["Ann", "Ben"]
    finally:
        for c in (ann, *others):
            await c.close()
