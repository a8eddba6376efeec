// The outbox: form posts the service worker kept on this device (static/formstore.js), sent again as they were.
// - With a fresh CSRF token and its Idempotency-Key (the server applies it once); it leaves on a 2xx/3xx.
// - Its files first, to /sync/blobs in 1 MiB chunks resumed from the server's offset; the form names each
//   by its SHA-256 (`<field>_sha256`).
// - A refusal (4xx) is the server's page, the form with its errors, kept to open (/outbox/correct/<id>).
// - Replay on page load, `online`, each successful htmx request, a timer and *Sync now*: a stopped server
//   raises no `online` event, and Safari has no Background Sync.
// - What a device keeps is one person's: posts are listed and sent while their author is signed in, permits are
//   held for whoever held them; signing out says what of theirs still waits (docs/sync.md).
// Also: the badge on every page, the outbox page (/outbox) and the "available offline" page (/offline/).
import "./formstore.js";
const CHUNK_BYTES = 1024 * 1024;  // docs/sync.md: the client sends 1 MiB chunks
const TIMER_MS = 30000;
const Held = DeviceStore("held");
const channel = "BroadcastChannel" in window ? new BroadcastChannel("outbox") : null;
const status = { login: false, unreachable: false, lastTry: null };

class LoginNeeded extends Error {} class Unreachable extends Error {}
// A file the server will not take by /sync/blobs (not a photo it takes, over the sender's quota, bytes that are not
// their hash): trying again changes nothing. Its post then goes with the file itself, which the server checks as it
// checks any file posted with a form, and whose refusal its page says beside the field.
class Refused extends Error {}
// A 4xx but a sign-in (401, already raised), a timeout (408) or too many requests (429) refuses for good.
const refusal = (response, what) => new ((response.status >= 400 && response.status < 500
                                         && ![408, 429].includes(response.status)) ? Refused : Unreachable)(
  `${what} ${response.status}`);

const byAge = (a, b) => (a.created_at < b.created_at ? -1 : 1);
const waitingIn = (posts) => posts.filter((p) => p.state === "waiting");
const json = (response) => response.json().catch(() => ({}));

const hex = (buffer) => Array.from(new Uint8Array(buffer), (b) => b.toString(16).padStart(2, "0")).join("");
const sha256 = async (blob) => hex(await crypto.subtle.digest("SHA-256", await blob.arrayBuffer()));

async function call(url, options) {
  const response = await fetch(url, { ...options, credentials: "same-origin", cache: "no-store" })
    .catch((error) => { throw new Unreachable(String(error)); });
  if (response.status === 401) throw new LoginNeeded();
  return response;
}

async function getJson(url, what) {
  const response = await call(url, { headers: { Accept: "application/json" } });
  if (!response.ok) throw new Unreachable(`${what} ${response.status}`);
  return json(response);
}

const postJson = (url, body, csrf) => call(url, { method: "POST", body: JSON.stringify(body),
                                                  headers: { "Content-Type": "application/json", "X-CSRFToken": csrf } });

// Upload a file's bytes, resuming where the server says it holds them up to.
async function uploadBlob(sha, blob, csrf) {
  const url = `/sync/blobs/${sha}`, held = await getJson(url, "blob status");
  if (held.complete) return;
  for (let offset = held.received || 0; offset < blob.size;) {
    const response = await call(url, { method: "PUT", body: blob.slice(offset, offset + CHUNK_BYTES), headers: {
      "Upload-Offset": String(offset), "X-CSRFToken": csrf, "Content-Type": "application/octet-stream" } });
    if (!response.ok && response.status !== 409) throw refusal(response, "blob chunk");
    offset = (await json(response)).received;  // 409: the server holds another length; go on from there
  }
  const done = await postJson(`${url}/complete`, { content_type: blob.type || "application/octet-stream" }, csrf);
  if (!done.ok) throw refusal(done, "blob complete");
}

