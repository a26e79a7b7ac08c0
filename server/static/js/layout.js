// What every page has at the top: the name of the site (a link home), the page's own
// heading, the rules, the language switch, and (where there is something to hear) the
// sound switch.
import { h } from "./dom.js";
import { LANGUAGES, lang, setLanguage, t } from "./i18n.js";
import { setSound, soundOn } from "./sound.js";

/** The language switch: each language named in itself (and marked with its lang). */
export function languageSwitch() {
  return h("span", { class: "lang-switch" },
    h("label", { for: "lang", class: "sr-only" }, t("chrome.language")),
    h("select", {
      id: "lang", "data-key": "lang",
      onchange: (e) => setLanguage(e.target.value),
    }, LANGUAGES.map((l) => h("option", { value: l.code, lang: l.code, selected: l.code === lang() }, l.name))));
}

/** The sound switch (off by default); `rerender` draws the page again after a change. */
export function soundSwitch(rerender) {
  const on = soundOn();
  return h("button", {
    type: "button", class: ["sound-switch", on && "on"], id: "sound", "data-key": "sound",
    "aria-pressed": String(on), onclick: () => { setSound(!on); rerender(); },
  }, h("span", { "aria-hidden": "true" }, on ? "🔊 " : "🔇 "), t("chrome.sound"));
}

/**
 * The bar at the top. `heading`: the page's h1 content (or null when the page has its own
 * h1), `status`: an element after it (the connection), `sound`: a rerender function to
 * offer the sound switch.
 */
export function topBar({ heading = null, status = null, sound = null } = {}) {
  return h("header", { class: "topbar" },
    heading ? h("h1", { class: "brand-title" }, h("a", { href: "/", class: "brand" }, t("chrome.brand")), heading)
      : h("a", { href: "/", class: "brand" }, t("chrome.brand")),
    status,
    h("nav", { class: "topnav", "aria-label": t("chrome.nav") },
      h("a", { href: "/rules", class: "rules-link" }, t("chrome.rules")),
      sound ? soundSwitch(sound) : null,
      languageSwitch()));
}
