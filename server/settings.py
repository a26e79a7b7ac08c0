"""Server settings, from the command line or ``CRIBBAGE_*`` environment variables."""

from __future__ import annotations

import json
from typing import Annotated, Any

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from .origins import normalize
from .proxies import TrustedProxies


class Settings(BaseSettings):
    """Everything the server can be configured with.

    Each field can be set with the environment variable ``CRIBBAGE_<FIELD>`` (e.g.
    ``CRIBBAGE_REDIS_URL``); ``cribbage-server`` flags override those.
    """

    model_config = SettingsConfigDict(env_prefix="CRIBBAGE_", extra="ignore")

    host: str = Field("127.0.0.1", description="interface to listen on")
    port: int = Field(8000, ge=0, le=65535, description="TCP port (0: any free port)")
    redis_url: str | None = Field(
        None, description="redis://host:port/db; unset keeps rooms in this process's memory"
    )
    redis_cluster: bool = Field(
        False, description="redis_url names a node of a Redis Cluster: rooms are spread over "
        "its shards (keys grouped in hash-tag buckets, sharded pub/sub; docs/scaling.md)"
    )
    redis_cluster_buckets: int = Field(
        256, ge=1, le=16384, description="Redis Cluster only: rooms are grouped by a hash of "
        "their id into this many buckets, each in one hash slot with its own deadline index "
        "(every process scans every bucket's index each sweep); every process of a "
        "deployment must use the same number"
    )
    redis_cluster_wait_ms: int = Field(
        250, ge=0, description="Redis Cluster only: after a room change, wait up to this "
        "long for the shard's replica to confirm it (WAIT) before acknowledging, so an "
        "acknowledged action survives a failover; 0: do not wait"
    )
    key_prefix: str = Field("", description="prefix of every Redis key and channel")
    token_secret: str | None = Field(
        None,
        description="secret that signs player tokens; unset: one random secret kept in "
        "Redis and shared by every process (in memory: one per process)",
    )
    redis_max_connections: int = Field(
        256, ge=2, description="size of the Redis connection pool of this process (the "
        "write lane keeps up to half of it, at most 64, between writes)"
    )
    redis_pool_timeout: float = Field(
        1.0, gt=0, description="seconds a command waits for a free pooled connection"
    )
    redis_timeout_seconds: float = Field(
        1.0, gt=0, description="seconds a Redis command (or a connection attempt) may take "
        "before it counts as failed: a frozen Redis must not hang sessions or /readyz"
    )
    room_ttl_seconds: int = Field(24 * 3600, ge=1, description="rooms expire after this idle")
    # -- the database and the archive (docs/architecture.md "The archive") --------------------
    database_url: str | None = Field(
        None, description="the SQL database of finished games (and, later, players): "
        "postgresql://user@host:5432/db (asyncpg) or sqlite:///path (aiosqlite); unset: "
        "the embedded SQLite file cribbage.sqlite3 in data_dir"
    )
    data_dir: str | None = Field(
        None, description="folder of the embedded SQLite database when database_url is "
        "unset (default $XDG_DATA_HOME/cribbage-server, else ~/.local/share/cribbage-server)"
    )
    archive_abandon_margin_seconds: float = Field(
        3600.0, gt=0, description="a game in progress whose room stays idle until this long "
        "before the room's expiry (room_ttl_seconds) is abandoned and archived as such (the "
        "room then expires when it would have); at most half the TTL"
    )
    archive_retry_max_seconds: float = Field(
        60.0, gt=0, description="longest pause between two tries to archive a game while "
        "the database fails (the pauses double from 0.5 s)"
    )
    archive_hold_seconds: float = Field(
        7 * 24 * 3600.0, gt=0, description="how long after its end an ended game's room is "
        "kept (past its expiry) while the database cannot take the game; after that the "
        "room expires and that game is not archived (counted in /metrics)"
    )
    archive_concurrency: int = Field(
        4, ge=1, description="games this process writes to the database at once (the rest "
        "of the games it claimed wait their turn, their claims renewed)"
    )
    archive_timeout_seconds: float = Field(
        30.0, gt=0, description="longest time one try to archive a game may take before it "
        "counts as failed (and is tried again later)"
    )
    answer_window_seconds: float = Field(
        15.0, gt=0, description="Muggins: time opponents have to answer an announcement"
    )
    bot_delay_seconds: float = Field(0.8, ge=0, description="pause before a computer seat acts")
    computer_processes: int = Field(
        1, ge=0, le=64, description="worker processes in which each server process's "
        "expert computer players decide, off the event loop (0: on the event loop); made "
        "at the first expert move")
    hints_in_flight: int = Field(
        1, ge=0, description="hints (the expert's suggestion, asked with hint) one server "
        "process makes at once, beside its expert computer players' moves (0: no bound; "
        "raise it with computer_processes); "
        "a hint asked beyond it is answered error busy with retry_after. A repeat for the "
        "same room version and seat is answered from the one made and costs nothing")
    hints_per_minute: int = Field(
        30, ge=0, description="hints one client address may have made per minute, over "
        "every server process (all at once at most, then one every 2 s; 0: no limit); a "
        "repeat of a hint already made is not counted; more get error too_many_hints with "
        "retry_after")
    grading_sweep_interval_seconds: float = Field(
        300.0, ge=0, description="how often each process grades finished games that have "
        "no grading yet and ended 2 min to 6 h ago (a replica killed before grading them, "
        "a backlog), give or take a quarter; 0: only once after start, over the newest 50 "
        "of the whole archive")
    takeover_grace_seconds: float = Field(
        60.0, gt=0, description="default time a human seat may stay disconnected before a "
        "standard computer plays it (a room setting overrides it)"
    )
    max_frame_bytes: int = Field(16 * 1024, ge=256, description="largest client frame accepted")
    sweep_interval_seconds: float = Field(
        0.1, gt=0, description="how often each process looks for due deadlines"
    )
    deadline_lease_seconds: float = Field(
        5.0, gt=0, description="a claimed deadline becomes claimable again after this if "
        "its claimer dies (renewed every third of it while the handler runs)"
    )
    presence_lease_seconds: float = Field(
        6.0, gt=0, description="a server process that stops heartbeating (every third of "
        "this) counts as dead after this long, and its connections stop counting"
    )
    catchup_interval_seconds: float = Field(
        4.0, gt=0, description="how often a process checks the versions of the rooms it "
        "follows and catches up on missed updates"
    )
    purge_interval_seconds: float = Field(
        2.0, gt=0, description="how often the in-memory store drops expired rooms (an "
        "expiry heap makes it cheap; checked on the upkeep beat, so at most that often)"
    )
    record_cache_rooms: int = Field(
        10_000, ge=0, description="most room records this process keeps in its cache of "
        "followed rooms (least recently used dropped first; a room with no local session "
        "is never kept)"
    )
    max_body_bytes: int = Field(
        16 * 1024, ge=1024, description="largest HTTP request body accepted, in bytes (413 "
        "too_large past it, refused by Content-Length before reading; the connection is "
        "then closed)"
    )
    gc_freeze: bool = Field(
        True, description="run the garbage collector on a clock and freeze what survives "
        "its young passes, so no pass walks the rooms' long-lived objects (server.gcpolicy); "
        "false: Python's defaults"
    )
    gc_young_interval_seconds: float = Field(
        0.05, gt=0, description="seconds between the collector's young passes (gc_freeze)"
    )
    gc_full_pass_seconds: float = Field(
        1800.0, gt=0, description="how often the complete garbage-collector pass runs "
        "(over everything, frozen objects included) when gc_freeze is on"
    )
    turn_timeouts_before_standin: int = Field(
        3, ge=0, description="turn-clock timeouts in a row after which a standard computer "
        "stands in for a connected player (0: never)"
    )
    rated_turn_seconds: float = Field(
        60.0, gt=0, le=86400, description="a rated room's turn clock when its creator asks "
        "for none, seconds (docs/rules.md §9.2)"
    )
    rated_turn_seconds_min: float = Field(
        30.0, gt=0, le=86400, description="the shortest turn clock a rated room may have, "
        "seconds (shorter: rated_turn_clock)"
    )
    rated_turn_seconds_max: float = Field(
        120.0, gt=0, le=86400, description="the longest turn clock a rated room may have, "
        "seconds (longer: rated_turn_clock)"
    )
    public_url: str | None = Field(
        None, description="base URL for share links (default: from the request's Host)"
    )
    allowed_origins: Annotated[list[str], NoDecode] = Field(
        ["loopback"], description="web origins whose pages may open /ws and POST /api/rooms "
        "(and get CORS answers), comma-separated: exact origins (https://cards.example), "
        "'loopback' (localhost, 127.0.0.0/8, [::1], any port), 'null', or '*' for all; the "
        "server's own origin is always allowed, and so is a request with no Origin header "
        "(not a browser) (server.origins)"
    )
    frame_ancestors: str = Field(
        "'none'", description="who may show the web table's pages in a frame: the "
        "Content-Security-Policy frame-ancestors sources, space-separated ('none': nobody; "
        "'self': this server's own pages; or origins such as https://cards.example); "
        "server.web.headers"
    )
    presence_frame_interval_seconds: float = Field(
        0.5, ge=0, description="a room's presence frames go out at most this often: a "
        "change within the interval is sent at its end with the seat's state then (the last "
        "state always goes out; a connection is never sent what it already knows); 0: a "
        "frame per change"
    )
    send_queue_limit: int = Field(
        1000, ge=1, description="frames queued for one slow connection before it is dropped"
    )
    # -- limits (docs/protocol.md "Limits"); a 0 turns the limit off where it says so ---------
    max_inflight_actions: int = Field(
        64, ge=0, description="admission control: client actions this process works on at "
        "once; more wait their turn (0: no limit; server/overload.py)"
    )
    max_waiting_actions: int = Field(
        256, ge=0, description="admission control: client actions that may wait for their "
        "turn at once; one more is refused at once (reject busy, with retry_after)"
    )
    action_queue_seconds: float = Field(
        0.5, gt=0, description="admission control: how long a client action may wait for "
        "its turn before it is refused (reject busy, with retry_after); nothing is applied. "
        "Also how long a late event loop keeps new actions refused"
    )
    overload_lag_seconds: float = Field(
        0.25, ge=0, description="admission control: when a 50 ms probe timer wakes later "
        "than this, new client actions are refused for action_queue_seconds (0: the event "
        "loop is not watched)"
    )
    frame_rate: float = Field(
        20.0, ge=0, description="client frames per second a connection may send on average "
        "(token bucket refill rate; 0: no limit). Excess frames are refused (rate_limited)"
    )
    frame_burst: int = Field(
        40, ge=1, description="client frames a connection may send at once (token bucket size)"
    )
    flood_refusals: int = Field(
        100, ge=1, description="a connection with more rate-limited frames than this within "
        "flood_window_seconds is closed (1008)"
    )
    flood_window_seconds: float = Field(
        10.0, gt=0, description="the window flood_refusals counts refused frames in"
    )
    max_connections_per_address: int = Field(
        100, ge=0, description="open WebSocket connections one client address may hold on "
        "this process (0: no limit); more are refused at the handshake (429 "
        "too_many_connections)"
    )
    rooms_per_minute: int = Field(
        30, ge=0, description="rooms one client address may create per minute, by HTTP or "
        "create_room, over every server process with Redis (0: no limit); more get "
        "too_many_rooms"
    )
    failed_joins_per_minute: int = Field(
        30, ge=0, description="joins one client address may have refused (unknown room, bad "
        "token, seat taken, ...) per minute, over every server process with Redis (0: no "
        "limit); past it every "
        "join from it gets too_many_joins until the budget refills"
    )
    queue_joins_per_minute: int = Field(
        10, ge=0, description="quick-match queue_join s one player may make per minute, "
        "over every server process (0: no limit); more get too_many_queue_joins"
    )
    queue_joins_per_minute_per_address: int = Field(
        60, ge=0, description="quick-match queue_join s one client address may make per "
        "minute, over every server process (0: no limit); more get "
        "too_many_address_queue_joins"
    )
    queue_computer_offer_seconds: float = Field(
        20.0, ge=0, description="after waiting this long in a quick-match queue a player "
        "is offered the computer (queue_status.computer_offer, queue_accept_computer)"
    )
    queue_match_interval_seconds: float = Field(
        0.5, gt=0, description="how often the process that holds the matcher's lease "
        "matches the queues"
    )
    queue_poll_interval_seconds: float = Field(
        0.25, gt=0, description="how often a process polls the store for its waiting "
        "players (results, their queue's count; its heartbeat)"
    )
    queue_status_interval_seconds: float = Field(
        2.0, gt=0, description="how often a waiting connection is sent queue_status"
    )
    queue_owner_lease_seconds: float = Field(
        3.0, gt=0, description="the waits of a process that has not polled for this long "
        "(it died) are dropped from the queues"
    )
    room_reads_per_minute: int = Field(
        120, ge=0, description="room summaries (GET /api/rooms/{id}) one client address may "
        "read per minute, over every server process with Redis (all at once at most, then two "
        "a second; 0: no limit); more get 429 too_many_room_reads"
    )
    history_reads_per_minute: int = Field(
        60, ge=0, description="player profiles and pages of a player's games (GET "
        "/api/players/{id}, GET /api/players/{id}/games) one client address may read per "
        "minute (all at once at most, then one a second; 0: no limit); more get 429 "
        "too_many_history_reads"
    )
    game_reads_per_minute: int = Field(
        60, ge=0, description="archived games (GET /api/games/{id}) one client address may "
        "read per minute (all at once at most, then one a second; found or not, every "
        "request counts; 0: no limit); more get 429 too_many_game_reads"
    )
    leaderboard_reads_per_minute: int = Field(
        60, ge=0, description="leaderboard pages (GET /api/leaderboards/{kind}) one client "
        "address may read per minute (all at once at most, then one a second; 0: no "
        "limit); more get 429 too_many_leaderboard_reads"
    )
    lobby_reads_per_minute: int = Field(
        120, ge=0, description="lobby listings (GET /api/lobby) one client address may read "
        "per minute (all at once at most, then two a second; 0: no limit); more get 429 "
        "too_many_lobby_reads"
    )
    max_lobby_subscriptions_per_address: int = Field(
        20, ge=0, description="connections of one client address that may follow the lobby "
        "(lobby_subscribe) at once on this process (0: no limit); one more gets "
        "too_many_lobby_subscriptions"
    )
    max_lobby_subscriptions_per_player: int = Field(
        5, ge=0, description="connections of one player (hello.player) that may follow the "
        "lobby at once on this process (0: no limit); one more gets "
        "too_many_player_lobby_subscriptions"
    )
    lobby_poll_seconds: float = Field(
        0.5, gt=0, le=10, description="how often a process with lobby followers reads the "
        "lobby index's version (one small read) and, when it moved, the index, and sends "
        "its followers what changed (docs/architecture.md \"The lobby\")"
    )
    rating_provisional_games: int = Field(
        10, ge=0, le=1000, description="a rating is provisional (shown with a mark) for "
        "its first this many rated games or matches"
    )
    rating_history_size: int = Field(
        50, ge=1, le=500, description="the newest changes of each rating a player's "
        "ratings (GET /api/players/{id}/ratings) list"
    )
    history_page_size: int = Field(
        20, ge=1, le=100, description="games on a page of GET /api/players/{id}/games when "
        "the request names no limit"
    )
    history_max_page_size: int = Field(
        50, ge=1, le=100, description="the most games a page of GET /api/players/{id}/games "
        "may ask for (limit=); more get 400 bad_page_request"
    )
    players_per_hour: int = Field(
        20, ge=0, description="players one client address may make per hour (POST "
        "/api/players; all at once at most, then one every 3 minutes; 0: no limit); more "
        "get 429 too_many_players. Counted across processes with Redis"
    )
    link_codes_per_hour: int = Field(
        10, ge=0, description="one-time link codes one player may make per hour (POST "
        "/api/players/me/link; 0: no limit); more get 429 too_many_link_codes"
    )
    code_tries_per_hour: int = Field(
        30, ge=0, description="wrong link codes one client address may enter per hour (POST "
        "/api/players/link; 0: no limit); past it every try gets 429 too_many_code_tries"
    )
    challenge_seconds: float = Field(
        60.0, ge=5, le=3600, description="how long a challenge waits for its answer before "
        "it expires (challenge_expired)"
    )
    challenges_per_minute: int = Field(
        10, ge=0, description="challenges one player may make per minute (all at once at "
        "most, then one every 6 s; 0: no limit); more get too_many_challenges. Counted "
        "across processes with Redis"
    )
    address_challenges_per_minute: int = Field(
        20, ge=0, description="challenges one client address may make per minute, whatever "
        "the players (0: no limit); more get too_many_address_challenges"
    )
    max_pending_challenges: int = Field(
        3, ge=0, description="challenges one player may have waiting for an answer at once "
        "(0: no limit); more get too_many_pending_challenges"
    )
    chat_keep: int = Field(
        100, ge=1, le=10000, description="chat messages a room keeps (a joining client gets "
        "them, the archive keeps a game's); older ones are dropped"
    )
    chat_max_chars: int = Field(
        200, ge=1, le=1000, description="characters of one chat message's free text; "
        "longer is chat_too_long"
    )
    chat_player_rate: float = Field(
        1.0, ge=0, description="chat messages one player may say a second on average (0: "
        "no limit), per process; more get chat_rate_limited"
    )
    chat_player_burst: int = Field(
        5, ge=1, description="chat messages one player may say at once before "
        "chat_player_rate applies"
    )
    chat_room_rate: int = Field(
        10, ge=0, description="chat messages one room takes a second, all its players and "
        "spectators together (0: no limit), counted by the room store; more get "
        "room_chat_busy"
    )
    chat_spectator_rate: int = Field(
        3, ge=0, description="chat messages the spectators of one room say a second among "
        "themselves during a game (their own budget, apart from chat_room_rate's; 0: no "
        "limit); each goes to every spectator, so this bounds the fan-out of a crowd; more "
        "get room_chat_busy"
    )
    max_mutes: int = Field(
        500, ge=0, description="players one player may mute (0: no limit); more get "
        "too_many_mutes"
    )
    reports_per_hour: int = Field(
        10, ge=0, description="chat reports one player may file in an hour (0: no limit); "
        "more get report_limited"
    )
    admin_token: str | None = Field(
        None, description="the moderators' token: the admin API "
        "(/api/admin/...) takes Authorization: Bearer <admin_token>; unset, the API is off "
        "(404 admin_off; empty is unset). At least 16 characters, no spaces"
    )
    moderation_refresh_seconds: float = Field(
        5.0, gt=0, le=300, description="how often each process reads the silences and "
        "bans in force from the database (a ban reaches another process's connections "
        "within this)"
    )
    max_blocks: int = Field(
        500, ge=0, description="players one player may block (0: no limit); more get 409 "
        "too_many_blocks"
    )
    link_code_tries: int = Field(
        5, ge=1, description="wrong tries one link code survives: the one that reaches this "
        "kills the code (too_many_tries)"
    )
    link_code_ttl_seconds: float = Field(
        600.0, gt=0, le=86400, description="how long a one-time link code works (once)"
    )
    hello_timeout_seconds: float = Field(
        5.0, gt=0, description="a connection that has not said hello this long after the "
        "handshake is closed (1008)"
    )
    idle_seconds: float = Field(
        300.0, ge=0, description="a connection without a seat that sends no frame this long "
        "is closed (1001; 0: never)"
    )
    request_timeout_seconds: float = Field(
        10.0, gt=0, description="an HTTP request (or WebSocket handshake) must arrive whole, "
        "headers and body, this long after its connection opens (or after its first byte, "
        "on a kept-alive connection); else the socket is closed"
    )
    max_header_bytes: int = Field(
        64 * 1024, ge=4096, description="the longest request line and headers of an HTTP "
        "request (or WebSocket handshake) accepted, in bytes; past it the server answers "
        "431 headers_too_large and closes the connection"
    )
    connections_per_minute: int = Field(
        120, ge=0, description="new WebSocket connections one client address may open per "
        "minute on this process (all at once at most; 0: no limit); more are refused at the "
        "handshake (429 too_many_connections)"
    )
    wire_frame_rate: float = Field(
        200.0, ge=0, description="WebSocket frames of any kind (control frames and fragments "
        "included) a connection may send per second on average (0: no limit); past this "
        "budget the connection is closed (1008)"
    )
    wire_frame_burst: int = Field(
        400, ge=1, description="WebSocket frames of any kind a connection may send at once"
    )
    wire_bytes_rate: int = Field(
        256 * 1024, ge=0, description="bytes of WebSocket frames a connection may send per "
        "second on average (0: no limit); past this budget the connection is closed (1008)"
    )
    wire_bytes_burst: int = Field(
        2 * 1024 * 1024, ge=1, description="bytes of WebSocket frames a connection may send "
        "at once"
    )
    ws_close_timeout_seconds: float = Field(
        2.0, gt=0, description="how long the server waits for a client's answer to its "
        "close frame before dropping the socket"
    )
    forwarded_allow_ips: str = Field(
        "", description="comma-separated addresses or networks of proxies trusted to name "
        "the client in X-Forwarded-For (and the scheme in X-Forwarded-Proto), or '*' for "
        "every peer (only when nothing but the proxy can reach the server); empty (the "
        "default): no proxy is trusted and the client address is the peer's. The client is "
        "the right-most entry that is not a listed proxy; an entry that is not an IP "
        "address is never taken (server.proxies)"
    )
    ipv6_prefix_length: int = Field(
        64, ge=1, le=128, description="per-address limits count an IPv6 client by its "
        "network of this many bits (64: a /64, what one home or host is given; 128: each "
        "address); IPv4 clients, and IPv4-mapped IPv6 ones, by their whole address"
    )
    max_spectators_per_room: int = Field(
        200, ge=0, description="connections that may watch one room without a seat (0: no "
        "limit); one more is refused (too_many_spectators). Exact per process; across "
        "processes on Redis counted per process under its presence owner, atomically, so "
        "the room's total holds too (a dead process's spectators count until it is reaped)"
    )

    # Passkeys (server.passkeys, issue 18 point 2)
    passkey_rp_id: str | None = Field(
        None, description="the WebAuthn relying party id passkeys are made for: a domain "
        "(cards.example), never an IP address; unset: the host of public_url, else the host "
        "the request was sent to (localhost in development). Passkeys made for one id work "
        "only there: set it before players make any"
    )
    passkey_rp_name: str = Field(
        "Cribbage", min_length=1, max_length=64,
        description="the site's name a browser shows when it makes a passkey"
    )
    passkey_attempts_per_minute: int = Field(
        20, ge=0, description="passkey requests one client address may make per minute "
        "(options, sign-ins and registrations, verified or not; all at once at most, then one "
        "every 3 s; 0: no limit); more get 429 too_many_passkey_attempts. Counted across "
        "every server process with Redis"
    )
    passkey_challenge_seconds: float = Field(
        300.0, gt=0, le=3600, description="how long a passkey challenge (the options of one "
        "sign-in or registration) may be answered; it is used once at most"
    )
    max_passkeys_per_player: int = Field(
        10, ge=1, le=100, description="passkeys one player may hold; one more is refused "
        "(409 too_many_passkeys)"
    )

    @field_validator("admin_token", mode="before")
    @classmethod
    def _check_admin_token(cls, value: Any) -> Any:
        """Empty (``CRIBBAGE_ADMIN_TOKEN=``, as the compose files pass it when unset) is
        unset; else at least 16 characters and no whitespace (it is sent in a header)."""
        if value is None or (isinstance(value, str) and not value.strip()):
            return None
        if not isinstance(value, str) or len(value) < 16 or any(c.isspace() for c in value):
            raise ValueError("admin_token: at least 16 characters, no spaces (e.g. "
                             "openssl rand -hex 24)")
        return value

    @field_validator("forwarded_allow_ips")
    @classmethod
    def _check_proxies(cls, value: str) -> str:
        """Every entry must be ``*``, an IP address or a network."""
        TrustedProxies(value)
        return value

    @field_validator("frame_ancestors")
    @classmethod
    def _check_frame_ancestors(cls, value: str) -> str:
        """One CSP source list: not empty, no ``;`` or ``,`` (which would end the directive
        or the header) and nothing but printable ASCII."""
        text = " ".join(value.split())
        if not text or any(c in text for c in ";,") or not all(" " <= c <= "~" for c in text):
            raise ValueError("frame_ancestors: CSP sources separated by spaces, e.g. 'none'")
        return text

    @field_validator("allowed_origins", mode="before")
    @classmethod
    def _split_origins(cls, value: Any) -> Any:
        """``CRIBBAGE_ALLOWED_ORIGINS=a,b`` (or a JSON list) -> ``["a", "b"]``; each entry
        must be ``*``, ``loopback``, ``null`` or an origin."""
        if isinstance(value, str):
            text = value.strip()
            if text.startswith("["):
                value = json.loads(text)
            else:
                value = [part.strip() for part in text.split(",") if part.strip()]
        if isinstance(value, list | tuple):
            return [normalize(str(v)) for v in value]
        return value
