// Checking a replay file before the page shows any of it. Anyone can hand anyone a file,
// so nothing in it is trusted: a file is shown only when it keeps the rules of
// protocol/replay.py — its JSON Schema (replay-schema.js, generated from the same models
// as docs/replay.schema.json) and the rules a schema cannot say (`replayFault`, the same
// rules in the same order as `replay_fault` there). A browser test feeds crafted files to
// both and expects the same verdicts.
import { NAME_RULES, REPLAY_LIMITS, REPLAY_SCHEMA } from "./replay-schema.js";

export const FORMAT = "cribbage-replay";
export const FORMAT_VERSION = 1;
export const MAX_FILE_BYTES = REPLAY_LIMITS.max_file_bytes;

/** A file the page refuses: `code` is "not_a_replay", "bad_version", "too_large" or
 * "damaged"; `where` names the first fault ("versions[3].events[0].score_after"). */
export class ReplayError extends Error {
  constructor(code, where = "") {
    super(where ? `${code}: ${where}` : code);
    this.code = code;
    this.where = where;
  }
}

// ------------------------------------------------------------ the schema (a subset) ----
// The keywords pydantic writes for these models: $ref, anyOf, oneOf (with a
// discriminator), const, enum, type, pattern, minLength/maxLength, minimum/maximum,
// items, minItems/maxItems, properties, required, additionalProperties,
// patternProperties. A test checks that the schema uses no other (validating) keyword.
const patterns = new Map();
const regex = (source) => {
  if (!patterns.has(source)) patterns.set(source, new RegExp(source, "u"));
  return patterns.get(source);
};
const isObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
const own = (o, k) => Object.prototype.hasOwnProperty.call(o, k);

function typeOk(type, v) {
  switch (type) {
    case "string": return typeof v === "string";
    case "integer": return Number.isInteger(v);
    case "number": return typeof v === "number" && Number.isFinite(v);
    case "boolean": return typeof v === "boolean";
    case "null": return v === null;
    case "array": return Array.isArray(v);
    case "object": return isObject(v);
    default: return false;
  }
}

