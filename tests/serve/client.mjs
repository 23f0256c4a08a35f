// Translates sentences from English into French through the npm package `translate`
// (its "libre" engine, a LibreTranslate client) pointed at a running `s2s serve`.
//
//     node tests/serve/client.mjs URL API_KEY SENTENCE...
//
// URL is the server's address (http://127.0.0.1:5000/); API_KEY is the key to send, or
// "" for none. Prints each translation on a line, in order. On a failure it prints one
// line "client.mjs: MESSAGE" on stderr (the server's error message, when it gave one)
// and exits 1. It gives up after 30 s.
import translate from "translate";

const [url, key, ...sentences] = process.argv.slice(2);
if (url === undefined || key === undefined || sentences.length === 0) {
  console.error("usage: node client.mjs URL API_KEY SENTENCE...");
  process.exit(2);
}

setTimeout(() => {
  console.error("client.mjs: timed out");
  process.exit(1);
}, 30000).unref();

translate.engine = "libre";
translate.url = new URL("translate", url).href;
if (key !== "") translate.key = key;

try {
  for (const s of sentences) console.log(await translate(s, { from: "en", to: "fr" }));
} catch (e) {
  // fetch's own failures ("fetch failed") say why in their cause
  const why = e.cause && e.cause.message ? ": " + e.cause.message : "";
  console.error("client.mjs: " + e.message + why);
  process.exit(1);
}
