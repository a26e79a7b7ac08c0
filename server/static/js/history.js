// A player's page (/p/<player>): the ratings (leaderboard.js), the profile's statistics and the list of games, each
// linking to its replay; and the archived game's replay (/replay/<game>), fed from
// GET /api/games/{id}, whose every deal is checked in this browser (dealcheck.js) before the
// verdict is shown. Everything read comes from the HTTP API (docs/protocol.md "HTTP").
import { verifyGame } from "./dealcheck.js";
import { h } from "./dom.js";
import { formatNumber, formatTime, genitive, t } from "./i18n.js";
import { ratingsPanel } from "./leaderboard.js";
import { api, loadPlayer } from "./player.js";
import { codeText, describeOptions, makeNames } from "./describe.js";
import { accuracyRows, gradingPanel } from "./grading.js";
import { sendChallenge } from "./social.js";
import { keysAnywhere, replayPanel } from "./replay.js";
import { FORMAT, FORMAT_VERSION, ReplayError, checkReplay } from "./replaycheck.js";

const PLAYER_KEY = "cribbage.player";

/** The request headers of this browser's player (`localStorage["cribbage.player"]`,
 * `{"id", "secret"}`: docs/protocol.md "Players"), or none. */
export function playerHeaders() {
  try {
    const me = JSON.parse(localStorage.getItem(PLAYER_KEY) || "null");
    if (me && typeof me.id === "string" && typeof me.secret === "string") {
      return { Authorization: `Player ${me.id}.${me.secret}` };
    }
  } catch {
    // no storage, or not ours: nobody
  }
  return {};
}

export async function getJson(url) {
  const res = await fetch(url, { headers: playerHeaders() });
  let body = null;
  try {
    body = await res.json();
  } catch {
    body = null;
  }
  if (!res.ok) {
    // A 404 without the API's own body: an id the API's routes cannot take at all (one
    // holding a "/"), which is as unknown as any other.
    const code = body?.error?.code || (res.status === 404 ? "not_found" : "internal");
    const error = new Error(code);
    error.code = code;
    throw error;
  }
  return body;
}

const num = (n, digits) => (n === null || n === undefined ? "—" : formatNumber(n, digits));

// ------------------------------------------------------------------ statistics ------
function countTable(id, caption, rows) {
  return h("table", { class: "stats-table", id },
    h("caption", {}, caption),
    h("thead", {}, h("tr", {},
      h("th", { scope: "col" }, t("profile.col_what")),
      h("th", { scope: "col" }, t("profile.col_played")),
      h("th", { scope: "col" }, t("profile.col_won")))),
    h("tbody", {}, rows.map(([label, v, key]) => h("tr", { "data-key": key },
      h("th", { scope: "row" }, label), h("td", {}, num(v.played)), h("td", {}, num(v.won))))));
}

function pairTable(id, caption, rows) {
  return h("table", { class: "stats-table", id },
    h("caption", {}, caption),
    h("tbody", {}, rows.map(([label, value, key]) => h("tr", { "data-key": key },
      h("th", { scope: "row" }, label), h("td", {}, value)))));
}

