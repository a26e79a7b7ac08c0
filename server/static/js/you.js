// The "You" page, /you (issue 18 points 1, 2 and 6): the player this browser is — its name,
// language and private profile, "My games" (/p/<id>), a one-time code to use it on another
// device and the box for a code from one, passkeys (passkeys.js), the player's data to
// download, and deleting it. And /link/<code>, the page a code's link opens: it claims the
// code and asks before this device becomes that player. The server's side is
// server/players (docs/protocol.md, "Players"). No inline script or style (the CSP).

import { h, replaceKeepingFocus } from "./dom.js";
import { LANGUAGES, formatTime, lang, onLanguageChange, setLanguage, t } from "./i18n.js";
import { topBar } from "./layout.js";
import { passkeyPanel } from "./passkeys.js";
import {
  PlayerError, api, ensurePlayer, fetchMe, forgetEverything, loadPlayer, savePlayer, updateMe,
} from "./player.js";
import { saveName } from "./storage.js";

/** Save `data` as a JSON file called `filename` (a Blob link: no inline script). */
function downloadJson(data, filename) {
  const blob = new Blob([JSON.stringify(data, null, 1)], { type: "application/json" });
  const url = URL.createObjectURL(blob);
  const a = h("a", { href: url, download: filename, hidden: true });
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** Where "Back to the table" goes: a table's path given as ?from=, else nowhere. */
function backPath() {
  const from = new URLSearchParams(location.search).get("from") || "";
  return /^\/r\/[A-Za-z0-9_-]{4,32}$/.test(from) ? from : null;
}

/** Take a claimed code's player ({id, secret, name, language}) as this device's. */
async function adopt(claimed) {
  savePlayer(claimed);
  if (claimed.name) saveName(claimed.name);
  if (claimed.language && claimed.language !== lang()) await setLanguage(claimed.language);
}

export function youPage(root) {
  const state = {
    me: null, loading: true, loadError: null, deleted: false,
    name: { busy: false, error: null, done: false },
    privacy: { busy: false, error: null },
    link: { busy: false, error: null, made: null },
    code: { busy: false, error: null, done: null },
    data: { busy: false, error: null, confirmDelete: false },
  };
  const passkeys = passkeyPanel(() => load()); // kept across renders (its own state)

  async function load() {
    state.loading = true;
    render();
    try {
      state.me = await fetchMe();
      if (!state.me && !state.deleted) {
        // None kept, or the kept one is gone: this browser gets a new one.
        if (await ensurePlayer()) state.me = await fetchMe();
      }
      state.loadError = state.me || state.deleted ? null : t("you.no_player");
    } catch (err) {
      state.loadError = err.message;
    }
    state.loading = false;
    render();
  }

  /** Run `action` for the part `part` of the state (busy, error), then draw again. */
  async function run(part, action, focusKey) {
    Object.assign(state[part], { busy: true, error: null });
    render();
    try {
      await action();
    } catch (err) {
      state[part].error = err instanceof PlayerError ? err.message : t("you.failed");
    }
    state[part].busy = false;
    render();
    if (focusKey) root.querySelector(`[data-key="${focusKey}"]`)?.focus();
  }

  function saveNameNow(e) {
    e.preventDefault();
    const value = root.querySelector("#you-name").value.trim();
    state.name.done = false;
    run("name", async () => {
      if (!value) throw new PlayerError(t("error.name_first"));
      state.me = await updateMe({ name: value });
      state.name.done = true;
    }, "you-name");
  }

  function claimNow(e) {
    e.preventDefault();
    const code = root.querySelector("#you-code").value.trim();
    state.code.done = null;
    run("code", async () => {
      if (!code) throw new PlayerError(t("you.code_empty"));
      const claimed = await api("POST", "/api/players/link", { code }, false);
      await adopt(claimed);
      state.me = await fetchMe();
      state.link.made = null;
      state.code.done = claimed.name ? t("you.code_done", { name: claimed.name }) : t("you.code_done_nameless");
    }, "you-code");
  }

  const status = (part, key, done) => h("p", {
    class: state[part].error ? "error" : "note", role: state[part].error ? "alert" : "status", "data-key": key,
  }, state[part].busy ? t("you.working") : (state[part].error || done || ""));

  function nameSection(me) {
    return h("section", { class: "panel you-section", "aria-labelledby": "you-name-title" },
      h("h2", { id: "you-name-title" }, t("you.name_title")),
      h("form", { class: "you-row", onsubmit: saveNameNow },
        h("div", { class: "field" },
          h("label", { for: "you-name" }, t("form.your_name")),
          h("input", {
            id: "you-name", name: "name", "data-key": "you-name", value: me.name || "", maxlength: 32,
            autocomplete: "nickname", "data-keep": "no",
            "aria-describedby": "you-name-status",
          })),
        h("button", { type: "submit", class: "primary", "data-key": "you-name-save", disabled: state.name.busy },
          t("you.name_save"))),
      h("div", { id: "you-name-status" }, status("name", "you-name-status", state.name.done ? t("you.name_saved") : "")));
  }

  function settingsSection(me) {
    return h("section", { class: "panel you-section", "aria-labelledby": "you-settings-title" },
      h("h2", { id: "you-settings-title" }, t("you.settings_title")),
      h("div", { class: "field" },
        h("label", { for: "you-lang" }, t("you.language")),
        h("select", {
          id: "you-lang", "data-key": "you-lang",
          // The page's language is the player's: setLanguage tells the server (main.js).
          onchange: (e) => setLanguage(e.target.value),
        }, LANGUAGES.map((l) => h("option", { value: l.code, lang: l.code, selected: l.code === lang() }, l.name)))),
      h("label", { class: "choice" },
        h("input", {
          type: "checkbox", id: "you-private", "data-key": "you-private", checked: me.private,
          disabled: state.privacy.busy, "aria-describedby": "you-private-help",
          onchange: (e) => {
            const on = e.target.checked;
            run("privacy", async () => { state.me = await updateMe({ private: on }); }, "you-private");
          },
        }),
        h("span", {}, t("you.private"), h("small", { id: "you-private-help" }, t("you.private_help")))),
      state.privacy.error ? h("p", { class: "error", role: "alert" }, state.privacy.error) : null,
      h("p", {}, h("a", { href: `/p/${encodeURIComponent(me.id)}`, "data-key": "my-games", class: "my-games" }, t("you.my_games"))));
  }

  function deviceSection() {
    const made = state.link.made;
    return h("section", { class: "panel you-section", "aria-labelledby": "you-device-title" },
      h("h2", { id: "you-device-title" }, t("you.device_title")),
      h("p", {}, t("you.device_text")),
      h("button", {
        type: "button", class: "secondary", "data-key": "make-code", disabled: state.link.busy,
        onclick: () => run("link", async () => { state.link.made = await api("POST", "/api/players/me/link"); }, "link-code"),
      }, made ? t("you.make_another") : t("you.make_code")),
      made ? h("div", { class: "link-made" },
        h("p", { class: "note" }, t("you.code_is")),
        h("p", { class: "link-code", "data-key": "link-code", tabindex: "-1", "aria-label": t("you.code_spelled", { code: made.code.split("").join(" ") }) }, made.code),
        h("p", { class: "note" }, t("you.or_open")),
        h("p", { class: "link-url" }, h("a", { href: made.url, "data-key": "link-url" }, made.url)),
        h("p", { class: "note" }, t("you.code_expires", { time: formatTime(new Date(made.expires_at)) }))) : null,
      status("link", "link-status", ""),
      h("h3", {}, t("you.have_code_title")),
      h("form", { class: "you-row", onsubmit: claimNow },
        h("div", { class: "field" },
          h("label", { for: "you-code" }, t("you.have_code")),
          h("input", {
            id: "you-code", name: "code", "data-key": "you-code", maxlength: 20, autocomplete: "off",
            autocapitalize: "characters", spellcheck: "false", placeholder: "ABCD-EFGH",
            "aria-describedby": "you-code-help",
          }),
          h("small", { id: "you-code-help" }, t("you.have_code_help"))),
        h("button", { type: "submit", class: "secondary", "data-key": "use-code", disabled: state.code.busy }, t("you.use_code"))),
      status("code", "code-status", state.code.done));
  }

  function dataSection(me) {
    return h("section", { class: "panel you-section", "aria-labelledby": "you-data-title" },
      h("h2", { id: "you-data-title" }, t("you.data_title")),
      h("p", {}, t("you.data_text")),
      h("div", { class: "you-buttons" },
        h("button", {
          type: "button", class: "secondary", "data-key": "download-data", disabled: state.data.busy,
          onclick: () => run("data", async () => {
            downloadJson(await api("GET", "/api/players/me/export"), `cribbage-player-${me.id}.json`);
          }, "download-data"),
        }, t("you.download")),
        state.data.confirmDelete ? null : h("button", {
          type: "button", class: "danger", "data-key": "delete-player",
          onclick: () => { state.data.confirmDelete = true; render(); root.querySelector("[data-key=delete-no]")?.focus(); },
        }, t("you.delete"))),
      state.data.confirmDelete ? h("div", { class: "confirm", role: "group", "aria-labelledby": "delete-q" },
        h("p", { id: "delete-q" }, t("you.delete_confirm")),
        h("div", { class: "you-buttons" },
          h("button", {
            type: "button", class: "danger", "data-key": "delete-yes", disabled: state.data.busy,
            onclick: () => run("data", async () => {
              await api("DELETE", "/api/players/me");
              forgetEverything();
              state.deleted = true;
              state.me = null;
            }, "deleted"),
          }, t("you.delete_yes")),
          h("button", {
            type: "button", class: "secondary", "data-key": "delete-no",
            onclick: () => { state.data.confirmDelete = false; render(); root.querySelector("[data-key=delete-player]")?.focus(); },
          }, t("you.delete_no")))) : null,
      status("data", "data-status", ""));
  }

  function render() {
    document.title = t("you.page_title");
    const me = state.me;
    const back = backPath();
    let body;
    if (state.deleted) {
      body = [h("p", { class: "lede", role: "status", "data-key": "deleted", tabindex: "-1" }, t("you.deleted")),
        h("p", {}, h("a", { href: "/" }, t("you.to_start")))];
    } else if (state.loading && !me) {
      body = [h("p", { class: "note", role: "status" }, t("you.loading"))];
    } else if (!me) {
      body = [h("p", { class: "error", role: "alert" }, state.loadError || t("you.no_player")), passkeys];
    } else {
      body = [
        h("p", { class: "lede", "data-key": "you-who", "data-player": me.id },
          me.name ? t("you.playing_as", { name: me.name }) : t("you.playing_nameless")),
        nameSection(me), settingsSection(me), deviceSection(), passkeys, dataSection(me),
      ];
    }
    replaceKeepingFocus(root, h("div", {}, topBar({ you: true }), h("main", { class: "you-page" },
      h("h1", {}, t("you.title")),
      back ? h("p", {}, h("a", { href: back, "data-key": "back-to-table" }, t("you.back_to_table"))) : null,
      body)));
  }

  onLanguageChange(render);
  load();
}

/** /link/<code>: claim the code, then ask "Use this device as <name>?". */
export function linkPage(root, code) {
  const state = { phase: "claiming", claimed: null, error: null, previous: loadPlayer() };

  async function claim() {
    try {
      state.claimed = await api("POST", "/api/players/link", { code }, false);
      state.phase = state.previous?.id === state.claimed.id ? "same" : "confirm";
    } catch (err) {
      state.phase = "failed";
      state.error = err instanceof PlayerError ? err.message : t("you.failed");
    }
    render();
    root.querySelector("[data-key=link-yes], [data-key=link-result]")?.focus();
  }

  async function yes() {
    await adopt(state.claimed);
    location.assign("/you");
  }

  function render() {
    document.title = t("you.link_title");
    const c = state.claimed;
    let body;
    if (state.phase === "claiming") body = h("p", { class: "note", role: "status" }, t("you.link_checking"));
    else if (state.phase === "failed") {
      body = [h("p", { class: "error", role: "alert", "data-key": "link-result", tabindex: "-1" }, state.error),
        h("p", {}, h("a", { href: "/you" }, t("you.link_try_panel")))];
    } else if (state.phase === "same") {
      body = [h("p", { role: "status", "data-key": "link-result", tabindex: "-1" }, t("you.link_same")),
        h("p", {}, h("a", { href: "/you" }, t("you.title")))];
    } else {
      body = h("div", { class: "panel confirm", role: "group", "aria-labelledby": "link-q" },
        h("p", { id: "link-q", class: "lede" }, c.name ? t("you.link_confirm", { name: c.name }) : t("you.link_confirm_nameless")),
        h("p", { class: "note" }, t("you.link_confirm_help")),
        h("div", { class: "you-buttons" },
          h("button", { type: "button", class: "primary", "data-key": "link-yes", onclick: yes }, t("you.link_yes")),
          h("button", { type: "button", class: "secondary", "data-key": "link-no", onclick: () => location.assign("/") }, t("you.link_no"))));
    }
    replaceKeepingFocus(root, h("div", {}, topBar(), h("main", { class: "you-page" }, h("h1", {}, t("you.link_title")), body)));
  }

  onLanguageChange(render);
  render();
  claim();
}
