// Hand-written declarations of the public API of @cribbage/client. The message and payload
// types come from ./protocol.d.ts, which is generated from docs/protocol.schema.json.

import type * as P from "./protocol.js";

export type * from "./protocol.js";
export {
  applyPatch,
  PatchError,
  parsePointer,
  getPointer,
  cloneJson,
  jsonEqual,
  type JsonPatchOperation,
} from "./patch.js";

// -- names for the parts of messages an app works with ------------------------------------

/** A seat's view of the game (`engine.view` plus the server's `turn_clock`). */
export type View = NonNullable<P.Snapshot["view"]>;
/** An event of an update (engine events and the server's `seat_taken`, …). */
export type GameEvent = P.Update["events"][number];
/** An engine action, as `act` takes it. */
export type Action = P.Act["action"];
/** A room's status. */
export type RoomStatus = P.Snapshot["status"];
/** The options a room was created with. */
export type GameOptions = P.GameOptionsModel;
/** The settings asked for at creation. */
export type RoomSettingsRequest = P.RoomSettingsModel;
/** A reject's code (an engine `RulesError` code or a server code). */
export type RejectCode = P.Reject["code"];
/** The answer to an `act`. */
export type ActAnswer = P.Ack | P.Reject;

/** `idle` (not started), `connecting` (first connection), `open` (welcomed and, when in a
 * room, holding its snapshot), `reconnecting` (waiting to connect again), `closed` (for
 * good). */
export type ConnectionState = "idle" | "connecting" | "open" | "reconnecting" | "closed";

/** Which frames a msgpack codec must handle: `@msgpack/msgpack` fits as it is. */
export interface MsgpackImpl {
  encode(value: unknown, options?: { ignoreUndefined?: boolean }): Uint8Array;
  decode(data: Uint8Array): unknown;
}

/** The WebSocket surface the client uses: the browser's, React Native's, Node 22's global
 * one and the `ws` package's all fit. */
export interface WebSocketLike {
  readonly readyState: number;
  readonly protocol: string;
  binaryType: string;
  onopen: ((event: unknown) => void) | null;
  onmessage: ((event: { data: unknown }) => void) | null;
  onerror: ((event: unknown) => void) | null;
  onclose: ((event: { code: number; reason: string; wasClean: boolean }) => void) | null;
  send(data: string | Uint8Array | ArrayBuffer): void;
  close(code?: number, reason?: string): void;
}
export type WebSocketConstructor = new (url: string, protocols?: string | string[]) => WebSocketLike;

export interface BackoffPolicy {
  /** First delay, ms (default 250). */
  baseDelayMs?: number;
  /** Largest delay, ms (reconnect: 10 000; act retries: 4 000). */
  maxDelayMs?: number;
  /** Growth per attempt (default 2). */
  factor?: number;
  /** Share of each delay taken off at random, 0..1 (default 0.5). */
  jitter?: number;
}

export interface ReconnectPolicy extends BackoffPolicy {
  /** Reconnects in a row before giving up (default Infinity). */
  maxAttempts?: number;
  /** Close codes that are retried (default `RECONNECT_CLOSE_CODES`). Others are fatal. */
  closeCodes?: readonly number[];
}

export interface ActRetryPolicy extends BackoffPolicy {
  /** Re-sends after a retryable reject before it is handed to the app (default 6). */
  maxRetries?: number;
  /** Reject codes that are retried with the same action id (default `RETRY_CODES`). */
  codes?: readonly string[];
}

