// Languages: English, Danish and Swedish. Every word the page shows comes from one
// catalogue per language (/static/i18n/<lang>.json); this module picks the language (the
// one chosen before, else the browser's languages, else English), loads its catalogue and
// looks words up. No text lives in code.
//
// A catalogue maps flat keys to
// - a string with {placeholders};
// - an object of forms: who does it ("you", "single", "group") chosen by `form`, and/or
//   plural categories of Intl.PluralRules ("one", "other") chosen by the number `n`
//   (a "you"/"single"/"group" entry may itself hold plural categories);
// - an array (paragraphs, number words).
// A missing key shows as ⟦key⟧, so a test can find it.

const STORE_KEY = "cribbage.lang";
export const LANGUAGES = [
  { code: "en", name: "English" },
  { code: "da", name: "Dansk" },
  { code: "sv", name: "Svenska" },
];
const CODES = LANGUAGES.map((l) => l.code);
/** Languages close enough that their readers are better served by one of ours. */
const NEAR = { nb: "da", nn: "da", no: "da" };

let current = "en";
let catalogue = {};
let plurals = new Intl.PluralRules("en");
const listeners = new Set();

/** The language to use: the stored choice, else the first of the browser's we have. */
export function detectLanguage(stored = readStored(), browser = navigator.languages || [navigator.language]) {
  if (CODES.includes(stored)) return stored;
  for (const tag of browser) {
    const primary = String(tag || "").toLowerCase().split("-")[0];
    if (CODES.includes(primary)) return primary;
    if (NEAR[primary]) return NEAR[primary];
  }
  return "en";
}

function readStored() {
  try {
    return localStorage.getItem(STORE_KEY);
  } catch {
    return null;
  }
}

async function fetchCatalogue(code) {
  const res = await fetch(`/static/i18n/${code}.json`);
  if (!res.ok) throw new Error(`no catalogue for ${code}`);
  return res.json();
}

/** Load the detected language's catalogue (call once, before the first render). */
export async function initI18n() {
  await useLanguage(detectLanguage(), false);
}

async function useLanguage(code, remember) {
  const cat = await fetchCatalogue(code);
  current = code;
  catalogue = cat;
  plurals = new Intl.PluralRules(code);
  document.documentElement.lang = code;
  if (remember) {
    try {
      localStorage.setItem(STORE_KEY, code);
    } catch {
      /* private mode: the choice lasts this page only */
    }
  }
}

/** Switch language (remembered), then tell every page to draw itself again. */
export async function setLanguage(code) {
  if (!CODES.includes(code)) return;
  await useLanguage(code, true);
  for (const fn of listeners) fn(code);
}

/** Call `fn` after every language switch; returns the function that stops it. */
export function onLanguageChange(fn) {
  listeners.add(fn);
  return () => listeners.delete(fn);
}

export const lang = () => current;

function fill(text, params) {
  return text.replace(/\{(\w+)\}/g, (whole, name) => {
    if (!(name in params)) return whole;
    const value = params[name];
    return typeof value === "number" ? formatNumber(value) : String(value);
  });
}

/**
 * The text for `key` with `{placeholders}` filled from `params`. When the entry has forms,
 * `params.form` names one ("you", "single", "group"), then `params.n` picks the plural
 * category. Arrays come back as arrays (of filled strings).
 */
export function t(key, params = {}) {
  let entry = catalogue[key];
  if (entry === undefined) return `⟦${key}⟧`;
  if (Array.isArray(entry)) return entry.map((x) => fill(x, params));
  // Who does it first ("you", "single", "group": never a plural category's name), then
  // how many (Intl.PluralRules: "one", "other", ...).
  if (isForms(entry) && params.form !== undefined && params.form in entry) entry = entry[params.form];
  if (isForms(entry)) {
    const category = typeof params.n === "number" ? plurals.select(params.n) : "other";
    entry = entry[category] ?? entry.other ?? Object.values(entry)[0];
  }
  if (isForms(entry)) entry = Object.values(entry)[0];
  return fill(String(entry), params);
}

const isForms = (entry) => entry !== null && typeof entry === "object" && !Array.isArray(entry);

/** Whether the catalogue has `key` (for optional, data-driven keys). */
export const has = (key) => catalogue[key] !== undefined;

/** A number as this language writes it (1.5 / 1,5). */
export function formatNumber(n, digits) {
  const opts = digits === undefined ? {} : { minimumFractionDigits: digits, maximumFractionDigits: digits };
  // What rounds to zero is shown as 0, never as "−0.0".
  const shown = typeof n === "number" && (n === 0 || (digits !== undefined && Math.abs(n) < 0.5 * 10 ** -digits)) ? 0 : n;
  return new Intl.NumberFormat(current, opts).format(shown);
}

/** "Anna, Ben and Carl" / "Anna, Ben og Carl" / "Anna, Ben och Carl". */
export function formatList(items) {
  return new Intl.ListFormat(current, { style: "long", type: "conjunction" }).format(items);
}

/** The number as a word, as it is said in the show ("fifteen two"): words 0..31. */
export function numberWord(n) {
  const words = catalogue["words.numbers"];
  return Array.isArray(words) && words[n] !== undefined ? words[n] : formatNumber(n);
}

/**
 * A name in the genitive (possessive), by the rule of the page's language:
 * - English: "'s" ("Anna's", "Computer 3's");
 * - Danish: "s" ("Annas"), "'" after s, x or z ("Lars'"), "'s" after a digit or an
 *   abbreviation in capitals ("Computer 3's", "DR's");
 * - Swedish: "s" ("Annas"), nothing after s, x or z ("Lars"), ":s" after a digit or an
 *   abbreviation in capitals ("Dator 2:s", "SVT:s").
 * An abbreviation is a last word of two or more capitals ("SVT", "DR").
 */
export function genitive(name, code = current) {
  const text = String(name);
  const last = text.split(/\s+/).pop() || "";
  const digit = /\d$/.test(text);
  const abbreviation = /^\p{Lu}{2,}$/u.test(last);
  const sibilant = /[sxz]$/i.test(text);
  if (code === "da") {
    if (digit || abbreviation) return `${text}'s`;
    return sibilant ? `${text}'` : `${text}s`;
  }
  if (code === "sv") {
    if (digit || abbreviation) return `${text}:s`;
    return sibilant ? text : `${text}s`;
  }
  return `${text}'s`;
}

/** Dates and times of this language. */
export function formatTime(date) {
  return new Intl.DateTimeFormat(current, { dateStyle: "medium", timeStyle: "short" }).format(date);
}
