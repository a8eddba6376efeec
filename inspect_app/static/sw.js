// Service worker: the app opens with no network.
// - The shell (styles, scripts, icons, the offline and saved pages) is cached at install, as no one's.
// - Pages are network-first, each kept as seen, so it opens offline later; a page never seen shows the
//   offline page. htmx fragments are never answered from the page cache (they are not whole pages).
// - Each page is kept for the person it was made for, and served from the device only while the server last
//   said they are signed in (its Signed-In-As header: SignedIn, formstore.js): on a shared tablet, no one is
//   shown a page held for someone else, also after the first one's sign-in expired without signing out.
// - A form post that cannot reach the server is kept on the device (static/formstore.js: its fields, files
//   and idempotency key) for the outbox, and answered with the server's "Saved on this device" page. So is a
//   post the server answers 401 (its author is not signed in: the sign-in expired, or someone else's is on):
//   the outbox sends it once its author is signed in again, and the server's page says it is kept. Only a
//   post from the app's own pages is kept (another site's form sent here is not this device's to send again).
// - /outbox/correct/<id> shows the server's answer to a refused post: the form, errors beside fields.
// - /sync is never touched: the outbox (static/outbox.js) talks to the server itself.
"use strict";
importScripts("/static/formstore.js");

// Replaced when served (offline/views.py) by a digest of the shell files below.
const VERSION = "dev";
const SHELL_CACHE = `shell-${VERSION}`;
const pagesOf = (user) => `pages-${user}`;  // the pages held for one person
const SHARED_PAGES = "pages";  // the release before kept everyone's pages in one cache: whose is not known
const SHELL = [
  "/offline", "/offline/saved", "/offline/saved?part=1", "/static/app.css", "/static/formstore.js", "/static/app.js",
  "/static/outbox.js", "/static/signature.js", "/static/markup.js", "/static/autosave.js",
  "/static/vendor/exifr-lite.esm.js", "/static/vendor/htmx.min.js", "/static/map.js",
  "/static/vendor/leaflet/leaflet.js", "/static/vendor/leaflet/leaflet.css", "/static/manifest.webmanifest",
  "/static/icons/icon-192.png", "/static/icons/icon-512.png",
];
const ROUTED = SHELL.filter((path) => path.startsWith("/static/")).concat("/offline/saved");
const NETWORK_TIMEOUT_MS = 4000;  // a server slower than this is gone (served: OFFLINE_SERVER_TIMEOUT_MS if set)
const CORRECTION = /^\/outbox\/correct\/([\w-]+)$/;
const NOT_KEPT = /^\/(login|logout)/;
// Only the app's own pages post forms the device keeps: a form another site sends here (a navigation, which this
// worker sees whoever started it) goes to the server as it is, and its refusal is not kept for the outbox to send
// again with a token of its own. The app's pages say where they are (Referrer-Policy: same-origin).
const postedHere = (request) => {
  try { return new URL(request.referrer).origin === self.location.origin; } catch { return false; }
};

self.addEventListener("install", (event) => {
  // Where the engine routes by itself (Static Routing API), the shell's files and the saved page come
  // straight from the cache, with no wait for this script; elsewhere the fetch handler below does the same.
  event.waitUntil(Promise.resolve(event.addRoutes?.({ source: { cacheName: SHELL_CACHE },
    condition: { or: ROUTED.map((pathname) => ({ urlPattern: { pathname }, requestMethod: "get" })) } }))
    .catch(() => null));  // routes refused: the fetch handler serves the same
  // Asked with no cookie: the shell is the same for everyone (it names no one who happened to be signed in).
  const asNoOne = SHELL.map((path) => new Request(path, { credentials: "omit" }));
  event.waitUntil(caches.open(SHELL_CACHE).then((cache) => cache.addAll(asNoOne)).then(() => self.skipWaiting()));
});

self.addEventListener("activate", (event) => {
  event.waitUntil(caches.keys().then((keys) => Promise.all(
    keys.filter((k) => (k.startsWith("shell-") && k !== SHELL_CACHE) || k === SHARED_PAGES).map((k) => caches.delete(k))
  )).then(() => self.clients.claim()));
});