export interface ClientOptions {
  /** The server's WebSocket URL, e.g. `wss://cribbage.example/ws`. */
  url: string;
  /** Display name for `hello` (1–32 characters). */
  name: string;
  /** `json` (default, text frames) or `msgpack` (binary frames). */
  encoding?: "json" | "msgpack";
  /** A player token from an earlier `welcome`, to come back as the same player. */
  playerToken?: string | null;
  /** A player (`POST /api/players`) for `hello`: its seats are its own from any device. */
  player?: { id: string; secret: string } | null;
  /** The language the app shows (`hello.language`): the default language of the tables
   * this client creates. */
  language?: "en" | "da" | "sv";
  /** The WebSocket class (default: the global one, else the `ws` package). */
  WebSocketImpl?: WebSocketConstructor;
  /** The msgpack codec (default: `@msgpack/msgpack`, loaded only for msgpack). */
  msgpack?: MsgpackImpl;
  /** Free text sent in `hello` (default `cribbage-js/<version>`). */
  client?: string;
  /** Milliseconds between pings while connected (default 20 000; 0: never). */
  pingIntervalMs?: number;
  /** A ping unanswered this long (ms) drops the connection and reconnects (default 10 000). */
  pongTimeoutMs?: number;
  /** After a pong tells of a newer version, wait this long (ms) for the update before
   * resyncing (default 1 000). */
  pongGraceMs?: number;
  /** Time (ms) a request (`createRoom`, `join`, `hint`, …) may wait for its answer
   * (default 20 000; 0: forever). */
  requestTimeoutMs?: number;
  reconnect?: ReconnectPolicy;
  actRetry?: ActRetryPolicy;
  /** Prefix of generated action ids (default: 12 random characters). */
  actionIdPrefix?: string;
  /** Random numbers 0..1 for the jitter (default Math.random). */
  random?: () => number;
}

export interface ClientEventMap {
  /** The connection state changed. */
  state: { state: ConnectionState; previous: ConnectionState };
  /** A connection closed. `willReconnect` false: the client is closed for good. */
  close: { code: number; reason: string; wasClean: boolean; willReconnect: boolean; delayMs?: number; byApp?: boolean };
  welcome: P.Welcome;
  /** A snapshot was taken in (after `join`, `resync`, a reconnect, or sent by the server). */
  snapshot: P.Snapshot;
  /** An update was applied (the client's `view` and `version` are already its). */
  update: P.Update;
  /** The view changed. */
  view: { view: View | null; version: number; cause: "snapshot" | "update" };
  /** One event, with the version it came in. Events of a snapshot (`fromSnapshot`) come
   * from its `missed` list: versions the connection did not get as updates. */
  event: { event: GameEvent; version: number; fromSnapshot: boolean };
  /** The seats changed (an update, a snapshot or a presence change). */
  seats: { seats: P.SeatInfo[]; version: number };
  /** The room's status changed. */
  status: { status: RoomStatus; previous: RoomStatus | null };
  presence: P.Presence;
  hint: P.Hint;
  history: P.History;
  /** The lobby's tables (newest first) at the first list and after each `lobby_update`. */
  lobby: { tables: P.LobbyTable[]; update: P.LobbyUpdate | null };
  /** Quick match: how a wait stands, its end without a table, the table found. */
  queue_status: P.QueueStatus;
  queue_left: P.QueueLeft;
  matched: P.Matched;
  /** Table talk: a message said at the table (this client's own included), one hidden by a
   * moderator, the answer to `chatMute`/`chatUnmute`, the answer to `chatReport`. */
  chat: P.Chat;
  chat_hidden: P.ChatHidden;
  chat_muted: P.ChatMuted;
  chat_reported: P.ChatReported;
  room_created: P.RoomCreated;
  pong: P.Pong;
  /** A final `ack` of an act of this client. */
  ack: P.Ack;
  /** A final `reject` of an act of this client (retries exhausted or not retryable). */
  reject: P.Reject;
  /** A retryable reject; the act is sent again (same id) after `delayMs`. */
  act_retry: { actionId: string; code: string; retry: number; delayMs: number };
  /** `createRoom` sends its request again (same `request_id`) after `code`. */
  create_retry: { requestId: string; code: string; retry: number; delayMs: number };
  /** A join answered `store_unavailable`/`outcome_unknown`/`busy` is asked again. */
  join_retry: { room: string; code: string; retry: number; delayMs: number };
  /** The client asked for a snapshot: `gap` (an update skipped a version), `patch_failed`,
   * `behind` (a pong told of a newer version), `app` (`resync()`). */
  resync: { reason: "gap" | "patch_failed" | "behind" | "app"; version: number; [detail: string]: unknown };
  /** A server `error` no request of the app was waiting for, a frame that could not be read,
   * a failed resume, or (`fatal: true`) the reason the client closed. */
  error: {
    code: string;
    message: string;
    fatal: boolean;
    ref?: string | null;
    closeCode?: number;
    frame?: P.Error;
    error?: unknown;
  };
  /** Every frame received, decoded, before the client handles it. */
  message: P.ServerMessage;
  /** Every message sent. */
  sent: P.ClientMessage;
}

