// The two encodings of cribbage.v1 and where their pieces come from.
//
// JSON needs nothing. msgpack needs a codec ({encode, decode}); by default it is loaded
// lazily from the optional peer dependency `@msgpack/msgpack`, so the JSON path (and a
// browser page that never asks for msgpack) never loads it. The WebSocket class is the
// global one where it exists (browsers, React Native, Node 22+); on Node 20 it comes from
// the optional peer dependency `ws`, or from the `WebSocketImpl` option.

import { CribbageError } from "./errors.js";

export const SUBPROTOCOLS = Object.freeze({
  json: "cribbage.v1.json",
  msgpack: "cribbage.v1.msgpack",
});

// A specifier held in a variable keeps bundlers from resolving optional packages the
// browser never needs.
async function importOptional(name) {
  return import(/* webpackIgnore: true */ /* @vite-ignore */ name);
}

/** The JSON codec: text frames. */
export const jsonCodec = Object.freeze({
  encoding: "json",
  binary: false,
  encode: (message) => JSON.stringify(message),
  decode: (data) => {
    if (typeof data !== "string") {
      throw new CribbageError("bad_frame", "a binary frame on the JSON subprotocol");
    }
    return JSON.parse(data);
  },
});

function toBytes(data) {
  if (data instanceof Uint8Array) return data;
  if (data instanceof ArrayBuffer) return new Uint8Array(data);
  if (ArrayBuffer.isView(data)) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  return null;
}

/**
 * A msgpack codec from an `{encode, decode}` pair (e.g. the module `@msgpack/msgpack`).
 * Fields whose value is `undefined` are never sent.
 */
export function msgpackCodec(impl) {
  if (!impl || typeof impl.encode !== "function" || typeof impl.decode !== "function") {
    throw new CribbageError("no_msgpack", "the msgpack option needs encode and decode functions");
  }
  return Object.freeze({
    encoding: "msgpack",
    binary: true,
    encode: (message) => impl.encode(dropUndefined(message), { ignoreUndefined: true }),
    decode: (data) => {
      const bytes = toBytes(data);
      if (bytes === null) {
        throw new CribbageError("bad_frame", "a text frame on the msgpack subprotocol");
      }
      return impl.decode(bytes);
    },
  });
}

/** A copy of plain data without the object fields whose value is undefined. */
export function dropUndefined(value) {
  if (Array.isArray(value)) return value.map(dropUndefined);
  if (value === null || typeof value !== "object" || toBytes(value) !== null) return value;
  const out = {};
  for (const [k, v] of Object.entries(value)) if (v !== undefined) out[k] = dropUndefined(v);
  return out;
}

/** The codec for `encoding`, loading `@msgpack/msgpack` only when msgpack is asked for and
 * no implementation was given. */
export async function loadCodec(encoding, msgpack) {
  if (encoding === "json") return jsonCodec;
  if (encoding !== "msgpack") {
    throw new CribbageError("bad_option", `encoding must be "json" or "msgpack", not ${encoding}`);
  }
  if (msgpack) return msgpackCodec(msgpack);
  let mod;
  try {
    mod = await importOptional("@msgpack/msgpack");
  } catch (err) {
    throw new CribbageError(
      "no_msgpack",
      "msgpack needs the package @msgpack/msgpack (npm install @msgpack/msgpack) or the msgpack option",
      { cause: err },
    );
  }
  return msgpackCodec(mod);
}

/** The WebSocket class to use: the given one, the global one, or the `ws` package's. */
export async function loadWebSocket(impl) {
  if (impl) return impl;
  if (typeof globalThis.WebSocket === "function") return globalThis.WebSocket;
  try {
    const mod = await importOptional("ws");
    return mod.WebSocket || mod.default;
  } catch (err) {
    throw new CribbageError(
      "no_websocket",
      "no WebSocket here: install the package ws (npm install ws) or pass WebSocketImpl",
      { cause: err },
    );
  }
}
