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
  }, speaker(on), t("chrome.sound"));
}

/** A loudspeaker, with waves when on and struck through when off (drawn, no font). */
function speaker(on) {
  const NS = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(NS, "svg");
  svg.setAttribute("viewBox", "0 0 24 24");
  svg.setAttribute("aria-hidden", "true");
  svg.setAttribute("focusable", "false");
  const paths = ["M4 9h4l5-4v14l-5-4H4z", ...(on ? ["M16 9a4 4 0 0 1 0 6", "M18.5 6.5a8 8 0 0 1 0 11"] : ["M16 9l5 6", "M21 9l-5 6"])];
  for (const d of paths) {
    const path = document.createElementNS(NS, "path");
    path.setAttribute("d", d);
    svg.appendChild(path);
  }
  return svg;
}

/**
 * The bar at the top. `heading`: the page's h1 content (or null when the page has its own
 * h1), `status`: an element after it (the connection), `sound`: a rerender function to
 * offer the sound switch, `you`: this is the "You" page (its link is the current page),
 * `board`: this is the leaderboard.
 */
export function topBar({ heading = null, status = null, sound = null, you = false, board = false } = {}) {
  // "You" (the player's page, /you): from a table it comes back there (?from=).
  const here = location.pathname;
  const youHref = /^\/r\//.test(here) ? `/you?from=${encodeURIComponent(here)}` : "/you";
  return h("header", { class: "topbar" },
    heading ? h("h1", { class: "brand-title" }, h("a", { href: "/", class: "brand" }, t("chrome.brand")), heading)
      : h("a", { href: "/", class: "brand" }, t("chrome.brand")),
    status,
    h("nav", { class: "topnav", "aria-label": t("chrome.nav") },
      h("a", { href: youHref, class: "you-link", "data-key": "you-link", "aria-current": you ? "page" : null }, t("chrome.you")),
      h("a", { href: "/leaderboard", class: "board-link", "data-key": "board-link", "aria-current": board ? "page" : null }, t("chrome.leaderboard")),
      h("a", { href: "/rules", class: "rules-link" }, t("chrome.rules")),
      sound ? soundSwitch(sound) : null,
      languageSwitch()));
}