export declare const LIBRARY_VERSION: string;
/** Close codes after which the client reconnects: 1000 (not from `close()`), 1001, 1005,
 * 1006, 1011, 1012, 1013, 1014. */
export declare const RECONNECT_CLOSE_CODES: readonly number[];
/** `outcome_unknown`, `store_unavailable`, `busy`. */
export declare const RETRY_CODES: readonly string[];
export declare const SUBPROTOCOLS: Readonly<{ json: "cribbage.v1.json"; msgpack: "cribbage.v1.msgpack" }>;

/** The delay before retry `attempt` (0-based) under `policy`. */
export declare function backoffDelay(attempt: number, policy: Required<BackoffPolicy>, random?: () => number): number;

export interface Codec {
  readonly encoding: "json" | "msgpack";
  readonly binary: boolean;
  encode(message: unknown): string | Uint8Array;
  decode(data: unknown): unknown;
}
export declare const jsonCodec: Codec;
export declare function msgpackCodec(impl: MsgpackImpl): Codec;

/**
 * An error with a stable `code`: a server error code (`room_not_found`, `seat_taken`, …)
 * or the library's own: `closed`, `connection_lost`, `not_connected`, `not_seated`,
 * `superseded`, `fatal_close`, `reconnect_exhausted`, `timeout`, `bad_frame`,
 * `no_websocket`, `no_msgpack`, `bad_option`.
 */
export declare class CribbageError extends Error {
  readonly name: "CribbageError";
  readonly code: string;
  /** The server's `error` frame, when the server refused. */
  readonly frame?: P.Error;
  /** The WebSocket close code, for `fatal_close` and `reconnect_exhausted`. */
  readonly closeCode?: number;
  constructor(code: string, message: string, extra?: { cause?: unknown; frame?: P.Error; closeCode?: number });
}

export interface PendingAction {
  actionId: string;
  action: Action;
  /** Retries after retryable rejects so far. */
  retries: number;
  /** Times the act was sent (more than 1 after a reconnect or a retry). */
  sends: number;
}

export declare class CribbageClient {
  constructor(options: ClientOptions);

  readonly connectionState: ConnectionState;
  /** From `welcome`: keep it (e.g. in localStorage) to come back as the same player. */
  readonly playerToken: string | null;
  /** The player `hello` presents (the `player` option), or null. */
  readonly player: { id: string; secret: string } | null;
  readonly welcome: P.Welcome | null;
  /** Add to `Date.now()` to get the server's clock (estimated from pongs). */
  readonly serverClockOffsetMs: number;
  readonly room: string | null;
  /** This client's seat, or null for a spectator (or before a join). */
  readonly seat: number | null;
  /** The seat's token: keep it to resume the seat from another connection. */
  readonly seatToken: string | null;
  /** The room version of `view` (-1 before the first snapshot). */
  readonly version: number;
  /** This seat's view (null before the game starts). Read-only: every change makes a new
   * object, sharing the parts that did not change. */
  readonly view: View | null;
  readonly seats: P.SeatInfo[];
  readonly status: RoomStatus | null;
  readonly options: P.Snapshot["options"] | null;
  readonly roomSettings: P.RoomSettings | null;
  /** Whether the server sends legal actions (`view.legal`); until it does,
   * `legalActions()` is always empty and the app must work them out itself. */
  readonly serverSendsLegal: boolean;
  /** The public tables waiting for players while following the lobby, else null. */
  readonly lobby: P.LobbyTable[] | null;

  on<K extends keyof ClientEventMap>(type: K, fn: (detail: ClientEventMap[K]) => void): () => void;
  once<K extends keyof ClientEventMap>(type: K, fn: (detail: ClientEventMap[K]) => void): () => void;
  off<K extends keyof ClientEventMap>(type: K, fn: (detail: ClientEventMap[K]) => void): void;