function statsPanel(s, accuracy) {
  const kinds = ["2", "3", "4", "2x2"].map((k) => [t(`profile.kind_${k}`), s.by_table[k], k]);
  const variants = ["standard", "muggins", "lowball", "backup10"].map((k) => [t(`profile.variant_${k}`), s.by_variant[k], k]);
  const targets = ["61", "121"].map((k) => [t("options.to", { n: k }), s.by_target[k], k]);
  const d = s.dealer.per_deal;
  const p = s.pone.per_deal;
  const perDeal = h("table", { class: "stats-table", id: "stats-per-deal" },
    h("caption", {}, t("profile.per_deal")),
    h("thead", {}, h("tr", {},
      h("th", { scope: "col" }, t("profile.col_source")),
      h("th", { scope: "col" }, t("profile.as_dealer", { n: s.dealer.deals })),
      h("th", { scope: "col" }, t("profile.as_pone", { n: s.pone.deals })))),
    h("tbody", {}, [
      ["pegging", d.pegging, p.pegging], ["hand", d.hand, p.hand], ["crib", d.crib, null],
      ["heels", d.heels, null], ["total", d.total, p.total],
    ].map(([k, a, b]) => h("tr", { "data-key": k },
      h("th", { scope: "row" }, t(`profile.source_${k}`)), h("td", {}, num(a, 2)), h("td", {}, num(b, 2))))));
  return h("section", { class: "panel profile-stats", "aria-labelledby": "stats-h" },
    h("h2", { id: "stats-h" }, t("profile.statistics")),
    h("div", { class: "stats-grid" },
      pairTable("stats-games", t("profile.games"), [
        [t("profile.played"), num(s.games.played), "played"], [t("profile.won"), num(s.games.won), "won"],
        [t("profile.lost"), num(s.games.lost), "lost"], [t("profile.drawn"), num(s.games.drawn), "drawn"],
        [t("profile.abandoned"), num(s.games.abandoned), "abandoned"],
        [t("profile.streak_current"), num(s.streaks.current), "streak"],
        [t("profile.streak_best"), num(s.streaks.best), "best"]]),
      countTable("stats-kinds", t("profile.by_table"), kinds),
      countTable("stats-variants", t("profile.by_variant"), variants),
      countTable("stats-targets", t("profile.by_target"), targets),
      perDeal,
      pairTable("stats-more", t("profile.more"), [
        [t("profile.hand_average"), num(s.hand.average, 2), "hand"],
        [t("profile.crib_average"), num(s.crib.average, 2), "crib"],
        [t("profile.skunks_given"), t("profile.skunk_counts", { single: s.skunks.given.single, double: s.skunks.given.double }), "given"],
        [t("profile.skunks_taken"), t("profile.skunk_counts", { single: s.skunks.taken.single, double: s.skunks.taken.double }), "taken"],
        [t("profile.backup_moves"), t("profile.backup_counts", { moves: s.backup10.moves, holes: s.backup10.holes }), "backup"],
        [t("profile.muggins_taken"), num(s.muggins.taken), "muggins_taken"],
        [t("profile.muggins_lost"), num(s.muggins.lost), "muggins_lost"]]),
      accuracy ? pairTable("stats-accuracy", t("profile.accuracy_title"), accuracyRows(accuracy)) : null),
    h("p", { class: "muted profile-compare" }, t("profile.compare")));
}

// ----------------------------------------------------------------------- games ------
function seatName(seat) {
  if (seat.deleted) return t("history.deleted_player");
  if (seat.kind === "computer") return t("history.computer", { level: t(`level.${seat.level || "standard"}`) });
  return seat.name || t("history.no_name");
}

function gameRow(g) {
  const others = g.seats.filter((s) => s.seat !== g.seat);
  const partner = others.filter((s) => s.side === g.side);
  const opponents = others.filter((s) => s.side !== g.side);
  const opts = { players: g.seats.length, partnerships: g.table_kind === "2x2", target: g.target };
  for (const v of g.variants) opts[v] = true;
  const who = (s) => (s.player && !s.deleted
    ? h("a", { href: `/p/${encodeURIComponent(s.player)}` }, seatName(s))
    : h("span", { class: s.deleted ? "deleted-player" : null }, seatName(s)));
  const join = (list) => list.flatMap((s, i) => (i ? [", ", who(s)] : [who(s)]));
  return h("tr", { "data-game": g.game, "data-result": g.result },
    h("td", {}, formatTime(new Date(g.ended_at))),
    h("td", {}, describeOptions(opts)),
    h("td", {}, join(opponents), partner.length ? [" ", t("history.with_partner"), " ", join(partner)] : null),
    h("td", {}, t(`history.result_${g.result}`)),
    h("td", {}, g.scores.join("–")),
    h("td", {}, h("a", { href: `/replay/${g.game}`, class: "replay-link" }, t("history.watch"))));
}