async function sendPost(post, csrf) {
  const body = new FormData();
  for (const [name, value] of post.entries) {
    if (typeof value === "string") {
      body.append(name, name === "csrf_token" ? csrf : value);
    } else if (value.size) {  // not a file input left empty
      const sha = await sha256(value);
      try {
        await uploadBlob(sha, value, csrf);
        body.append(`${name}_sha256`, sha);
      } catch (error) {
        if (!(error instanceof Refused)) throw error;
        body.append(name, value, value.name);
      }
    }
  }
  const response = await call(post.url, { method: "POST", body, headers: { "Idempotency-Key": post.key } });
  if (response.redirected && new URL(response.url).pathname === "/login") throw new LoginNeeded();
  // Tried again later: the server's trouble, too many requests, or the same post still being applied (a 409 with
  // Retry-After). Any other 4xx, a 409 included (the record moved on meanwhile), is the server's refusal to keep.
  const later = response.status === 429 || response.status >= 500
    || (response.status === 409 && response.headers.has("Retry-After"));
  if (later) throw new Unreachable(`post ${response.status}`);
  await (response.ok ? FormStore.del(post.id) : FormStore.put({ ...post, state: "refused", html: await response.text() }));
  channel?.postMessage({ type: "changed" });  // the other tabs redraw too
  await refresh();
}

// The previous release kept its outbox in a database of its own (LEGACY: sync operations, their files in
// "blobs", and drafts of a form that is gone). What it holds is sent through /sync/push, its files first,
// then the database is deleted; sent again after a broken-off run, an op_id is applied once all the same.
const LEGACY = "inspect-offline";
async function legacyOutbox() {
  // Opened only if it is there: opening one that is not makes it, and that upgrade, caught by a tablet leaving the
  // page, stays open in the page WebKit freezes in its back/forward cache and holds up every other page's open
  // of it, so the next outbox page never listed its posts (docs/webkit.md).
  const known = indexedDB.databases ? await indexedDB.databases().catch(() => null) : null;
  if (known && !known.some((database) => database.name === LEGACY)) return null;
  return new Promise((resolve) => {
    const request = indexedDB.open(LEGACY);
    request.onupgradeneeded = () => request.transaction.abort();  // none on this device: make none
    request.onerror = () => resolve(null);
    request.onsuccess = () => {
      const tx = request.result.transaction(["outbox", "blobs"]), items = tx.objectStore("outbox").getAll();
      const blobs = tx.objectStore("blobs").getAll();
      tx.oncomplete = () => { request.result.close(); resolve({ items: items.result, blobs: blobs.result }); };
    };
  });
}
async function replayLegacy(legacy, csrf) {
  for (const item of legacy.items.sort(byAge)) {
    const files = legacy.blobs.filter((held) => (item.blobs || []).some((ref) => ref.sha256 === held.sha256));
    for (const held of files) {
      try {
        await uploadBlob(held.sha256, held.blob, csrf);
      } catch (error) {
        if (!(error instanceof Refused)) throw error;  // a file refused for good: its op is refused by itself below
      }
    }
    const response = await postJson("/sync/push", { sent_at: new Date().toISOString(), ops: [item.op] }, csrf);
    if (!response.ok && response.status !== 422) throw new Unreachable(`legacy push ${response.status}`);  // 422: never
  }
  indexedDB.deleteDatabase(LEGACY);
}

// A post is sent and listed only while who filled it in (its posted_by) is signed in: the server refuses it to
// others (401). Work kept before posts said whose it was waits until someone says it is theirs (#claim-all).
const { authorOf } = FormStore;
const pageUser = () => document.getElementById("main")?.dataset.user || null;  // whom the page was made for (base.html)
// Who is signed in: as the server last told the service worker (SignedIn), else as the page says. The offline and
// saved pages are made for no one, and a page left open may have been made for someone signed out since.
const me = async () => { const said = await SignedIn.get(); return said === undefined ? pageUser() : said; };
async function claim() {
  const unclaimed = (await FormStore.all()).filter((post) => !authorOf(post));
  await Promise.all(unclaimed.map((post) => FormStore.put({ ...post, entries: [...post.entries, ["posted_by", pageUser()]] })));
  status.legacyOf = pageUser();
  return syncNow();
}

async function run() {
  try {
    const [posts, legacy] = await Promise.all([FormStore.all(), legacyOutbox()]);
    const waiting = waitingIn(posts).sort(byAge);
    if (!waiting.length && !legacy) { status.login = false; return; }
    status.lastTry = new Date();
    const { user, csrf_token: csrf } = await getJson("/sync/session", "session");  // a fresh CSRF token
    if (!user) throw new LoginNeeded();
    status.login = status.unreachable = false;
    if (legacy && status.legacyOf === user.id) await replayLegacy(legacy, csrf);
    for (const post of waiting) {
      const fresh = await FormStore.get(post.id);  // another tab may have sent it (or the user corrected it)
      if (fresh && fresh.state === "waiting" && authorOf(fresh) === user.id) await sendPost(fresh, csrf);
    }
  } catch (error) {
    status[error instanceof LoginNeeded ? "login" : "unreachable"] = true;
  } finally {
    refresh();
  }
}

