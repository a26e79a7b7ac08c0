// RFC 6902 JSON Patch over plain JSON data, with RFC 6901 JSON Pointers.
//
// `applyPatch(doc, ops)` never modifies `doc`: containers on the paths an operation touches
// are copied (once per call), everything else is shared with the input. So a patch that
// fails half-way leaves the caller's document as it was, and a UI can tell what changed by
// comparing references (an unchanged subtree is the same object before and after).

/** Raised when an operation does not apply; `op` is the operation, `index` its place. */
export class PatchError extends Error {
  constructor(message, op, index) {
    super(message);
    this.name = "PatchError";
    this.op = op;
    this.index = index;
  }
}

const hasOwn = Object.prototype.hasOwnProperty;
const ARRAY_INDEX = /^(0|[1-9][0-9]*)$/;

/** The unescaped reference tokens of a JSON Pointer ("" is the whole document). */
export function parsePointer(pointer) {
  if (typeof pointer !== "string") throw new PatchError(`a JSON Pointer is text, not ${typeof pointer}`);
  if (pointer === "") return [];
  if (pointer[0] !== "/") throw new PatchError(`a JSON Pointer starts with "/": ${pointer}`);
  return pointer
    .slice(1)
    .split("/")
    .map((t) => {
      if (/~[^01]|~$/.test(t)) throw new PatchError(`bad escape in JSON Pointer: ${pointer}`);
      return t.replace(/~1/g, "/").replace(/~0/g, "~");
    });
}

function isContainer(value) {
  return value !== null && typeof value === "object";
}

/** A deep copy of JSON data. */
export function cloneJson(value) {
  if (!isContainer(value)) return value;
  if (Array.isArray(value)) return value.map(cloneJson);
  const out = {};
  for (const key of Object.keys(value)) setOwn(out, key, cloneJson(value[key]));
  return out;
}

/** Structural equality of JSON data (object key order does not matter). */
export function jsonEqual(a, b) {
  if (a === b) return true;
  if (!isContainer(a) || !isContainer(b)) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    if (a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!jsonEqual(a[i], b[i])) return false;
    return true;
  }
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  for (const k of ka) if (!hasOwn.call(b, k) || !jsonEqual(a[k], b[k])) return false;
  return true;
}

// Defines an own property even for keys like "__proto__", so data cannot reach prototypes.
function setOwn(obj, key, value) {
  Object.defineProperty(obj, key, { value, writable: true, enumerable: true, configurable: true });
}

function arrayIndex(arr, token, forInsert, pointer) {
  if (forInsert && token === "-") return arr.length;
  if (!ARRAY_INDEX.test(token)) throw new PatchError(`not an array index: "${token}" in ${pointer}`);
  const i = Number(token);
  const limit = forInsert ? arr.length : arr.length - 1;
  if (i > limit) throw new PatchError(`array index ${i} out of range in ${pointer}`);
  return i;
}

/** The value at `pointer` in `doc`; throws PatchError when it does not exist. */
export function getPointer(doc, pointer) {
  let node = doc;
  for (const token of parsePointer(pointer)) {
    if (Array.isArray(node)) node = node[arrayIndex(node, token, false, pointer)];
    else if (isContainer(node) && hasOwn.call(node, token)) node = node[token];
    else throw new PatchError(`no value at ${pointer}`);
  }
  return node;
}

/**
 * Apply an RFC 6902 patch (add, remove, replace, move, copy, test; `-` appends to an array)
 * and return the new document. `doc` is left untouched; unchanged parts are shared.
 *
 * @throws {PatchError} an operation does not apply (nothing is changed then).
 */
export function applyPatch(doc, ops) {
  if (!Array.isArray(ops)) throw new PatchError("a patch is an array of operations");
  const copied = new WeakSet();
  let root = doc;

  const own = (container) => {
    if (copied.has(container)) return container;
    let copy;
    if (Array.isArray(container)) copy = container.slice();
    else {
      copy = {};
      for (const key of Object.keys(container)) setOwn(copy, key, container[key]);
    }
    copied.add(copy);
    return copy;
  };

  // The (copied, so writable) container that holds the pointer's last token, and that token.
  const parentOf = (pointer) => {
    const tokens = parsePointer(pointer);
    const last = tokens.pop();
    if (!isContainer(root)) throw new PatchError(`no container at ${pointer}`);
    root = own(root);
    let node = root;
    for (const token of tokens) {
      let key;
      if (Array.isArray(node)) key = arrayIndex(node, token, false, pointer);
      else if (hasOwn.call(node, token)) key = token;
      else throw new PatchError(`no value at ${pointer}`);
      const child = node[key];
      if (!isContainer(child)) throw new PatchError(`no container at ${pointer}`);
      const copy = own(child);
      if (Array.isArray(node)) node[key] = copy;
      else setOwn(node, key, copy);
      node = copy;
    }
    return [node, last];
  };

  const add = (pointer, value) => {
    if (pointer === "") {
      root = value;
      return;
    }
    const [parent, key] = parentOf(pointer);
    if (Array.isArray(parent)) parent.splice(arrayIndex(parent, key, true, pointer), 0, value);
    else setOwn(parent, key, value);
  };

  const remove = (pointer) => {
    if (pointer === "") throw new PatchError("cannot remove the whole document");
    const [parent, key] = parentOf(pointer);
    if (Array.isArray(parent)) parent.splice(arrayIndex(parent, key, false, pointer), 1);
    else if (hasOwn.call(parent, key)) delete parent[key];
    else throw new PatchError(`no value at ${pointer}`);
  };

  ops.forEach((op, index) => {
    try {
      if (!isContainer(op) || typeof op.op !== "string") throw new PatchError("not an operation");
      const { path } = op;
      switch (op.op) {
        case "add":
          if (!hasOwn.call(op, "value")) throw new PatchError("add needs a value");
          add(path, cloneJson(op.value));
          break;
        case "remove":
          remove(path);
          break;
        case "replace":
          if (!hasOwn.call(op, "value")) throw new PatchError("replace needs a value");
          getPointer(root, path); // must exist
          if (path === "") root = cloneJson(op.value);
          else {
            const [parent, key] = parentOf(path);
            if (Array.isArray(parent)) parent[arrayIndex(parent, key, false, path)] = cloneJson(op.value);
            else setOwn(parent, key, cloneJson(op.value));
          }
          break;
        case "move": {
          if (op.from === path) {
            getPointer(root, path);
            break;
          }
          if (typeof path === "string" && path.startsWith(`${op.from}/`)) {
            throw new PatchError(`cannot move ${op.from} into itself`);
          }
          const value = getPointer(root, op.from);
          remove(op.from);
          add(path, value);
          break;
        }
        case "copy":
          add(path, cloneJson(getPointer(root, op.from)));
          break;
        case "test":
          if (!jsonEqual(getPointer(root, path), op.value)) throw new PatchError(`test failed at ${path}`);
          break;
        default:
          throw new PatchError(`unknown operation "${op.op}"`);
      }
    } catch (err) {
      if (err instanceof PatchError) {
        err.op = op;
        err.index = index;
        throw err;
      }
      throw new PatchError(String(err && err.message ? err.message : err), op, index);
    }
  });
  return root;
}
