// @cribbage/client: a client of the cribbage.v1 WebSocket protocol (docs/protocol.md).
export {
  CribbageClient,
  LIBRARY_VERSION,
  RECONNECT_CLOSE_CODES,
  RETRY_CODES,
  backoffDelay,
} from "./client.js";
export { CribbageError } from "./errors.js";
export { SUBPROTOCOLS, jsonCodec, msgpackCodec } from "./codec.js";
export { applyPatch, PatchError, parsePointer, getPointer, cloneJson, jsonEqual } from "./patch.js";
