// The one error class the library throws or rejects with.

/**
 * An error with a stable `code`: a server `error` code (`room_not_found`, `seat_taken`, …)
 * when the server refused a request, or one of the library's own codes:
 *
 * - `closed`: the client was closed (by `close()` or after a fatal close code);
 * - `connection_lost`: the connection dropped before a request that cannot be repeated
 *   safely (`create_room`, `hint`, `ping`, `leave`) was answered;
 * - `not_connected`, `not_seated`: the call needs an open connection / a seat;
 * - `fatal_close`: the server closed the connection with a code that is not retried
 *   (`closeCode` says which: 1002, 1003, 1008, …);
 * - `reconnect_exhausted`: `reconnect.maxAttempts` reconnects failed;
 * - `timeout`: no answer within `requestTimeoutMs`;
 * - `bad_frame`: a frame could not be decoded;
 * - `no_websocket`, `no_msgpack`, `bad_option`: the setup is incomplete.
 */
export class CribbageError extends Error {
  constructor(code, message, extra = {}) {
    super(message, extra.cause !== undefined ? { cause: extra.cause } : undefined);
    this.name = "CribbageError";
    this.code = code;
    if (extra.frame !== undefined) this.frame = extra.frame;
    if (extra.closeCode !== undefined) this.closeCode = extra.closeCode;
  }
}
