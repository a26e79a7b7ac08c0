// Entry point. Every page is index.html: "/" the start page, "/r/<room>" a table,
// "/rules" and "/rules/<variant>" the rules, "/replay" the replay viewer, "/p/<player>" a
// player's ratings, statistics and games, "/leaderboard" the leaderboards (leaderboard.js),
// "/replay/<game>" an archived game, its deals verified,
// "/you" the player's own page and "/link/<code>" a one-time code's link (you.js). The
// language's catalogue is loaded first (i18n.js); then, but on a code's link, the player
// this browser is (player.js: made on the first visit), whom a language switch is told, and
// the page's challenges connection (social.js).
import { startPage } from "./create.js";
import { replaceKeepingFocus } from "./dom.js";
import { initI18n, onLanguageChange, t } from "./i18n.js";
import { topBar } from "./layout.js";
import { archivedReplayPage, profilePage } from "./history.js";
import { leaderboardPage } from "./leaderboard.js";
import { ensurePlayer, saveLanguage } from "./player.js";
import { replayFilePage } from "./replay.js";
import { roomPage } from "./room.js";
import { rulesPage } from "./rules.js";
import { startSocial } from "./social.js";
import { linkPage, youPage } from "./you.js";

await initI18n();
const root = document.getElementById("app");
const skip = document.querySelector(".skip-link");
const label = () => { if (skip) skip.textContent = t("chrome.skip"); };
label();
onLanguageChange(label);
onLanguageChange(saveLanguage);

const path = location.pathname;
const link = path.match(/^\/link\/([A-Za-z0-9_-]{1,40})\/?$/);
if (!link && !/^\/you\/?$/.test(path)) await ensurePlayer(); // /you makes its own
// Challenges reach the player on every page but a code's link (social.js).
if (!link) startSocial();
const room = path.match(/^\/r\/([A-Za-z0-9_-]{4,32})\/?$/);
const rules = path.match(/^\/rules(?:\/([^/]+))?\/?$/);
// Any id at all: one that is not well formed gets the page's own "not found" (the API
// answers it 404), not the start page under an address that names something else.
const player = path.match(/^\/p\/(.*?)\/?$/);
const archived = path.match(/^\/replay\/(.+?)\/?$/);
const own = (page, id) => {
  const draw = page(root, id, { topBar, render: replaceKeepingFocus });
  onLanguageChange(draw);
};
if (link) linkPage(root, link[1]);
else if (/^\/you\/?$/.test(path)) youPage(root);
else if (/^\/leaderboard\/?$/.test(path)) {
  const draw = leaderboardPage(root, { topBar, render: replaceKeepingFocus });
  onLanguageChange(draw);
}
else if (room) roomPage(root, room[1]);
else if (player) own(profilePage, player[1]);
else if (archived) own(archivedReplayPage, archived[1]);
else if (rules) rulesPage(root, rules[1] || "standard");
else if (/^\/replay\/?$/.test(path)) {
  const draw = replayFilePage(root, { topBar, render: replaceKeepingFocus });
  onLanguageChange(draw);
  draw();
} else startPage(root);
