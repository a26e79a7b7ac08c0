// Hand-written declarations of src/patch.js (RFC 6902 JSON Patch, RFC 6901 JSON Pointer).

/** One RFC 6902 operation. */
export type JsonPatchOperation =
  | { op: "add"; path: string; value: unknown }
  | { op: "remove"; path: string }
  | { op: "replace"; path: string; value: unknown }
  | { op: "move"; from: string; path: string }
  | { op: "copy"; from: string; path: string }
  | { op: "test"; path: string; value: unknown };

/** An operation that did not apply: `op` is the operation, `index` its place in the patch. */
export declare class PatchError extends Error {
  readonly name: "PatchError";
  op?: unknown;
  index?: number;
  constructor(message: string, op?: unknown, index?: number);
}

/**
 * Apply a patch and return the new document. `doc` is never modified; containers on the
 * changed paths are copied, everything else is shared with `doc`.
 * @throws {PatchError} an operation does not apply (then nothing changed).
 */
export declare function applyPatch<T = unknown>(doc: unknown, ops: readonly JsonPatchOperation[] | readonly object[]): T;
/** The reference tokens of a JSON Pointer ("" is the whole document). */
export declare function parsePointer(pointer: string): string[];
/** The value at `pointer`. @throws {PatchError} when there is none. */
export declare function getPointer(doc: unknown, pointer: string): unknown;
/** A deep copy of JSON data. */
export declare function cloneJson<T>(value: T): T;
/** Structural equality of JSON data. */
export declare function jsonEqual(a: unknown, b: unknown): boolean;
