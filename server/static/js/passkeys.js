// Passkeys (issue 18 point 2): get the player back when this browser's storage is gone.
// The server's side is server/passkeys (docs/protocol.md, "Passkeys"): it hands out
// WebAuthn options in their JSON form (binary values in base64url) and takes the
// browser's answer in the same form. This module turns one into the other around
// navigator.credentials.create / .get, and draws the passkey part of the "You" page (you.js):
// "Add a passkey" when a player is kept here, and "Sign in with a passkey" always.
// No inline script or style (the CSP), text in the catalogues (passkey.*).

import { codeText } from "./describe.js";
import { h } from "./dom.js";
import { onLanguageChange, t } from "./i18n.js";

const PLAYER_KEY = "cribbage.player"; // {"id", "secret"}: the player this browser is

/** The player kept in this browser ({id, secret}), or null. */
export function loadPlayer() {
  try {
    const value = JSON.parse(localStorage.getItem(PLAYER_KEY) || "null");
    return value && typeof value.id === "string" && typeof value.secret === "string" ? value : null;
  } catch {
    return null;
  }
}

function savePlayer(player) {
  try {
    localStorage.setItem(PLAYER_KEY, JSON.stringify({ id: player.id, secret: player.secret }));
  } catch {
    /* private mode: signed in for this page only */
  }
}

/** base64url text (no padding) -> ArrayBuffer. */
export function fromBase64url(text) {
  const b64 = text.replace(/-/g, "+").replace(/_/g, "/") + "===".slice((text.length + 3) % 4);
  const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
  return bytes.buffer;
}

/** ArrayBuffer (or a view) -> base64url text without padding. */
export function toBase64url(buffer) {
  const bytes = buffer instanceof ArrayBuffer ? new Uint8Array(buffer)
    : new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength);
  let text = "";
  for (const b of bytes) text += String.fromCharCode(b);
  return btoa(text).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** Whether this browser can use passkeys here (WebAuthn, in a secure context). */
export const passkeysSupported = () =>
  typeof window.PublicKeyCredential === "function" && window.isSecureContext && !!navigator.credentials;

function creationOptions(json) {
  return {
    ...json,
    challenge: fromBase64url(json.challenge),
    user: { ...json.user, id: fromBase64url(json.user.id) },
    excludeCredentials: (json.excludeCredentials || []).map((c) => ({ ...c, id: fromBase64url(c.id) })),
  };
}

function requestOptions(json) {
  return {
    ...json,
    challenge: fromBase64url(json.challenge),
    allowCredentials: (json.allowCredentials || []).map((c) => ({ ...c, id: fromBase64url(c.id) })),
  };
}

function credentialJSON(credential) {
  const r = credential.response;
  const response = { clientDataJSON: toBase64url(r.clientDataJSON) };
  if (r.attestationObject) {
    response.attestationObject = toBase64url(r.attestationObject);
    response.transports = typeof r.getTransports === "function" ? r.getTransports() : [];
  } else {
    response.authenticatorData = toBase64url(r.authenticatorData);
    response.signature = toBase64url(r.signature);
    if (r.userHandle) response.userHandle = toBase64url(r.userHandle);
  }
  return {
    id: credential.id, rawId: toBase64url(credential.rawId), type: credential.type, response,
    authenticatorAttachment: credential.authenticatorAttachment || null,
    clientExtensionResults: credential.getClientExtensionResults(),
  };
}

class PasskeyError extends Error {}

async function post(path, body, player) {
  const headers = { "content-type": "application/json" };
  if (player) headers.authorization = `Player ${player.id}.${player.secret}`;
  const res = await fetch(path, { method: "POST", headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const data = await res.json().catch(() => ({}));
  if (!res.ok) throw new PasskeyError(data?.error?.code ? codeText(data.error.code) : t("passkey.failed_http", { n: res.status }));
  return data;
}

/** Sign in with a passkey: the player it belongs to, with a new secret for this browser,
 * is kept here (cribbage.player) and returned ({id, secret, name, language}). */
export async function signInWithPasskey() {
  const { challenge_id: challengeId, options } = await post("/api/passkeys/options");
  const credential = await navigator.credentials.get({ publicKey: requestOptions(options) });
  if (!credential) throw new PasskeyError(t("passkey.cancelled"));
  const player = await post("/api/passkeys/signin", { challenge_id: challengeId, credential: credentialJSON(credential) });
  savePlayer(player);
  return player;
}

/** Make a passkey of `player` ({id, secret}) and have the server keep it. */
export async function addPasskey(player) {
  const { challenge_id: challengeId, options } = await post("/api/players/me/passkeys/options", undefined, player);
  const credential = await navigator.credentials.create({ publicKey: creationOptions(options) });
  if (!credential) throw new PasskeyError(t("passkey.cancelled"));
  return post("/api/players/me/passkeys", { challenge_id: challengeId, credential: credentialJSON(credential) }, player);
}

function why(err) {
  if (err instanceof PasskeyError) return err.message;
  // The browser's own refusals: the person closed the dialog, or no passkey of this site.
  if (err && (err.name === "NotAllowedError" || err.name === "AbortError")) return t("passkey.cancelled");
  if (err && err.name === "InvalidStateError") return t("passkey.already");
  return t("passkey.failed_browser");
}

/**
 * The passkey panel of the "You" page (a <section>), drawing itself again as it goes:
 * "Add a passkey" when a player is kept in this browser, and "Sign in with a passkey"
 * (which replaces the kept player by the passkey's). `onPlayer(player)` is told when a sign-in brought a player back. Nothing is
 * drawn where the browser has no passkeys (an empty, hidden section).
 */
export function passkeyPanel(onPlayer = () => {}) {
  const section = h("section", { class: "panel passkey-panel", "aria-labelledby": "passkey-title" });
  const state = { busy: false, message: null, error: null };

  function draw() {
    section.replaceChildren();
    if (!passkeysSupported()) {
      section.hidden = true;
      return;
    }
    const player = loadPlayer();
    const button = (label, action) => h("button", {
      type: "button", class: "secondary", "data-key": "passkey-action", disabled: state.busy,
      onclick: async () => {
        state.busy = true; state.error = null; state.message = null; draw();
        try {
          state.message = await action();
        } catch (err) {
          state.error = why(err);
        }
        state.busy = false;
        draw();
        section.querySelector("button")?.focus();
      },
    }, label);
    const signIn = () => button(t("passkey.sign_in"), async () => {
      const back = await signInWithPasskey();
      onPlayer(back);
      return back.name ? t("passkey.welcome_back", { name: back.name }) : t("passkey.signed_in");
    });
    // With a player kept (every visitor has one: player.js), both: keep this one on a
    // passkey, or take back another one this browser had forgotten.
    section.append(
      h("h2", { id: "passkey-title" }, player ? t("passkey.keep_title") : t("passkey.back_title")),
      h("p", {}, player ? t("passkey.keep_text") : t("passkey.back_text")),
      player
        ? button(t("passkey.add"), async () => { await addPasskey(player); return t("passkey.added"); })
        : signIn(),
      player ? h("p", { class: "note" }, t("passkey.other_text")) : null,
      player ? signIn() : null,
      h("p", { class: state.error ? "error" : "note", role: "status", "data-key": "passkey-status" },
        state.busy ? t("passkey.waiting") : (state.error || state.message || "")),
    );
  }

  onLanguageChange(draw);
  draw();
  return section;
}
