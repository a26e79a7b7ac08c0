// The leaderboard (/leaderboard?kind=2|3|4|2x2): the top 100 of a table kind by rating and,
// for this browser's player, their place and neighbours ("around me"); and the ratings
// panel of a player's page (/p/<player>): each table kind's rating (provisional marked),
// its history and the rated games abandoned. Everything read comes from the HTTP API
// (docs/protocol.md "Ratings and leaderboards"); names are text, never markup.
import { h } from "./dom.js";
import { formatNumber, formatTime, t } from "./i18n.js";
import { getJson, playerHeaders } from "./history.js";

export const KINDS = ["2", "3", "4", "2x2"];

function myId() {
  const auth = playerHeaders().Authorization || "";
  const m = auth.match(/^Player ([a-z2-7]{16})\./);
  return m ? m[1] : null;
}

function nameOf(e) {
  if (e.private) return t("board.private_player");
  return e.name || t("history.no_name");
}

function entryRow(e, me) {
  const mine = e.player === me;
  return h("tr", { "data-player": e.player, "data-rank": e.rank, class: mine ? "board-me" : null, "aria-current": mine ? "true" : null },
    h("td", {}, formatNumber(e.rank)),
    h("td", {}, e.private ? h("span", {}, nameOf(e)) : h("a", { href: `/p/${encodeURIComponent(e.player)}` }, nameOf(e))),
    h("td", {}, formatNumber(e.rating)),
    h("td", {}, formatNumber(e.games)),
    h("td", {}, formatNumber(e.wins)));
}

function boardTable(id, caption, entries, me) {
  return h("div", { class: "table-scroll" }, h("table", { class: "games-table board-table", id },
    h("caption", {}, caption),
    h("thead", {}, h("tr", {}, ["rank", "player", "rating", "games", "wins"].map((c) =>
      h("th", { scope: "col" }, t(`board.col_${c}`))))),
    h("tbody", {}, entries.map((e) => entryRow(e, me)))));
}

/** The /leaderboard page. Returns its draw function (called again on a language change). */
export function leaderboardPage(root, { topBar, render }) {
  const asked = new URLSearchParams(location.search).get("kind");
  const state = { kind: KINDS.includes(asked) ? asked : "2", board: null, error: null };
  const me = myId();
  const load = async () => {
    state.board = null;
    state.error = null;
    draw();
    try {
      const query = me ? `?around=${encodeURIComponent(me)}` : "";
      state.board = await getJson(`/api/leaderboards/${encodeURIComponent(state.kind)}${query}`);
    } catch (err) {
      state.error = err.code === "too_many_leaderboard_reads" ? err.code : "unavailable";
    }
    draw();
  };
  const choose = (kind) => {
    state.kind = kind;
    history.replaceState(null, "", `/leaderboard?kind=${encodeURIComponent(kind)}`);
    load().then(() => root.querySelector(`[data-kind="${kind}"]`)?.focus());
  };
  const draw = () => {
    document.title = `${t("board.page_title")} — ${t("chrome.brand")}`;
    const tabs = h("nav", { class: "board-kinds", "aria-label": t("board.kinds") },
      KINDS.map((k) => h("button", {
        type: "button", "data-kind": k, "aria-pressed": String(k === state.kind),
        onclick: () => choose(k),
      }, t(`profile.kind_${k}`))));
    let body;
    const b = state.board;
    if (state.error) body = h("p", { class: "error board-error", role: "alert", "data-code": state.error }, t(`board.error_${state.error}`));
    else if (!b) body = h("p", { class: "muted" }, t("common.loading"));
    else {
      body = [
        h("p", { class: "muted board-note" }, t("board.note", { n: b.min_games })),
        b.around ? h("section", { class: "panel board-around", "aria-labelledby": "around-h" },
          h("h2", { id: "around-h" }, t("board.around")),
          boardTable("board-around", t("board.around_caption", { rank: b.me.rank }), b.around, me))
          : b.me ? h("p", { class: "board-off", id: "board-off" },
            t("board.yours_off", { rating: formatNumber(b.me.rating), games: formatNumber(b.me.games), n: b.min_games }))
          : (me ? h("p", { class: "muted board-off", id: "board-off" }, t("board.not_on", { n: b.min_games })) : null),
        h("section", { class: "panel board-top", "aria-labelledby": "top-h" },
          h("h2", { id: "top-h" }, t("board.top")),
          b.top.length ? boardTable("board-top", t("board.top_caption", { kind: t(`profile.kind_${b.table_kind}`) }), b.top, me)
            : h("p", { class: "muted", id: "board-empty" }, t("board.empty"))),
      ];
    }
    render(root, h("div", {}, topBar({ board: true }),
      h("main", { class: "board-page", id: "leaderboard" },
        h("h1", {}, t("board.page_title")), tabs, body)));
  };
  load();
  return draw;
}

/** The ratings panel of a player's page: `r` is GET /api/players/{id}/ratings. */
export function ratingsPanel(r) {
  const rows = r.ratings.map((x) => h("tr", { "data-kind": x.table_kind, "data-provisional": String(x.provisional) },
    h("th", { scope: "row" }, h("a", { href: `/leaderboard?kind=${encodeURIComponent(x.table_kind)}` }, t(`profile.kind_${x.table_kind}`))),
    h("td", {}, formatNumber(x.rating), x.provisional ? [" ", h("span", { class: "provisional" }, t("ratings.provisional"))] : null),
    h("td", {}, formatNumber(x.games)),
    h("td", {}, x.rank === null ? "—" : formatNumber(x.rank))));
  const changes = r.history.map((c) => h("tr", { "data-source": c.source_id },
    h("td", {}, formatTime(new Date(c.at))),
    h("td", {}, t(`profile.kind_${c.table_kind}`)),
    h("td", {}, t(c.source === "match" ? "ratings.match" : "ratings.game")),
    h("td", {}, c.abandoned ? t("ratings.abandoned_place") : t("ratings.place", { rank: c.rank, of: c.teams })),
    h("td", {}, `${formatNumber(c.before)} → ${formatNumber(c.after)}`),
    h("td", {}, h("a", { href: `/replay/${c.game}` }, t("history.watch")))));
  return h("section", { class: "panel profile-ratings", "aria-labelledby": "ratings-h" },
    h("h2", { id: "ratings-h" }, t("ratings.title")),
    r.ratings.length ? h("div", { class: "table-scroll" }, h("table", { class: "stats-table", id: "ratings" },
      h("caption", {}, t("ratings.caption")),
      h("thead", {}, h("tr", {}, ["kind", "rating", "games", "rank"].map((c) => h("th", { scope: "col" }, t(`ratings.col_${c}`))))),
      h("tbody", {}, rows))) : h("p", { class: "muted", id: "ratings-none" }, t("ratings.none")),
    h("p", { id: "ratings-abandoned", "data-n": r.abandoned }, t("ratings.abandoned", { n: r.abandoned })),
    changes.length ? h("div", { class: "table-scroll" }, h("table", { class: "games-table", id: "rating-history" },
      h("caption", {}, t("ratings.history")),
      h("thead", {}, h("tr", {}, ["date", "kind", "what", "place", "change", "replay"].map((c) => h("th", { scope: "col" }, t(`ratings.hcol_${c}`))))),
      h("tbody", {}, changes))) : null,
    h("p", { class: "muted ratings-how" }, t("ratings.how")));
}
