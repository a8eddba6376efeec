/* Service worker: the app opens with no network.
 *
 * - The app shell (styles, scripts, icons, the offline page) is cached at install.
 * - Pages are network-first: each page seen online is kept, so it opens offline later; a page never
 *   seen shows the offline page, never the browser's error.
 * - Static files are served from the cache and refreshed in the background.
 * - htmx fragment requests are never answered from the page cache (they are not whole pages).
 */
"use strict";

const VERSION = "v1";
const SHELL_CACHE = `shell-${VERSION}`;
const PAGE_CACHE = "pages";
const SHELL = [
  "/offline",
  "/static/app.css",
  "/static/app.js",
  "/static/vendor/htmx.min.js",
  "/static/manifest.webmanifest",
  "/static/icons/icon-192.png",
  "/static/icons/icon-512.png",
];
const NETWORK_TIMEOUT_MS = 4000;

self.addEventListener("install", (event) => {
  event.waitUntil(
    caches.open(SHELL_CACHE).then((cache) => cache.addAll(SHELL)).then(() => self.skipWaiting())
  );
});

self.addEventListener("activate", (event) => {
  event.waitUntil(
    caches.keys()
      .then((keys) => Promise.all(
        keys.filter((k) => k.startsWith("shell-") && k !== SHELL_CACHE).map((k) => caches.delete(k))
      ))
      .then(() => self.clients.claim())
  );
});

self.addEventListener("message", (event) => {
  // Signing out on a shared tablet: forget the pages of the previous user.
  if (event.data && event.data.type === "forget-pages") {
    event.waitUntil(caches.delete(PAGE_CACHE));
  }
});

function isFragment(request) {
  return request.headers.get("HX-Request") === "true" && request.headers.get("HX-Boosted") !== "true";
}

function withTimeout(promise, ms) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("timeout")), ms);
    promise.then((value) => { clearTimeout(timer); resolve(value); },
                 (error) => { clearTimeout(timer); reject(error); });
  });
}

async function pageFromNetwork(request) {
  const response = await withTimeout(fetch(request), NETWORK_TIMEOUT_MS);
  const type = response.headers.get("Content-Type") || "";
  if (response.ok && !response.redirected && type.startsWith("text/html")) {
    const cache = await caches.open(PAGE_CACHE);
    await cache.put(new URL(request.url).pathname + new URL(request.url).search, response.clone());
  }
  return response;
}

async function page(request) {
  try {
    return await pageFromNetwork(request);
  } catch (error) {
    const url = new URL(request.url);
    const cached = await caches.match(url.pathname + url.search, { cacheName: PAGE_CACHE });
    if (cached) return cached;
    const offline = await caches.match("/offline", { cacheName: SHELL_CACHE });
    return offline || new Response("Offline", { status: 503, headers: { "Content-Type": "text/plain" } });
  }
}

async function staticFile(request, event) {
  const cached = await caches.match(request);
  const refresh = fetch(request).then(async (response) => {
    if (response.ok) {
      const cache = await caches.open(SHELL_CACHE);
      await cache.put(request, response.clone());
    }
    return response;
  });
  if (cached) {
    event.waitUntil(refresh.catch(() => undefined));
    return cached;
  }
  return refresh;
}

self.addEventListener("fetch", (event) => {
  const request = event.request;
  const url = new URL(request.url);
  if (request.method !== "GET" || url.origin !== self.location.origin) return;
  if (url.pathname.startsWith("/static/")) {
    event.respondWith(staticFile(request, event));
  } else if (isFragment(request) || url.pathname === "/sw.js") {
    return;  // straight to the network
  } else if (request.mode === "navigate" || (request.headers.get("Accept") || "").includes("text/html")
             || request.headers.get("HX-Boosted") === "true") {
    event.respondWith(page(request));
  }
});