// Who is signed in, as the server last said (SignedIn, formstore.js): read once, then kept up to date from the
// server's own answers (never from a page, nor from a page held on the device).
let signedIn;
async function whoIsSignedIn() {
  if (signedIn === undefined) signedIn = (await SignedIn.get()) ?? null;
  return signedIn;
}
async function learn(response) {
  const said = response.headers.get(SignedIn.HEADER);
  if (said === null || (said || null) === (await whoIsSignedIn())) return;  // not the app's answer, or no news
  signedIn = said || null;
  await SignedIn.set(signedIn).catch(() => null);  // known for this run of the worker all the same
}

// "Make my permits available offline": cache each page; answer which ones were saved.
self.addEventListener("message", (event) => {
  if (event.data && event.data.type === "hold" && event.ports[0]) {
    event.waitUntil(hold(event.data.urls || []).then((saved) => event.ports[0].postMessage(saved)));
  }
});

// A page's path and query: what it is kept under.
const cacheKey = (url) => new URL(url, self.location.origin).href.slice(self.location.origin.length);
const fromShell = (key) => caches.match(key, { cacheName: SHELL_CACHE });

// All asked for at once: a browser opens a few connections to a host at most (six), the rest queue there.
async function hold(urls) {
  const saved = {};
  await Promise.all(urls.map(async (url) => {
    const asked = fetch(url, { credentials: "same-origin", cache: "no-store", headers: { Accept: "text/html" } });
    saved[url] = await asked.then(async (response) => (await learn(response), keepPage(url, response))).catch(() => false);
  }));
  return saved;
}

const isFragment = (request) => request.headers.get("HX-Request") === "true" && request.headers.get("HX-Boosted") !== "true";

// Keeps a whole page (not an error, a redirect to /login or anything but HTML) for the person it was made for
// (none: it is not kept); says whether it did.
async function keepPage(url, response) {
  const user = response.headers.get(SignedIn.HEADER);
  const whole = Boolean(user) && response.ok && !response.redirected
    && (response.headers.get("Content-Type") || "").startsWith("text/html");
  if (whole) await (await caches.open(pagesOf(user))).put(cacheKey(url), response.clone());
  return whole;
}

// A page held for whoever is signed in (the server's last word), or none.
async function heldPage(key) {
  const user = await whoIsSignedIn();
  return user ? caches.match(key, { cacheName: pagesOf(user) }) : undefined;
}

// A server that does not answer within the timeout counts as gone; the request itself is not cut off.
function fetchInTime(request) {
  const late = new Promise((resolve, reject) => setTimeout(() => reject(new Error("timeout")), NETWORK_TIMEOUT_MS));
  return Promise.race([fetch(request), late]);
}

async function page(request) {
  try {
    const response = await fetchInTime(request);
    await learn(response);
    await keepPage(request.url, response);
    return response;
  } catch (error) {
    const key = cacheKey(request.url), held = await heldPage(key);
    if (held) return heldCopy(held);
    return (await fromShell(key)) || (await fromShell("/offline"))
      || new Response("Offline", { status: 503, headers: { "Content-Type": "text/plain" } });
  }
}

// A page answered from the device, not the server: its note "As known when held at ..." is shown
// (the server renders it `data-held-note hidden`; templates/permits/_now.html).
const heldCopy = (response) => withNote(response, "held-note");

// The server's page with the note it left for the device to show (`data-<note> hidden`) shown.
async function withNote(response, note) {
  const html = (await response.text()).replaceAll(` data-${note} hidden`, ` data-${note}`);
  const headers = new Headers(response.headers);
  headers.delete("Content-Length");  // the body is shorter now
  return new Response(html, { status: response.status, statusText: response.statusText, headers });
}

// The shell's files change only with VERSION (a digest of them, offline/views.py): served from the
// cache with no refresh. Other static files: the network first, the cache when there is none.
async function staticFile(request) {
  const cached = await fromShell(request);
  if (cached && SHELL.includes(new URL(request.url).pathname)) return cached;
  try {
    const response = await fetch(request);
    if (response.ok) await (await caches.open(SHELL_CACHE)).put(request, response.clone());
    return response;
  } catch (error) {
    return cached || Response.error();
  }
}