function gamesPanel(state, more) {
  return h("section", { class: "panel profile-games", "aria-labelledby": "games-h" },
    h("h2", { id: "games-h" }, t("history.games")),
    state.games.length ? h("div", { class: "table-scroll" }, h("table", { class: "games-table", id: "games" },
      h("caption", { class: "sr-only" }, t("history.games")),
      h("thead", {}, h("tr", {}, ["date", "table", "opponents", "result", "score", "replay"].map((c) =>
        h("th", { scope: "col" }, t(`history.col_${c}`))))),
      h("tbody", {}, state.games.map(gameRow)))) : h("p", { class: "muted" }, t("history.none")),
    state.next ? h("button", { type: "button", id: "games-more", "data-key": "games-more", onclick: more }, t("history.more")) : null);
}


// ---------------------------------------------------------------------- social ------
/** Challenge and block (issue 20): on another player's page, a challenge form (target,
 * rated), Block / Unblock and whether they are online now; on the player's own page, a
 * Challenge button for each recent opponent (from the games listed). */
function socialPanel(state, playerId, draw) {
  const me = loadPlayer();
  if (!me) return null;
  const say = (text) => { state.social.message = text; draw(); };
  const challenge = async (to, target, rated) => {
    say(t("social.sending"));
    try {
      await sendChallenge(to, { players: 2, target }, rated ? { rated: true } : {});
      say(t("social.sent"));
    } catch (err) {
      say(codeText(err.code));
    }
  };
  const status = h("p", { id: "challenge-status", role: "status", class: "muted" }, state.social.message || "");
  if (me.id === playerId) {
    const seen = new Map();
    for (const g of state.games) {
      for (const s of g.seats) {
        if (s.player && !s.deleted && s.player !== me.id && !seen.has(s.player)) seen.set(s.player, s);
      }
    }
    const opponents = [...seen.values()].slice(0, 5);
    if (!opponents.length) return null;
    return h("section", { class: "panel profile-social", "aria-labelledby": "social-h" },
      h("h2", { id: "social-h" }, t("social.opponents")),
      h("ul", { class: "opponents" }, opponents.map((s) => h("li", { "data-player": s.player },
        h("a", { href: `/p/${encodeURIComponent(s.player)}` }, seatName(s)),
        h("button", { type: "button", "data-key": `challenge-${s.player}`,
          "aria-label": t("social.challenge_name", { name: seatName(s) }),
          onclick: () => challenge(s.player, 121, false) }, t("social.challenge"))))),
      status);
  }
  const block = async (on) => {
    try {
      await api(on ? "PUT" : "DELETE", `/api/players/me/blocks/${encodeURIComponent(playerId)}`);
      state.social.blocked = on;
      say(t(on ? "social.blocked" : "social.unblocked"));
    } catch (err) {
      say(codeText(err.code));
    }
  };
  const online = state.profile.online;
  const form = h("form", { id: "challenge-form", onsubmit: (e) => {
    e.preventDefault();
    const data = new FormData(e.target);
    challenge(playerId, Number(data.get("target")), data.get("rated") === "on");
  } },
  h("label", {}, t("social.target"),
    h("select", { name: "target", id: "challenge-target", "data-key": "challenge-target" },
      h("option", { value: "121" }, t("options.to", { n: 121 })),
      h("option", { value: "61" }, t("options.to", { n: 61 })))),
  h("label", { class: "inline" },
    h("input", { type: "checkbox", name: "rated", id: "challenge-rated", "data-key": "challenge-rated" }),
    t("social.rated")),
  h("button", { type: "submit", class: "primary", id: "challenge-send", "data-key": "challenge-send" }, t("social.challenge")));
  return h("section", { class: "panel profile-social", "aria-labelledby": "social-h" },
    h("h2", { id: "social-h" }, t("social.title")),
    online === null || online === undefined ? null
      : h("p", { id: "online", "data-online": String(online) }, t(online ? "social.online" : "social.offline")),
    state.social.blocked
      ? [h("p", { class: "muted" }, t("social.blocked_note")),
        h("button", { type: "button", id: "unblock", "data-key": "unblock", onclick: () => block(false) }, t("social.unblock"))]
      : [form, h("button", { type: "button", id: "block", "data-key": "block", onclick: () => block(true) }, t("social.block"))],
    status);
}

