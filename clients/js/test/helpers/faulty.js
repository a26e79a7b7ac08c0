// A WebSocket class for the `WebSocketImpl` option that puts a real `ws` connection behind
// hooks, so a test can lose frames, cut the connection or stand in for a server answer at a
// chosen moment. JSON subprotocol only (frames are read to decide).

import { WebSocket } from "ws";

/**
 * `hooks.incoming(frame, socket)` decides each server frame: "pass" (default), "drop",
 * "kill" (drop it and cut the TCP connection: the client sees 1006) or a replacement frame.
 * `hooks.outgoing(frame, socket)` decides each client frame: "pass", "drop", or
 * `{reply: frame}` (not sent; the frame is handed to the client as the server's answer).
 * `hooks.sockets` lists every socket made.
 */
export function faultyWebSocket(hooks = {}) {
  hooks.sockets = hooks.sockets || [];
  return class FaultySocket {
    constructor(url, protocols) {
      this.inner = new WebSocket(url, protocols);
      this.inner.binaryType = "arraybuffer";
      this.onopen = this.onmessage = this.onclose = this.onerror = null;
      this.closeOverride = null;
      this.inner.onopen = (e) => this.onopen?.(e);
      this.inner.onerror = (e) => this.onerror?.(e);
      this.inner.onclose = (e) => {
        const code = this.closeOverride ?? e.code;
        this.onclose?.({ code, reason: e.reason, wasClean: e.wasClean });
      };
      this.inner.onmessage = (e) => {
        const frame = JSON.parse(e.data);
        const verdict = hooks.incoming ? hooks.incoming(frame, this) : "pass";
        if (verdict === undefined || verdict === "pass") this.onmessage?.(e);
        else if (verdict === "kill") this.kill();
        else if (verdict && typeof verdict === "object") this.onmessage?.({ data: JSON.stringify(verdict) });
      };
      hooks.sockets.push(this);
    }

    get readyState() {
      return this.inner.readyState;
    }

    get protocol() {
      return this.inner.protocol;
    }

    get binaryType() {
      return this.inner.binaryType;
    }

    set binaryType(value) {
      this.inner.binaryType = value;
    }

    send(data) {
      const frame = JSON.parse(data);
      const verdict = hooks.outgoing ? hooks.outgoing(frame, this) : "pass";
      if (verdict === "drop") return;
      if (verdict && typeof verdict === "object" && verdict.reply) {
        setTimeout(() => this.onmessage?.({ data: JSON.stringify(verdict.reply) }), 0);
        return;
      }
      this.inner.send(data);
    }

    close(code, reason) {
      this.inner.close(code, reason);
    }

    /** Cut the connection without a closing handshake (the client sees 1006), or report
     * `code` as the close code instead. */
    kill(code = null) {
      this.closeOverride = code;
      this.inner.terminate();
    }
  };
}