// A refused post opened for correction (/outbox/correct/<id>) is replaced by the corrected one, kept or
// delivered (a new refusal then shows on the page itself).
const correctedId = (request) => CORRECTION.exec(new URL(request.referrer || "/", self.location.origin).pathname)?.[1];
async function dropCorrected(request) {
  const id = correctedId(request);
  if (id) await FormStore.del(id);
}

// The refused post a corrected one was sent from (/outbox/correct/<id>), if any.
async function correcting(request) {
  const id = correctedId(request);
  return id ? FormStore.get(id) : null;
}

// The server's refusal to keep a post (outbox.js sendPost's reading): a 4xx but 401, 408 and 429, and a 409
// with Retry-After (the same post still being applied), which are tried again.
const refusal = (answer) => answer.status >= 400 && answer.status < 500 && ![401, 408, 429].includes(answer.status)
  && !(answer.status === 409 && answer.headers.has("Retry-After"));

// A page's form (a navigation) gets the saved page; a form htmx posts in place gets its fragment. A browser
// offline by its own account is not asked to try the network (a stopped server is tried, until the timeout).
// A form with no idempotency key is not kept: it goes to the page of this app its `offline_page` names (the
// permit page's "Start": the held new report of that type), or to the offline page.
// A post the server answered 401 did not reach anyone's record: kept the same, and answered with the server's
// page, its note "kept on this device" shown (templates/errors/_401.html).
async function formPost(request) {
  const offline = !navigator.onLine;
  const copy = offline ? request : request.clone();  // the body can be read once: keep a copy to store
  // A boosted form is a page's (htmx swaps the answer's body in): it gets the whole saved page, not the fragment.
  const inPlace = request.mode !== "navigate" && request.headers.get("HX-Boosted") !== "true";
  const answer = offline ? null : await fetchInTime(request).catch(() => null);
  if (answer) await learn(answer);
  if (answer && answer.status !== 401) {
    const corrected = refusal(answer) ? await correcting(request) : null;
    if (corrected) {
      // A correction refused again stays in the outbox, as it was just sent, with the server's new answer to open
      // and correct: the server kept nothing of it (a report made on the device is made by its first post kept).
      const form = await copy.formData();
      await FormStore.put({ ...corrected, url: cacheKey(request.url), entries: Array.from(form.entries()),
                            key: form.get("idempotency_key") || corrected.key, state: "refused",
                            html: await answer.clone().text() });
      // Shown from the outbox again (the same answer), so the next correction sent from it takes this one's place.
      return request.mode === "navigate" ? Response.redirect(`/outbox/correct/${corrected.id}`, 303) : answer;
    }
    await dropCorrected(request);  // the server has the corrected post: its answer is the page now
    return answer;
  }
  const form = await copy.formData();
  if (!form.get("idempotency_key")) {
    if (answer) return answer;  // its page says nothing was kept
    if (inPlace) return Response.error();
    const elsewhere = new URL(form.get("offline_page") || "/offline", self.location.origin);
    return Response.redirect(elsewhere.origin === self.location.origin ? elsewhere : "/offline", 303);
  }
  await keep(cacheKey(request.url), form);
  await dropCorrected(request);  // kept first: a failed put must not lose the post it corrects
  if (answer) return withNote(answer, "kept-note");
  return inPlace ? fromShell("/offline/saved?part=1") : Response.redirect("/offline/saved", 303);
}

// A post sent again with the key of one that waits (Back, a second tab, a second tap) is that post: the one
// kept first stands, as the server answers a key it has seen with its first answer.
async function keep(url, form) {
  const key = form.get("idempotency_key");
  if ((await FormStore.all()).some((post) => post.key === key && post.url === url && post.state === "waiting")) return;
  await FormStore.put({ id: crypto.randomUUID(), url, entries: Array.from(form.entries()), key,
                        created_at: new Date().toISOString(), state: "waiting" });
}