/** The /p/<player> page. Returns its draw function (called again on a language change). */
export function profilePage(root, playerId, { topBar, render }) {
  const state = { profile: null, ratings: null, games: [], next: null, error: null, loading: true,
    social: { blocked: false, message: "" } };
  const base = `/api/players/${encodeURIComponent(playerId)}`;
  const draw = () => {
    let body;
    if (state.loading) body = h("p", { class: "muted" }, t("common.loading"));
    else if (state.error) body = h("p", { class: "error profile-error", role: "alert", "data-code": state.error }, t(`profile.error_${state.error}`));
    else body = [socialPanel(state, playerId, draw), state.ratings ? ratingsPanel(state.ratings) : null,
      statsPanel(state.profile.statistics, state.profile.accuracy), gamesPanel(state, more)];
    const title = state.profile ? (state.profile.name || t("history.no_name")) : t("profile.page_title");
    document.title = `${title} — ${t("chrome.brand")}`;
    render(root, h("div", {}, topBar(),
      h("main", { class: "profile-page", id: "profile" },
        h("h1", {}, state.profile ? (state.profile.name ? t("profile.title", { owner: genitive(title) }) : t("profile.title_nameless"))
          : t("profile.page_title")),
        state.profile?.private ? h("p", { class: "muted" }, t("profile.private_note")) : null,
        body)));
  };
  const known = new Set(["player_not_found", "player_deleted", "profile_private", "too_many_history_reads"]);
  const fail = (err) => {
    state.loading = false;
    const code = err.code === "not_found" ? "player_not_found" : err.code;
    state.error = known.has(code) ? code : "unavailable";
    draw();
  };
  async function more() {
    try {
      const page = await getJson(`${base}/games?cursor=${encodeURIComponent(state.next)}`);
      state.games = state.games.concat(page.games);
      state.next = page.next;
      draw();
      root.querySelector(`#games tbody tr:nth-child(${state.games.length - page.games.length + 1}) a.replay-link`)?.focus();
    } catch (err) {
      fail(err);
    }
  }
  (async () => {
    try {
      if (!playerId) throw Object.assign(new Error("not_found"), { code: "not_found" }); // "/p/"
      const [profile, page] = [await getJson(base), await getJson(`${base}/games`)];
      const ratings = await getJson(`${base}/ratings`);
      const me = loadPlayer();
      if (me && me.id !== playerId) {
        try {
          const { blocks } = await api("GET", "/api/players/me/blocks");
          state.social.blocked = blocks.some((b) => b.player === playerId);
        } catch {
          // shown as not blocked; Block says what the server says
        }
      }
      Object.assign(state, { profile, ratings, games: page.games, next: page.next, loading: false });
      draw();
    } catch (err) {
      fail(err);
    }
  })();
  return draw;
}

// ---------------------------------------------------------------------- replay ------
/** The replay file (replaycheck.js) of an archived game's body: its own fields, a deleted
 * player's seat and events named "a deleted player" in the reader's language. */
