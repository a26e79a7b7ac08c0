"""Table talk's fixed parts: the preset phrases and the chat modes (docs/protocol.md "Chat").

A preset travels as its id and each reader's client shows it in the reader's own language
(the web client's catalogues hold ``chat.preset.<id>`` in English, Danish and Swedish), so a
Dane and a Swede at one table understand each other. Free text travels as the writer typed
it, after the same hygiene as names (``protocol.messages.ChatText``).
"""

from __future__ import annotations

from typing import Literal, get_args

PresetId = Literal[
    "hello", "good_luck", "have_fun", "good_game", "well_played", "nice_hand", "nice_crib",
    "well_pegged", "lucky_starter", "nice_go", "thanks", "sorry", "oops", "wow", "thinking",
    "one_more", "brb", "back", "must_go", "bye",
]
"""The preset phrases, by id: greetings (hello, good luck, have fun), praise (good game, well
played, nice hand, nice crib, well pegged, lucky starter, nice go), manners (thanks, sorry,
oops, wow), the pace (thinking, one more?, be right back, back again, must go) and bye."""

PRESETS: tuple[str, ...] = get_args(PresetId)
"""Every preset id, in the order a client offers them."""

ChatMode = Literal["off", "presets", "free"]
"""A room's chat setting: no chat, preset phrases only, or presets and free text."""

CHAT_MODES: tuple[str, ...] = get_args(ChatMode)