// Signing out on a shared tablet: the pages held for whoever signs out go, with their list; what they saved
// and typed stays on the device, theirs alone (the pages say what still waits: static/outbox.js).
// With no connection, the device signs them out by itself at once (no page or post is theirs here any more),
// keeps the sign-out, and tells the server before anything else once it answers again (tellSignOut): else the
// tablet would stay signed in as them, and the next person's work would be recorded in their name.
async function signOut(request) {
  const user = await whoIsSignedIn(), form = request.clone().formData();
  let response;
  try {
    await tellSignOut();
    response = await fetchInTime(request);
  } catch (error) {
    await Device.put({ id: "sign-out", user, entries: Array.from((await form).entries()) });
    kept = undefined;
    if (user) await forget(user);
    signedIn = null;
    await SignedIn.set(null).catch(() => null);
    return withNote(await fromShell("/offline"), "signed-out-note");
  }
  await learn(response);
  // Signed out: the server's redirect to the sign-in page. A refusal (a stale page's token) signed no one out.
  if (user && (response.type === "opaqueredirect" || response.redirected || response.ok)) await forget(user);
  return response;
}

const Device = DeviceStore("device");
async function forget(user) {
  const held = DeviceStore("held"), theirs = (await held.all()).filter((row) => row.user === user);
  await Promise.all([caches.delete(pagesOf(user)), ...theirs.map((row) => held.del(row.id))]);
}

// A sign-out tapped with no connection, told now (its form, token included, as it was posted); kept if the server
// still cannot be reached. Any answer of the server ends it: signed out, or no longer signed in anyway.
let kept;  // the sign-out waiting to be told: undefined until read
async function tellSignOut() {
  if (kept === undefined) kept = (await Device.get("sign-out").catch(() => null)) || null;
  if (!kept) return;
  const body = new FormData();
  kept.entries.forEach(([name, value]) => body.append(name, value));
  await fetchInTime(new Request("/logout", { method: "POST", body, credentials: "same-origin", redirect: "manual" }));
  kept = null;
  await Device.del("sign-out").catch(() => null);
}
// Before the page or post that found the server again (still gone: that request is answered from the device).
const toldFirst = (handle) => (request) => tellSignOut().then(() => handle(request), () => handle(request));

// A refused post is opened by its author alone.
async function correction(id) {
  const item = await FormStore.get(id);
  if (!item || !item.html || FormStore.authorOf(item) !== (await whoIsSignedIn())) return Response.redirect("/outbox", 303);
  return new Response(item.html, { headers: { "Content-Type": "text/html; charset=utf-8" } });
}

self.addEventListener("fetch", (event) => {
  const request = event.request;
  const url = new URL(request.url);
  if (url.origin !== self.location.origin || url.pathname.startsWith("/sync/")) return;
  if (request.method === "POST" && url.pathname === "/logout" && postedHere(request)) {
    return event.respondWith(signOut(request));
  }
  if (request.method === "POST" && (request.mode === "navigate" || request.headers.get("HX-Request"))
      && !NOT_KEPT.test(url.pathname) && postedHere(request)) {
    return event.respondWith(toldFirst(formPost)(request));
  }
  if (request.method === "POST" && url.pathname === "/login") return event.respondWith(toldFirst(fetch)(request));
  const fix = CORRECTION.exec(url.pathname);
  if (request.method === "GET" && fix) return event.respondWith(correction(fix[1]));
  if (request.method !== "GET") return;
  // The saved page is shown only when a post did not reach the server: no network try.
  if (url.pathname === "/offline/saved") return event.respondWith(fromShell(cacheKey(url)).then((kept) => kept || page(request)));
  if (url.pathname.startsWith("/static/")) {
    event.respondWith(staticFile(request));
  } else if (isFragment(request) || url.pathname === "/sw.js") {
    return;  // straight to the network
  } else if (request.mode === "navigate" || (request.headers.get("Accept") || "").includes("text/html")
             || request.headers.get("HX-Boosted") === "true") {
    event.respondWith(toldFirst(page)(request));
  }
});
