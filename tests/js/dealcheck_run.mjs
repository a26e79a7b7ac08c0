// Runs the web page's deal checker (server/static/js/dealcheck.js) in Node, for the tests.
// Reads JSON from standard input:
//   {"packs": [seed hex, ...], "derive": [{"key": hex, "message": text}, ...],
//    "bodies": [GET /api/games/{id} answer, ...]}   (each part optional)
// and writes {"packs": [[card, ...]], "derive": [hex], "bodies": [verifyGame's answer]}.
import { fromHex, hmac, shuffledPack, toHex, verifyGame } from "../../server/static/js/dealcheck.js";

let input = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => { input += chunk; });
process.stdin.on("end", async () => {
  const job = JSON.parse(input);
  const out = {
    packs: await Promise.all((job.packs || []).map((s) => shuffledPack(fromHex(s)))),
    derive: await Promise.all((job.derive || []).map(async (d) => toHex(await hmac(fromHex(d.key), d.message)))),
    bodies: [],
  };
  for (const body of job.bodies || []) out.bodies.push(await verifyGame(body));
  process.stdout.write(JSON.stringify(out));
});
