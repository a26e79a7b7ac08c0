// Entry point: "/" is the start page, "/r/<room>" a table (both served as index.html).
import { startPage } from "./create.js";
import { roomPage } from "./room.js";

const root = document.getElementById("app");
const match = location.pathname.match(/^\/r\/([A-Za-z0-9_-]{4,32})\/?$/);
if (match) roomPage(root, match[1]);
else startPage(root);