let running = null, again = false;
// Send what waits; one sender at a time per device (Web Lock), one run at a time per tab.
function syncNow() {
  if (running) { again = true; return running; }
  const work = navigator.locks ? navigator.locks.request("outbox-sync", { ifAvailable: true }, (lock) => lock && run()) : run();
  running = Promise.resolve(work).catch(() => null).then(() => {
    running = null;
    if (again) { again = false; return syncNow(); }
  });
  return running;
}

let soon = null;
const syncSoon = () => { clearTimeout(soon); soon = setTimeout(syncNow, 50); };

// --- what the pages show: their own words, from their <template>s (offline/outbox.html, held.html) ---
let objectUrls = [];

// A copy of the page's <template id>, each [data-field] given its text.
function fromTemplate(id, fields) {
  const copy = document.getElementById(id).content.firstElementChild.cloneNode(true);
  copy.querySelectorAll("[data-field]").forEach((el) => { el.textContent = fields[el.dataset.field]; });
  return copy;
}

// One of the page's sentences (a [data-say] of its <template id="<slot>-says">) in the slot, or none.
function say(slot, which, number) {
  if (!document.getElementById(slot)) return;
  const sentence = which ? fromTemplate(`${slot}-says`, { n: number }).querySelector(`[data-say="${which}"]`) : "";
  document.getElementById(slot).replaceChildren(sentence);
}

async function refresh() {
  const [posts, legacy, who] = await Promise.all([FormStore.all().then((all) => all.sort(byAge), () => null),
                                                  legacyOutbox(), me()]);
  if (!posts) return;  // no IndexedDB (private mode): nothing to show
  const shown = posts.filter((post) => [who, null].includes(authorOf(post)));  // others' are only counted
  const badge = document.getElementById("outbox-badge"), waiting = waitingIn(posts).length;
  if (badge) Object.assign(badge, { textContent: shown.length || "" }).setAttribute("data-count", shown.length);
  showNote("outbox-login", status.login && waiting);  // the notes are the page's own (base.html)
  if (who) sessionStorage.removeItem("signed-out");  // signed in again: the outbox itself shows their items
  const gone = !who && signedOut();
  showNote("signed-out-waiting", gone && posts.filter((post) => authorOf(post) === gone).length);
  say("outbox-status", status.login ? "login" : status.unreachable ? "unreachable" : posts.length ? null : "empty",
      status.lastTry && status.lastTry.toLocaleTimeString());
  say("outbox-others", posts.length > shown.length && "others", posts.length - shown.length);
  const unclaimed = shown.filter((post) => !authorOf(post)).length + (legacy ? legacy.items.length : 0);
  say("outbox-unclaimed", unclaimed && "unclaimed", unclaimed);
  renderOutbox(shown);
}

// A note of the page (hidden until now) shown with its number of items, or hidden.
function showNote(id, count) {
  const note = document.getElementById(id);
  if (!note) return;
  note.hidden = !count;
  if (count) note.querySelector("[data-waiting]").textContent = count;
}

// Who signed out last in this tab: the next page says what of theirs still waits on the device.
const signedOut = () => sessionStorage.getItem("signed-out");
document.addEventListener("submit", (event) => {
  if (event.target.matches("form[data-sign-out]")) sessionStorage.setItem("signed-out", pageUser() || "");
}, true);

