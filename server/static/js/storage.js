// What the browser remembers (localStorage), so a reload or a dropped connection comes back
// to the same seat: per room the player token, the seat and its seat token, the creator
// token, and which deal's show this player has seen. The display name is remembered for
// all rooms (and, in i18n.js and sound.js, the language and the sound switch). The story of
// the game is not kept here: the server gives it back (`history`).

const PREFIX = "cribbage.";

function read(key, fallback) {
  try {
    const raw = localStorage.getItem(PREFIX + key);
    return raw === null ? fallback : JSON.parse(raw);
  } catch {
    return fallback; // storage disabled or corrupt: behave as a first visit
  }
}

function write(key, value) {
  try {
    localStorage.setItem(PREFIX + key, JSON.stringify(value));
  } catch {
    /* private mode / quota: the game still works, only resuming does not */
  }
}

export const loadName = () => read("name", "");
export const saveName = (name) => write("name", name);

/** The room record: {playerToken, seat, seatToken, creatorToken, autoSit, showSeen} */
export function loadRoom(roomId) {
  return read(`room.${roomId}`, {});
}

export function updateRoom(roomId, changes) {
  const record = { ...loadRoom(roomId), ...changes };
  write(`room.${roomId}`, record);
  return record;
}

/** Ids of accepted challenges whose table this browser went to (social.js). */
export const loadSeen = () => {
  const seen = read("challenges_seen", []);
  return Array.isArray(seen) ? seen : [];
};
export const saveSeen = (ids) => write("challenges_seen", ids);