  /** Connect and say hello; resolves with the `welcome` once `open`. */
  connect(): Promise<P.Welcome>;
  /** Close for good (1000); resolves once the socket has closed. */
  close(code?: number, reason?: string): Promise<void>;

  /** Create a room. `requestId` (16..64 printable ASCII characters; default: a random
   * UUID) makes it safe to repeat: `outcome_unknown`, `store_unavailable`, `busy`, a lost
   * connection or no answer in time are retried with the same id (`actRetry`), and the
   * server answers a repeat with the same room and creator token. */
  createRoom(request?: {
    options?: GameOptions;
    computers?: Record<string, "easy" | "standard">;
    room?: RoomSettingsRequest;
    requestId?: string;
  }): Promise<P.RoomCreated>;
  /** A fresh request id for `createRoom` (a random UUID). */
  newRequestId(): string;
  /** Take or resume `seat` (null: watch). Remembered and resumed after reconnects.
   * `token`: the token to take or resume the seat with; `since`: the last version the app
   * saw of the room (coming back from saved state): the snapshot's `missed` events then
   * come as `event`s with `fromSnapshot: true`. */
  join(room: string, seat?: number | null, options?: { token?: string; since?: number }): Promise<P.Snapshot>;
  /** Stop following the room (the seat stays yours). */
  leave(): Promise<P.Left | null>;
  /** Submit an action; resolves with the final `ack` or `reject`. */
  act(action: Action, options?: { actionId?: string }): Promise<ActAnswer>;
  /** A fresh action id (unique per client, game and seat). */
  newActionId(): string;
  pendingActions(): PendingAction[];
  hint(): Promise<P.Hint>;
  /** One page of the current game's story, oldest first (see README, "The story"). */
  history(options?: { before?: number; limit?: number; public?: boolean }): Promise<P.History>;
  /** Every page of the current game's story, from the version that started the game. */
  historyAll(options?: { public?: boolean; pageSize?: number }): Promise<{
    room: string; game: number; first: number; versions: P.MissedVersion[]; public: boolean;
  }>;
  setComputer(seat: number, level: "easy" | "standard", creatorToken: string, room?: string): Promise<void>;
  /** Follow the lobby (followed again after a reconnect); the "lobby" event tells. */
  lobbySubscribe(filters?: { players?: 2 | 3 | 4; partnerships?: boolean; language?: "en" | "da" | "sv"; rated?: boolean }): void;
  lobbyUnsubscribe(): void;
  /** Quick match: wait for a table (events `queue_status`, `matched`, `queue_left`); needs a
   * connection that said hello with a player. Whether it was sent. */
  queueJoin(table?: P.QueueTable): boolean;
  /** Stop waiting (`queue_left`, or `matched` when too late). */
  queueLeave(): boolean;
  /** Take the computer offer (`queue_status.computer_offer`): answered by `matched`. */
  queueAcceptComputer(): boolean;
  /** Table talk: a preset id or free text (a `chat` event for every reader; refusals as
   * `error` with `ref: "chat"`). Whether it was sent. */
  chat(message: { preset?: P.ChatSay["preset"]; text?: string }): boolean;
  /** Mute (or with `block`, block) the author of a message: answered by `chat_muted`. */
  chatMute(message: number, options?: { block?: boolean }): boolean;
  /** Hear a muted player again: answered by `chat_muted` (`muted` false). */
  chatUnmute(player: string): boolean;
  /** Report a message to the moderators: answered by `chat_reported`. */
  chatReport(message: number, reason?: "abuse" | "spam" | "cheating" | "other", note?: string): boolean;
  /** Ask for a fresh snapshot. */
  resync(): void;
  ping(): Promise<P.Pong>;

  /** This seat's legal actions (`view.legal`); `[]` while the server does not send them. */
  legalActions(): Action[];
  /** The turn clock: seat (as text) -> Unix ms deadline (server clock). */
  turnDeadlines(): Record<string, number>;
  /** `seat`'s (default: this seat's) turn deadline in Unix ms, or null. */
  turnDeadline(seat?: number | null): number | null;
  /** Milliseconds left before `seat`'s deadline (clock-corrected), or null. */
  msUntilTurnDeadline(seat?: number | null, now?: number): number | null;
}