// Drawn again only when what it lists changed: a list redrawn the same under a finger (each sync run ends with
// a redraw) would take the tap's end away from the button it began on, and the tap would do nothing.
function renderOutbox(posts) {
  const list = document.getElementById("outbox-list");
  if (!list) return;
  const drawn = JSON.stringify(posts.map((post) => [post.id, authorOf(post) ? post.state : "unclaimed"]));
  if (list.drawn === drawn) return;
  list.drawn = drawn;
  objectUrls.forEach(URL.revokeObjectURL);
  objectUrls = [];
  list.replaceChildren(...posts.map((post) => {
    const li = fromTemplate("outbox-item", { url: post.url, saved: new Date(post.created_at).toLocaleString() });
    const state = authorOf(post) ? post.state : "unclaimed";
    Object.assign(li, { id: `item-${post.id}` }).setAttribute("data-state", state);
    li.querySelectorAll("[data-if]").forEach((el) => { if (el.dataset.if !== state) el.remove(); });
    li.querySelectorAll("[data-correct]").forEach((a) => { a.href = `/outbox/correct/${post.id}`; });
    const photos = li.querySelector(".photo-grid");
    for (const [, file] of post.entries) {
      if (typeof file === "string" || !file.size) continue;  // a text field, or a file input left empty
      const img = photos.appendChild(document.createElement("li")).appendChild(new Image());
      objectUrls.push(img.src = URL.createObjectURL(file));
      img.alt = file.name;
    }
    if (!photos.children.length) photos.remove();
    return li;
  }));
}

// --- "available offline" ---------------------------------------------------------------------------
async function askWorker(message) {
  const pipe = new MessageChannel();
  (await navigator.serviceWorker.ready).active.postMessage(message, [pipe.port2]);
  return new Promise((resolve) => { pipe.port1.onmessage = (event) => resolve(event.data); });
}

// Held for the person the server listed them for (`user`); a row of no one (the release before) goes. The list is
// shown before the outcome is said: "Done" never stands beside the list as it was.
async function holdAll() {
  say("held-status", "asking");
  let outcome;
  try {
    const list = await getJson("/offline/pages.json", "pages"), user = list.user;
    const urls = list.permits.reduce((all, p) => all.concat(p.urls), list.common);
    say("held-status", "saving", urls.length);
    const saved = await askWorker({ type: "hold", urls }), now = new Date().toISOString();
    const missing = (pages) => pages.filter((u) => !saved[u]), rowId = (permitId) => `${user} ${permitId}`;
    await Promise.all(list.permits.map((p) => Held.put({ id: rowId(p.id), user, permit_id: p.id, number: p.number,
      site_address: p.site_address, urls: p.urls, held_at: now, missing: missing(p.urls) })));
    const listed = new Set(list.permits.map((p) => rowId(p.id)));
    await Promise.all((await Held.all()).filter((r) => !r.user || (r.user === user && !listed.has(r.id)))
      .map((r) => Held.del(r.id)));
    outcome = [missing(urls).length ? "failed" : "done", missing(urls).length || list.permits.length];
  } catch (error) {
    outcome = [error instanceof LoginNeeded ? "login" : "unreachable"];
  }
  await renderHeld();
  say("held-status", ...outcome);
}

async function renderHeld() {
  const list = document.getElementById("held-list");
  if (!list) return;
  const who = await me(), rows = (await Held.all()).filter((row) => who && row.user === who)
    .sort((a, b) => (a.number < b.number ? -1 : 1));
  list.replaceChildren(...(rows.length ? [] : [fromTemplate("held-none", {})]), ...rows.map((row) => {
    const li = fromTemplate("held-item", { number: row.number, site_address: row.site_address, pages: row.urls.length,
      held: row.urls.length - row.missing.length, held_at: new Date(row.held_at).toLocaleString() });
    li.id = `held-${row.permit_id}`;
    li.querySelector("a").href = row.urls[0];
    li.querySelector("[data-held-at]").setAttribute("data-held-at", row.held_at);
    return li;
  }));
}

// --- wiring ---------------------------------------------------------------------------------------
function onPage() { refresh(); renderHeld(); syncSoon(); }

document.addEventListener("click", (event) => {
  const target = event.target.closest?.("#sync-now, #hold-all, #claim-all");
  if (!target) return;
  event.preventDefault();
  if (target.id === "hold-all") return holdAll();
  if (target.id === "claim-all") return claim();
  say("outbox-status", "sending");
  syncNow();
});
// After a request htmx made: a form it posted in place may have been kept by the worker.
document.addEventListener("htmx:afterRequest", (event) => { if (event.detail?.successful) syncSoon(); refresh(); });
document.addEventListener("htmx:afterSettle", (event) => { if (event.detail?.boosted) onPage(); });
window.addEventListener("online", syncSoon);
if (channel) channel.onmessage = refresh;
setInterval(syncNow, TIMER_MS);
if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", onPage); else onPage();  // async: saved.html

window.Outbox = { syncNow, syncSoon, refresh, holdAll, status };
