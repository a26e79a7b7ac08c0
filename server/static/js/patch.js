// RFC 6902 JSON Patch, applied to plain JSON data (the server's `update.patch`).
// The server only emits add / remove / replace (see protocol/patch.py), but move, copy
// and test are implemented too so any conforming patch applies.

/** Split a JSON Pointer (RFC 6901) into its unescaped tokens. "" is the whole document. */
function tokens(path) {
  if (path === "") return [];
  if (!path.startsWith("/")) throw new Error(`bad JSON pointer: ${path}`);
  return path.slice(1).split("/").map((t) => t.replace(/~1/g, "/").replace(/~0/g, "~"));
}

function arrayIndex(arr, token, forAdd) {
  if (token === "-" && forAdd) return arr.length;
  if (!/^(0|[1-9][0-9]*)$/.test(token)) throw new Error(`bad array index: ${token}`);
  const i = Number(token);
  if (i > arr.length || (!forAdd && i === arr.length)) throw new Error(`index out of range: ${token}`);
  return i;
}

/** The container holding the pointer's last token, and that token. */
function parentOf(doc, path) {
  const parts = tokens(path);
  const last = parts.pop();
  let node = doc;
  for (const t of parts) {
    node = Array.isArray(node) ? node[arrayIndex(node, t, false)] : node?.[t];
    if (node === undefined || node === null || typeof node !== "object") {
      throw new Error(`path not found: ${path}`);
    }
  }
  return [node, last];
}

function get(doc, path) {
  let node = doc;
  for (const t of tokens(path)) {
    if (node === null || typeof node !== "object") throw new Error(`path not found: ${path}`);
    node = Array.isArray(node) ? node[arrayIndex(node, t, false)] : node[t];
    if (node === undefined) throw new Error(`path not found: ${path}`);
  }
  return node;
}

const clone = (v) => (v === undefined ? v : structuredClone(v));

function add(doc, path, value) {
  if (path === "") return value;
  const [parent, key] = parentOf(doc, path);
  if (Array.isArray(parent)) parent.splice(arrayIndex(parent, key, true), 0, value);
  else parent[key] = value;
  return doc;
}

function remove(doc, path) {
  const [parent, key] = parentOf(doc, path);
  if (Array.isArray(parent)) parent.splice(arrayIndex(parent, key, false), 1);
  else {
    if (!(key in parent)) throw new Error(`path not found: ${path}`);
    delete parent[key];
  }
  return doc;
}

/**
 * Apply `patch` to `doc` and return the result. `doc` is not modified: the patch is
 * applied to a deep copy, so a patch that fails half-way leaves the caller's data intact.
 * Throws on any operation that does not apply (the caller then asks for a resync).
 */
export function applyPatch(doc, patch) {
  let out = clone(doc);
  for (const op of patch) {
    switch (op.op) {
      case "add":
        out = add(out, op.path, clone(op.value));
        break;
      case "remove":
        out = remove(out, op.path);
        break;
      case "replace":
        if (op.path === "") out = clone(op.value);
        else {
          get(out, op.path); // must exist
          const [parent, key] = parentOf(out, op.path);
          if (Array.isArray(parent)) parent[arrayIndex(parent, key, false)] = clone(op.value);
          else parent[key] = clone(op.value);
        }
        break;
      case "move": {
        const value = get(out, op.from);
        out = remove(out, op.from);
        out = add(out, op.path, value);
        break;
      }
      case "copy":
        out = add(out, op.path, clone(get(out, op.from)));
        break;
      case "test":
        if (JSON.stringify(get(out, op.path)) !== JSON.stringify(op.value)) {
          throw new Error(`test failed at ${op.path}`);
        }
        break;
      default:
        throw new Error(`unknown patch op: ${op.op}`);
    }
  }
  return out;
}
