// The WebSocket connection to /ws (protocol cribbage.v1, JSON encoding; docs/protocol.md).
//
// `RoomConnection` says hello, joins one room (a seat, or watching), keeps the view current
// by applying each update's JSON Patch, asks for a resync when a version is missing or a
// patch does not apply, and reconnects with backoff when the connection drops — resuming
// the seat with the tokens kept in localStorage. The page only sees `onstate` callbacks.
import { applyPatch } from "./patch.js";

const SUBPROTOCOL = "cribbage.v1.json";
const RETRY_DELAYS_MS = [300, 1000, 2000, 4000, 8000];
/** A ping this often tells the page whether it missed a version (the pong carries the
 * room's latest version) and keeps idle connections alive through proxies. */
const PING_MS = 20000;

export class RoomConnection {
  /**
   * @param {object} opts
   * @param {string} opts.room        room id
   * @param {string} opts.name        display name for hello
   * @param {string|null} opts.playerToken  from an earlier welcome (kept per room)
   * @param {number|null} opts.seat   seat to take or resume; null to watch
   * @param {string|null} opts.seatToken    the seat's token when resuming
   * @param {(msg: object, conn: RoomConnection) => void} opts.onmessage  every server frame, after
   *        the connection's own bookkeeping (view, version) is done
   * @param {(status: string) => void} opts.onstatus  "connecting" | "open" | "retrying" | "closed"
   */
  constructor(opts) {
    Object.assign(this, {
      room: opts.room, name: opts.name, playerToken: opts.playerToken || null,
      seat: opts.seat ?? null, seatToken: opts.seatToken || null,
    });
    this.onmessage = opts.onmessage;
    this.onstatus = opts.onstatus || (() => {});
    this.version = -1;
    this.view = null;
    this.ws = null;
    this.closedByUs = false;
    this.attempt = 0;
    this.joined = false;
    this.prefix = Math.random().toString(36).slice(2, 8);
    this.counter = 0;
  }

  url() {
    const scheme = location.protocol === "https:" ? "wss:" : "ws:";
    return `${scheme}//${location.host}/ws`;
  }

  connect() {
    this.closedByUs = false;
    this.onstatus(this.attempt ? "retrying" : "connecting");
    const ws = new WebSocket(this.url(), [SUBPROTOCOL]);
    this.ws = ws;
    ws.onopen = () => {
      this.send({ type: "hello", name: this.name, token: this.playerToken || undefined, client: "web/1" });
      clearInterval(this.pingTimer);
      this.pingTimer = setInterval(() => this.send({ type: "ping" }), PING_MS);
    };
    ws.onmessage = (e) => {
      let msg;
      try {
        msg = JSON.parse(e.data);
      } catch {
        return;
      }
      this.handle(msg);
    };
    ws.onclose = () => {
      if (this.ws !== ws) return;
      clearInterval(this.pingTimer);
      this.joined = false;
      if (this.closedByUs) {
        this.onstatus("closed");
        return;
      }
      const delay = RETRY_DELAYS_MS[Math.min(this.attempt, RETRY_DELAYS_MS.length - 1)];
      this.attempt += 1;
      this.onstatus("retrying");
      this.retryTimer = setTimeout(() => this.connect(), delay);
    };
  }

  close() {
    this.closedByUs = true;
    clearInterval(this.pingTimer);
    clearTimeout(this.retryTimer);
    if (this.ws) this.ws.close();
  }

  send(msg) {
    if (this.ws && this.ws.readyState === WebSocket.OPEN) {
      this.ws.send(JSON.stringify(msg));
      return true;
    }
    return false;
  }

  /** Submit an engine action; returns its action id (answered by ack or reject). */
  act(action) {
    this.counter += 1;
    const id = `${this.prefix}-${Date.now().toString(36)}-${this.counter}`;
    return this.send({ type: "act", action_id: id, action }) ? id : null;
  }

  handle(msg) {
    switch (msg.type) {
      case "welcome":
        this.playerToken = msg.player_token;
        this.attempt = 0;
        this.onstatus("open");
        this.send({
          type: "join", room: this.room, seat: this.seat,
          token: this.seat !== null && this.seatToken ? this.seatToken : undefined,
        });
        break;
      case "pong":
        // The server knows a newer version than this page has: something was missed.
        if (this.joined && typeof msg.version === "number" && msg.version > this.version) {
          this.send({ type: "resync" });
        }
        break;
      case "snapshot":
        this.joined = true;
        this.version = msg.version;
        this.view = msg.view;
        if (msg.seat_token) this.seatToken = msg.seat_token;
        this.seat = msg.seat;
        break;
      case "update":
        if (msg.version <= this.version) return; // already have it
        if (msg.version !== this.version + 1) {
          this.send({ type: "resync" });
          return;
        }
        try {
          this.view = applyPatch(this.view, msg.patch);
        } catch (err) {
          console.warn("patch did not apply, resyncing", err);
          this.send({ type: "resync" });
          return;
        }
        this.version = msg.version;
        break;
      default:
        break;
    }
    this.onmessage(msg, this);
  }
}
