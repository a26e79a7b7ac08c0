// The player this browser is (issue 18): an identity without sign-up, made on the first
// visit (POST /api/players) and kept in localStorage["cribbage.player"] as {"id", "secret"}
// (the same key and shape passkeys.js reads and writes). Every WebSocket hello presents it
// (room.js); the HTTP API takes it as `Authorization: Player <id>.<secret>` (docs/protocol.md,
// "Players"). Without a database the server makes no players: then the page goes on without
// one, and seat tokens do what they always did.

import { codeText } from "./describe.js";
import { lang, t } from "./i18n.js";
import { loadName, saveName } from "./storage.js";

const PLAYER_KEY = "cribbage.player";
/** Keys of this site that survive "Delete my player" (the page's own switches). */
const KEPT_ON_DELETE = new Set(["cribbage.lang", "cribbage.sound"]);

/** The player kept in this browser ({id, secret}), or null. */
export function loadPlayer() {
  try {
    const value = JSON.parse(localStorage.getItem(PLAYER_KEY) || "null");
    return value && typeof value.id === "string" && typeof value.secret === "string"
      ? { id: value.id, secret: value.secret } : null;
  } catch {
    return null;
  }
}

/** Keep `player` ({id, secret, ...}: only id and secret are stored) in this browser. */
export function savePlayer(player) {
  try {
    localStorage.setItem(PLAYER_KEY, JSON.stringify({ id: player.id, secret: player.secret }));
  } catch {
    /* private mode: this page only */
  }
}

/** Forget the kept player (a deleted one, or one the server does not know). */
export function forgetPlayer() {
  try {
    localStorage.removeItem(PLAYER_KEY);
  } catch {
    /* nothing kept */
  }
}

/** Forget everything this site kept in the browser but the language and sound switches. */
export function forgetEverything() {
  try {
    for (const key of Object.keys(localStorage)) {
      if (key.startsWith("cribbage.") && !KEPT_ON_DELETE.has(key)) localStorage.removeItem(key);
    }
  } catch {
    /* nothing kept */
  }
}

/** An API call failed: `code` is the server's error code (or null), the message is the
 * reader's language. */
export class PlayerError extends Error {
  constructor(message, code = null, status = 0) {
    super(message);
    this.code = code;
    this.status = status;
  }
}

/**
 * `method path` with `body` (JSON) as `player` (or the kept one; `false`: as nobody),
 * given up after `timeoutMs`. Returns the answer's JSON (null for 204). A 401 bad_player
 * forgets the kept player. Throws PlayerError (the server's code in the reader's language).
 */
export async function api(method, path, body, player = loadPlayer(), timeoutMs = 15_000) {
  const headers = {};
  if (body !== undefined) headers["content-type"] = "application/json";
  if (player) headers.authorization = `Player ${player.id}.${player.secret}`;
  let res;
  try {
    res = await fetch(path, {
      method, headers, body: body === undefined ? undefined : JSON.stringify(body),
      signal: typeof AbortSignal.timeout === "function" ? AbortSignal.timeout(timeoutMs) : undefined,
    });
  } catch {
    throw new PlayerError(t("you.offline"));
  }
  if (res.status === 204) return null;
  const data = await res.json().catch(() => ({}));
  if (!res.ok) {
    const code = data?.error?.code || null;
    if (code === "bad_player" && player && player.id === loadPlayer()?.id) forgetPlayer();
    throw new PlayerError(code ? codeText(code) : t("you.http_error", { n: res.status }), code, res.status);
  }
  return data;
}

/**
 * The kept player, else a new one (POST /api/players with the page's language and the name
 * this browser remembers, if it is one the server takes). Null when none can be made (no
 * database, too many players from this address): the page goes on without.
 */
export async function ensurePlayer() {
  const kept = loadPlayer();
  if (kept) return kept;
  const name = loadName().trim();
  for (const body of name ? [{ name, language: lang() }, { language: lang() }] : [{ language: lang() }]) {
    try {
      // Never keep the page waiting long: without a player it still plays.
      const made = await api("POST", "/api/players", body, false, 4000);
      savePlayer(made);
      return loadPlayer();
    } catch (err) {
      if (err.code !== "bad_name") return null;
    }
  }
  return null;
}

/** The server's record of the kept player ({id, name, language, private, created_at}), or
 * null (none kept, or it is gone: then it is forgotten). Throws PlayerError otherwise. */
export async function fetchMe() {
  if (!loadPlayer()) return null;
  try {
    return await api("GET", "/api/players/me");
  } catch (err) {
    if (err.code === "bad_player") return null;
    throw err;
  }
}

/** PATCH the kept player ({name?, language?, private?}); returns the record. A name is
 * remembered for the lobby too. */
export async function updateMe(changes) {
  const me = await api("PATCH", "/api/players/me", changes);
  if (me?.name) saveName(me.name);
  return me;
}

/** The page's language switched: tell the player (quietly; the switch works regardless). */
export function saveLanguage(code) {
  if (!loadPlayer()) return;
  api("PATCH", "/api/players/me", { language: code }).catch(() => {});
}