export function replayFileOf(body) {
  const marker = t("history.deleted_player");
  const deleted = new Set(body.seats.filter((s) => s.deleted).map((s) => s.seat));
  const seats = body.seats.map((s) => ({
    seat: s.seat, name: s.deleted ? marker : (s.name || t("name.seat", { n: s.seat + 1 })),
    kind: s.kind === "computer" ? "computer" : "human", level: s.level ?? null,
  }));
  const versions = body.versions.map((v) => ({
    version: v.version,
    events: v.events.map((e) => (deleted.has(e.seat) && "name" in e ? { ...e, name: e.type === "seat_taken" ? marker : null } : e)),
  }));
  return { format: FORMAT, format_version: FORMAT_VERSION, room: body.room, game: body.game, saved_at: body.saved_at,
    options: body.options, seats, first: body.first, versions, result: body.result };
}

function verdictPanel(verdict) {
  if (!verdict) return h("p", { class: "verdict pending", role: "status", id: "verdict" }, t("verify.checking"));
  if (verdict.error) return h("p", { class: "verdict failed", role: "alert", id: "verdict", "data-ok": "false" }, t("verify.unavailable"));
  if (verdict.ok) {
    return h("p", { class: "verdict ok", role: "status", id: "verdict", "data-ok": "true" },
      t("verify.all_ok", { n: verdict.deals }));
  }
  return h("div", { class: "verdict failed", role: "alert", id: "verdict", "data-ok": "false" },
    h("p", {}, t("verify.failed")),
    h("ul", {}, verdict.problems.map((p) => h("li", { "data-scope": p.scope, "data-n": p.n, "data-reason": p.reason },
      t(`verify.${p.reason}`, { n: p.n })))));
}

/** The /replay/<game> page: the archived game played back, its deals verified here. */
export function archivedReplayPage(root, gameId, { topBar, render }) {
  const state = { replay: null, body: null, verdict: null, error: null };
  const draw = () => {
    document.title = `${t("replay.page_title")} — ${t("chrome.brand")}`;
    let content;
    if (state.error) content = h("p", { class: "error replay-error", role: "alert", "data-code": state.error }, t(`verify.error_${state.error}`));
    else if (!state.body) content = h("p", { class: "muted" }, t("common.loading"));
    else {
      // the names shown follow the reader's language (a deleted player's marker)
      state.replay.data = replayFileOf(state.body);
      const names = makeNames(state.replay.data.seats, null, null);
      content = [
        h("p", { class: "muted replay-archived" }, t("verify.archived", { when: formatTime(new Date(state.body.ended_at)) })),
        verdictPanel(state.verdict),
        replayPanel(state.replay, draw),
        gradingPanel(state.body.grading ?? null, names.seat,
          (seat) => state.body.seats[seat]?.kind === "human")];
    }
    render(root, h("div", {}, topBar(),
      h("main", { class: "replay-page", id: "replay" }, h("h1", {}, t("replay.page_title")), content)));
  };
  keysAnywhere(root, () => state.replay, draw);
  (async () => {
    try {
      const body = await getJson(`/api/games/${encodeURIComponent(gameId)}`);
      checkReplay(replayFileOf(body));
      state.body = body;
      state.replay = { data: null, step: 0 };
    } catch (err) {
      const known = ["game_not_found", "too_many_game_reads"];
      const code = err.code === "not_found" ? "game_not_found" : err.code;
      state.error = err instanceof ReplayError ? "damaged" : (known.includes(code) ? code : "unavailable");
      draw();
      return;
    }
    draw();
    try {
      state.verdict = await verifyGame(state.body);
    } catch {
      state.verdict = { error: true };
    }
    draw();
    // Not graded yet (the server grades a game once, off the table's path): ask again a
    // few times, a few seconds apart.
    for (let tries = 0; tries < 4 && !state.body.grading; tries += 1) {
      await new Promise((resolve) => { setTimeout(resolve, 3000); });
      try {
        const again = await getJson(`/api/games/${encodeURIComponent(gameId)}`);
        if (again.grading) {
          state.body.grading = again.grading;
          draw();
        }
      } catch {
        // shown as not ready; the next visit has it
      }
    }
  })();
  return draw;
}
