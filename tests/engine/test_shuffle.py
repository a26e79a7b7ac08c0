"""The verifiable shuffle (docs/rules.md "The shuffle"): seeds derived one-way per game and
per deal, commitments sent before each deal, and nothing about a deal learnable from what a
seat or spectator receives before the game ends."""

from __future__ import annotations

import hashlib
import hmac
import json
import random

import engine
from engine import GameOptions, rng


def test_the_derivation_is_the_documented_one() -> None:
    """Pinned against HMAC-SHA256 and SHA-256 spelled out as in the document."""
    g = hmac.new(b"str:abc", b"cribbage/v2/game/2", hashlib.sha256).digest()
    assert rng.game_seed("abc", 2) == g
    assert rng.deal_seed("abc", 2, 3) == hmac.new(g, b"deal/3", hashlib.sha256).digest()
    assert rng.cut_seed("abc", 2, 1) == hmac.new(g, b"cut/1", hashlib.sha256).digest()
    assert rng.game_seed(7, 1) == hmac.new(b"int:7", b"cribbage/v2/game/1",
                                           hashlib.sha256).digest()
    seed = rng.deal_seed("abc", 2, 3)
    assert rng.commitment(seed) == hashlib.sha256(seed).hexdigest()
    assert rng.deal_deck("abc", 2, 3) == rng.shuffled_pack(seed)
    # A known answer, so the shuffle never changes unnoticed (archived games depend on it).
    pack = rng.shuffled_pack(bytes(range(32)))
    assert sorted(pack) == sorted(str(c) for c in engine.FULL_DECK)
    assert hashlib.sha256(" ".join(pack).encode()).hexdigest()[:16] == KNOWN_PACK_DIGEST


KNOWN_PACK_DIGEST = "2a527868bebdae1c"


def test_every_seed_is_its_own() -> None:
    seeds = {rng.deal_seed("room", g, d) for g in (1, 2, 3) for d in range(1, 30)}
    seeds |= {rng.cut_seed("room", g, r) for g in (1, 2, 3) for r in range(1, 4)}
    seeds |= {rng.game_seed("room", g) for g in (1, 2, 3)}
    seeds |= {rng.deal_seed("other", 1, d) for d in range(1, 30)}
    assert len(seeds) == 3 * 29 + 3 * 3 + 3 + 29


def test_commitments_come_before_the_cards() -> None:
    state, events = engine.new_game(GameOptions(players=3), "s33d")
    kinds = [e["type"] for e in events]
    assert kinds == ["game_start", "game_commitment", "cut_for_deal", "deal_commitment", "deal"]
    assert events[1]["commitment"] == rng.commitment(rng.game_seed("s33d", 1))
    assert events[3] == {"type": "deal_commitment", "game_number": 1, "deal_number": 1,
                         "commitment": rng.commitment(rng.deal_seed("s33d", 1, 1))}
    for seat in (None, 0, 1, 2):  # the same to every seat and spectator
        assert engine.redact_event(events[1], seat) == events[1]
        assert engine.redact_event(events[3], seat) == events[3]


def test_no_seed_is_learnable_before_the_game_ends() -> None:
    """Every view and redacted event of whole games (and a rematch) is searched for every
    seed of the room (the room's, each game's, each cut's and deal's), as hex and as the
    raw text: none appears before its game is over."""
    for players in (2, 3, 4):
        room_seed = f"{random.Random(players).getrandbits(128):032x}"
        secrets = {room_seed}
        for g in (1, 2):
            secrets.add(rng.game_seed(room_seed, g).hex())
            for d in range(1, 60):
                secrets.add(rng.deal_seed(room_seed, g, d).hex())
            for r in range(1, 6):
                secrets.add(rng.cut_seed(room_seed, g, r).hex())
        rnd = random.Random(players)
        state, events = engine.new_game(GameOptions(players=players, target=61), room_seed)
        games = 0
        seen = 0
        while True:
            for seat in (None, *range(players)):
                text = json.dumps([engine.view(state, seat),
                                   [engine.redact_event(e, seat) for e in events]])
                seen += 1
                assert not any(s in text for s in secrets), (players, seat)
            if state.phase == "game_over":
                games += 1
                if games == 2:
                    break
            moves = [(s, a) for s in (None, *range(players))
                     for a in engine.legal_actions(state, s)]
            state, events = engine.apply(state, *rnd.choice(moves))
        assert seen > 100