function keyPath(path, key) {
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key).slice(0, 40)}]`;
}

/** The path of the first fault of `v` against `schema`, or null. */
function schemaFault(schema, v, path) {
  if (schema.$ref) {
    const target = REPLAY_SCHEMA.$defs[schema.$ref.replace("#/$defs/", "")];
    const fault = schemaFault(target, v, path);
    if (fault) return fault;
  }
  if (schema.anyOf && !schema.anyOf.some((s) => schemaFault(s, v, path) === null)) return path;
  if (schema.oneOf) {
    const d = schema.discriminator;
    if (d) {
      const tag = isObject(v) ? v[d.propertyName] : undefined;
      const ref = typeof tag === "string" && own(d.mapping, tag) ? d.mapping[tag] : null;
      if (!ref) return keyPath(path, d.propertyName);
      const fault = schemaFault({ $ref: ref }, v, path);
      if (fault) return fault;
    } else if (schema.oneOf.filter((s) => schemaFault(s, v, path) === null).length !== 1) {
      return path;
    }
  }
  if (schema.type !== undefined) {
    const types = Array.isArray(schema.type) ? schema.type : [schema.type];
    if (!types.some((ty) => typeOk(ty, v))) return path;
  }
  if (own(schema, "const") && v !== schema.const) return path;
  if (schema.enum && !schema.enum.some((e) => e === v)) return path;
  if (typeof v === "number") {
    if (schema.minimum !== undefined && v < schema.minimum) return path;
    if (schema.maximum !== undefined && v > schema.maximum) return path;
    if (schema.exclusiveMinimum !== undefined && v <= schema.exclusiveMinimum) return path;
    if (schema.exclusiveMaximum !== undefined && v >= schema.exclusiveMaximum) return path;
  }
  if (typeof v === "string") {
    const length = [...v].length; // code points, as JSON Schema counts
    if (schema.minLength !== undefined && length < schema.minLength) return path;
    if (schema.maxLength !== undefined && length > schema.maxLength) return path;
    if (schema.pattern !== undefined && !regex(schema.pattern).test(v)) return path;
  }
  if (Array.isArray(v)) {
    if (schema.minItems !== undefined && v.length < schema.minItems) return path;
    if (schema.maxItems !== undefined && v.length > schema.maxItems) return path;
    if (schema.items) {
      for (let i = 0; i < v.length; i += 1) {
        const fault = schemaFault(schema.items, v[i], `${path}[${i}]`);
        if (fault) return fault;
      }
    }
  }
  if (isObject(v)) {
    for (const key of schema.required || []) if (!own(v, key)) return keyPath(path, key);
    const props = schema.properties || {};
    const patternProps = Object.entries(schema.patternProperties || {});
    for (const key of Object.keys(v)) {
      const at = keyPath(path, key);
      let known = false;
      if (own(props, key)) {
        known = true;
        const fault = schemaFault(props[key], v[key], at);
        if (fault) return fault;
      }
      for (const [source, sub] of patternProps) {
        if (!regex(source).test(key)) continue;
        known = true;
        const fault = schemaFault(sub, v[key], at);
        if (fault) return fault;
      }
      if (!known && schema.additionalProperties !== undefined) {
        if (schema.additionalProperties === false) return at;
        if (isObject(schema.additionalProperties)) {
          const fault = schemaFault(schema.additionalProperties, v[key], at);
          if (fault) return fault;
        }
      }
    }
  }
  return null;
}

// ------------------------------------------------------------------- names ----------
// The server's name rules (protocol/messages.py `_check_name`), for names already trimmed.
const FILLERS = new Set(NAME_RULES.invisible_fillers);
const LETTER_ETC = /^[\p{L}\p{N}\p{P}\p{S}]$/u;
const MARK = /^\p{M}$/u;
const OTHER = /^\p{C}$/u;
const SEPARATOR = /^[\p{Zl}\p{Zp}]$/u;
const ZWJ = "\u200d";
const visible = (ch) => LETTER_ETC.test(ch) && !FILLERS.has(ch);
const joinable = (ch) => visible(ch) || MARK.test(ch);
const isTag = (ch) => ch >= "\u{e0020}" && ch <= "\u{e007f}";

/** Whether `name` is a display name the server would take, exactly as written. */
export function cleanName(name) {
  if (typeof name !== "string" || name.trim() !== name) return false;
  const chars = [...name];
  if (chars.length < 1 || chars.length > 32) return false;
  for (let i = 0; i < chars.length; i += 1) {
    const ch = chars[i];
    if (SEPARATOR.test(ch)) return false;
    if (!OTHER.test(ch)) continue;
    if (ch === ZWJ && i > 0 && i < chars.length - 1 && joinable(chars[i - 1]) && joinable(chars[i + 1])) continue;
    if (isTag(ch) && i > 0 && (chars[i - 1] === "\u{1f3f4}" || isTag(chars[i - 1]))) continue;
    return false;
  }
  return chars.some(visible);
}

// ---------------------------------------------------------- the other rules ---------
const SEAT_FIELDS = ["seat", "dealer", "owner", "caller", "next"];
const SIDE_FIELDS = ["side", "winner", "reached_by"];
const SCORE_FIELDS = ["score_before", "score_after"];
const POINT_FIELDS = ["points", "announced", "true_count", "owner_pegs", "caller_pegs"];
const given = (v) => v !== undefined && v !== null;

function longList(node, path) {
  if (Array.isArray(node)) {
    if (node.length > REPLAY_LIMITS.max_event_list) return path;
    for (let i = 0; i < node.length; i += 1) {
      const fault = longList(node[i], `${path}[${i}]`);
      if (fault) return fault;
    }
  } else if (isObject(node)) {
    for (const key of Object.keys(node)) {
      const fault = longList(node[key], `${path}.${key}`);
      if (fault) return fault;
    }
  }
  return null;
}

function resultFault(result, nSides, players, target, path) {
  if (result.scores.length !== nSides) return `${path}.scores`;
  for (let i = 0; i < result.scores.length; i += 1) if (result.scores[i] > target) return `${path}.scores[${i}]`;
  for (const key of ["winner_seats", "loser_seats"]) {
    for (let i = 0; i < result[key].length; i += 1) if (result[key][i] >= players) return `${path}.${key}[${i}]`;
  }
  for (let i = 0; i < result.losers.length; i += 1) if (result.losers[i] >= nSides) return `${path}.losers[${i}]`;
  for (const key of Object.keys(result.skunks)) if (Number(key) >= nSides) return `${path}.skunks`;
  for (const key of ["winner", "reached_by"]) if (given(result[key]) && result[key] >= nSides) return `${path}.${key}`;
  return null;
}

function eventFault(ev, data, sides, nSides, at) {
  const { players, target } = data.options;
  const long = longList(ev, at);
  if (long) return long;
  for (const key of SEAT_FIELDS) if (given(ev[key]) && ev[key] >= players) return `${at}.${key}`;
  for (const key of SIDE_FIELDS) if (given(ev[key]) && ev[key] >= nSides) return `${at}.${key}`;
  for (const key of SCORE_FIELDS) if (given(ev[key]) && ev[key] > target) return `${at}.${key}`;
  for (const key of POINT_FIELDS) if (given(ev[key]) && ev[key] > REPLAY_LIMITS.max_points) return `${at}.${key}`;
  switch (ev.type) {
    case "seat_taken":
    case "computer_standin":
      if (ev.name !== null && !cleanName(ev.name)) return `${at}.name`;
      break;
    case "game_start":
      if (Object.keys(data.options).some((k) => ev.options[k] !== data.options[k])) return `${at}.options`;
      if (ev.players !== players) return `${at}.players`;
      if (ev.sides.length !== sides.length || ev.sides.some((s, i) => s !== sides[i])) return `${at}.sides`;
      if (ev.game_number !== data.game) return `${at}.game_number`;
      break;
    case "cut_for_deal":
      for (let r = 0; r < ev.cuts.length; r += 1) {
        for (let c = 0; c < ev.cuts[r].length; c += 1) if (ev.cuts[r][c].seat >= players) return `${at}.cuts[${r}][${c}].seat`;
      }
      break;
    case "deal":
      if (ev.deal_number > REPLAY_LIMITS.max_deal) return `${at}.deal_number`;
      break;
    case "show_hand":
      if (ev.cards.length !== 4) return `${at}.cards`;
      break;
    case "game_over":
      return resultFault(ev, nSides, players, target, at);
    default:
      break;
  }
  return null;
}

/** The first rule a schema-valid file breaks, as a path into it, or null. */
export function replayFault(data) {
  const { players, partnerships, lowball, muggins, target } = data.options;
  if (partnerships && players !== 4) return "options.partnerships";
  if (lowball && muggins) return "options.muggins";
  const sides = partnerships ? [0, 1, 0, 1] : Array.from({ length: players }, (_, i) => i);
  const nSides = new Set(sides).size;
  if (data.seats.length !== players) return "seats";
  for (let i = 0; i < data.seats.length; i += 1) {
    const seat = data.seats[i];
    if (seat.seat !== i) return `seats[${i}].seat`;
    if (!cleanName(seat.name)) return `seats[${i}].name`;
    if (seat.kind === "computer" && seat.level === null) return `seats[${i}].level`;
  }
  if (data.result !== null) {
    const fault = resultFault(data.result, nSides, players, target, "result");
    if (fault) return fault;
  }
  for (let i = 0; i < data.versions.length; i += 1) {
    const version = data.versions[i];
    if (version.version !== data.first + i) return `versions[${i}].version`;
    for (let j = 0; j < version.events.length; j += 1) {
      const fault = eventFault(version.events[j], data, sides, nSides, `versions[${i}].events[${j}]`);
      if (fault) return fault;
    }
  }
  return null;
}

/**
 * `data` (a parsed replay file) if the page may show it; otherwise throws a ReplayError:
 * "not_a_replay" (not an object, or another `format`), "bad_version" (a newer
 * `format_version`), "damaged" (anything the schema or the other rules refuse).
 */
export function checkReplay(data) {
  if (!isObject(data) || data.format !== FORMAT) throw new ReplayError("not_a_replay");
  if (Number.isInteger(data.format_version) && data.format_version > FORMAT_VERSION) throw new ReplayError("bad_version");
  const fault = schemaFault(REPLAY_SCHEMA, data, "") ?? replayFault(data);
  if (fault !== null) throw new ReplayError("damaged", fault.replace(/^\./, ""));
  return data;
}

/** A number written with a fraction or an exponent ("5.0", "1e2") is not a whole number,
 * though JavaScript reads it as one: it becomes NaN, which no rule takes (no number in a
 * replay file has a fraction). Needs the reviver's source text (Chromium 114+). */
function wholeNumbersOnly(key, value, context) {
  return typeof value === "number" && context?.source && /[.eE]/.test(context.source) ? Number.NaN : value;
}

/** `checkReplay` of a file (a Blob): "too_large" past the limit, "not_a_replay" when it
 * is not JSON text. Resolves to the parsed data. */
export async function readReplayFile(file) {
  if (file.size > MAX_FILE_BYTES) throw new ReplayError("too_large");
  let data;
  try {
    data = JSON.parse(await file.text(), wholeNumbersOnly);
  } catch {
    throw new ReplayError("not_a_replay");
  }
  return checkReplay(data);
}
