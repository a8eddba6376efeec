// The outbox: form posts the service worker kept on this device (static/formstore.js) while the server
// could not be reached, sent again as they were.
//
// - Each goes with a fresh CSRF token and its Idempotency-Key: the server applies it once and answers a
//   repeat with its first answer. It leaves the outbox only once the server answered 2xx/3xx.
// - Its files go first, to /sync/blobs in 1 MiB chunks that resume from the server's offset; the form then
//   names each by its SHA-256 (`<field>_sha256`).
// - A refusal (4xx) is the server's own page: the form with its errors beside the fields. It is kept for
//   the user to open (/outbox/correct/<id>, served by the worker), correct and send again.
// - Replay runs on page load, on `online`, after every successful htmx request, on a timer and on
//   *Sync now*: a stopped server raises no `online` event, and Safari has no Background Sync.
// Also: the badge on every page, the outbox page (/outbox) and the "available offline" page (/offline/).
(function () {
  "use strict";

  if (window.Outbox) return;

  var CHUNK_BYTES = 1024 * 1024;  // docs/sync.md: the client sends 1 MiB chunks
  var TIMER_MS = 30000;
  var Held = DeviceStore("held");
  var channel = "BroadcastChannel" in window ? new BroadcastChannel("outbox") : null;
  var status = { login: false, unreachable: false, lastTry: null };

  function LoginNeeded() { this.message = "login"; }
  function Unreachable(detail) { this.message = "unreachable: " + detail; }

  function element(tag, attrs, content) {  // content: a text, or a list of elements and texts
    var el = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) { el.setAttribute(k, attrs[k]); });
    if (content !== undefined) el.append.apply(el, [].concat(content));
    return el;
  }

  function byAge(a, b) { return a.created_at < b.created_at ? -1 : 1; }

  function sha256(blob) {
    return blob.arrayBuffer().then(function (bytes) { return crypto.subtle.digest("SHA-256", bytes); })
      .then(function (digest) {
        return Array.from(new Uint8Array(digest), function (b) { return b.toString(16).padStart(2, "0"); }).join("");
      });
  }

  function call(url, options) {
    return fetch(url, Object.assign(options, { credentials: "same-origin", cache: "no-store" }))
      .catch(function (error) { throw new Unreachable(String(error)); })
      .then(function (response) {
        if (response.status === 401) throw new LoginNeeded();
        return response;
      });
  }

  function json(response) { return response.json().catch(function () { return {}; }); }

  function getJson(url, what) {
    return call(url, { headers: { Accept: "application/json" } }).then(function (response) {
      if (!response.ok) throw new Unreachable(what + " " + response.status);
      return json(response);
    });
  }

  function postJson(url, body, csrf) {
    return call(url, { method: "POST", body: JSON.stringify(body),
                       headers: { "Content-Type": "application/json", "X-CSRFToken": csrf } });
  }

  // The session's fresh CSRF token, or LoginNeeded.
  function session() {
    return getJson("/sync/session", "session").then(function (body) {
      if (!body.user) throw new LoginNeeded();
      return body.csrf_token;
    });
  }

  // Upload a file's bytes, resuming where the server says it holds them up to.
  function uploadBlob(sha, blob, csrf) {
    var url = "/sync/blobs/" + sha;
    function sendFrom(offset) {
      if (offset >= blob.size) {
        return postJson(url + "/complete", { content_type: blob.type || "application/octet-stream" }, csrf)
          .then(function (response) { if (!response.ok) throw new Unreachable("blob complete " + response.status); });
      }
      return call(url, {
        method: "PUT", body: blob.slice(offset, offset + CHUNK_BYTES),
        headers: { "Upload-Offset": String(offset), "X-CSRFToken": csrf, "Content-Type": "application/octet-stream" },
      }).then(function (response) {
        if (response.status === 409 || response.ok) return json(response).then(function (body) { return sendFrom(body.received); });
        throw new Unreachable("blob chunk " + response.status);
      });
    }
    return getJson(url, "blob status").then(function (held) {
      return held.complete ? null : sendFrom(held.received || 0);
    });
  }

  function sendPost(post, csrf) {
    var body = new FormData(), uploads = Promise.resolve();
    post.entries.forEach(function (e) {
      if (typeof e[1] === "string") { body.append(e[0], e[0] === "csrf_token" ? csrf : e[1]); return; }
      if (!e[1].size) return;  // a file input left empty
      uploads = uploads.then(function () { return sha256(e[1]); }).then(function (sha) {
        return uploadBlob(sha, e[1], csrf).then(function () { body.append(e[0] + "_sha256", sha); });
      });
    });
    return uploads.then(function () {
      return call(post.url, { method: "POST", body: body, headers: { "Idempotency-Key": post.key } });
    }).then(function (response) {
      if (response.redirected && new URL(response.url).pathname === "/login") throw new LoginNeeded();
      if (response.ok) return FormStore.del(post.id).then(changed);
      if (response.status >= 500 || response.status === 409 || response.status === 429) throw new Unreachable("post " + response.status);
      return response.text().then(function (html) {
        return FormStore.put(Object.assign(post, { state: "refused", html: html })).then(changed);
      });
    });
  }

  // The previous release kept its outbox in a database of its own (LEGACY: sync operations, their files in
  // "blobs", and drafts of a form that is gone). What it holds is sent through /sync/push, its files first,
  // then the database is deleted; sent again after a broken-off run, an op_id is applied once all the same.
  var LEGACY = "inspect-offline";
  function legacyOutbox() {
    return new Promise(function (resolve) {
      var request = indexedDB.open(LEGACY);
      request.onupgradeneeded = function () { request.transaction.abort(); };  // none on this device: make none
      request.onerror = function () { resolve(null); };
      request.onsuccess = function () {
        var tx = request.result.transaction(["outbox", "blobs"]), items = tx.objectStore("outbox").getAll();
        var blobs = tx.objectStore("blobs").getAll();
        tx.oncomplete = function () { request.result.close(); resolve({ items: items.result, blobs: blobs.result }); };
      };
    });
  }
  function replayLegacy(legacy, csrf) {
    return legacy.items.sort(byAge).reduce(function (chain, item) {
      return legacy.blobs.reduce(function (up, held) {
        var used = (item.blobs || []).some(function (ref) { return ref.sha256 === held.sha256; });
        return used ? up.then(function () { return uploadBlob(held.sha256, held.blob, csrf); }) : up;
      }, chain).then(function () {
        return postJson("/sync/push", { sent_at: new Date().toISOString(), ops: [item.op] }, csrf);
      }).then(function (response) {  // 422: an operation the server can never take (malformed)
        if (!response.ok && response.status !== 422) throw new Unreachable("legacy push " + response.status);
      });
    }, Promise.resolve()).then(function () { indexedDB.deleteDatabase(LEGACY); });
  }

  function run() {
    return Promise.all([FormStore.all(), legacyOutbox()]).then(function (found) {
      var waiting = found[0].filter(function (p) { return p.state === "waiting"; }).sort(byAge), legacy = found[1];
      if (!waiting.length && !legacy) { status.login = false; return null; }
      status.lastTry = new Date();
      return session().then(function (csrf) {
        status.login = status.unreachable = false;
        return waiting.reduce(function (chain, post) {
          return chain.then(function () { return FormStore.get(post.id); }).then(function (fresh) {
            // Another tab may have sent it (or the user corrected it) meanwhile.
            return fresh && fresh.state === "waiting" ? sendPost(fresh, csrf) : null;
          });
        }, legacy ? replayLegacy(legacy, csrf) : Promise.resolve());
      });
    }).then(function () { refresh(); }, function (error) {
      if (error instanceof LoginNeeded) status.login = true; else status.unreachable = true;
      refresh();
    });
  }

  var running = null, again = false;
  // Send what waits; one sender at a time per device (Web Lock), one run at a time per tab.
  function syncNow() {
    if (running) { again = true; return running; }
    var work = navigator.locks
      ? navigator.locks.request("outbox-sync", { ifAvailable: true }, function (lock) { return lock ? run() : null; })
      : run();
    running = Promise.resolve(work).catch(function () { return null; }).then(function () {
      running = null;
      if (again) { again = false; return syncNow(); }
    });
    return running;
  }

  var soon = null;
  function syncSoon() {
    clearTimeout(soon);
    soon = setTimeout(syncNow, 50);
  }

  function changed() {
    if (channel) channel.postMessage({ type: "changed" });
    return refresh();
  }

  // --- what the pages show --------------------------------------------------------------------------
  var objectUrls = [];

  function refresh() {
    return FormStore.all().then(function (posts) {
      var badge = document.getElementById("outbox-badge");
      if (badge) badge.textContent = posts.length ? String(posts.length) : "";
      if (badge) badge.setAttribute("data-count", String(posts.length));
      var waiting = posts.filter(function (p) { return p.state === "waiting"; }).length;
      var note = document.getElementById("outbox-login");  // the note is the page's own (base.html)
      if (note) note.hidden = !(status.login && waiting);
      if (note && waiting) note.querySelector("[data-waiting]").textContent = String(waiting);
      renderOutbox(posts.sort(byAge));
    }, function () { /* no IndexedDB (private mode): nothing to show */ });
  }

  function renderOutbox(posts) {
    var list = document.getElementById("outbox-list"), info = document.getElementById("outbox-status");
    if (info) {
      info.textContent = status.login ? "Log in again to send." :
        status.unreachable ? "The server cannot be reached right now; it will be tried again by itself." +
          (status.lastTry ? " Last try: " + status.lastTry.toLocaleTimeString() + "." : "") :
        posts.length ? "" : "Nothing waits: everything made on this device has reached the server.";
    }
    if (!list) return;
    objectUrls.forEach(URL.revokeObjectURL);
    objectUrls = [];
    list.textContent = "";
    posts.forEach(function (post) {
      var refused = post.state === "refused";
      var head = element("p", {}, [
        element("strong", {}, "Form for " + post.url), " · saved " + new Date(post.created_at).toLocaleString() + " ",
        element("span", { class: refused ? "pill pill-overdue" : "pill pill-due", "data-item-state": "" },
                refused ? "Refused" : "Waiting"),
      ]);
      var li = element("li", { id: "item-" + post.id, "data-state": post.state, class: "card outbox-item" }, [head]);
      var files = post.entries.filter(function (e) { return typeof e[1] !== "string" && e[1].size; });
      var photos = files.map(function (e) {
        var url = URL.createObjectURL(e[1]);
        objectUrls.push(url);
        return element("li", {}, [element("img", { src: url, alt: e[1].name || "Photo" })]);
      });
      if (photos.length) li.appendChild(element("ul", { class: "photo-grid" }, photos));
      if (refused) {
        li.append(element("p", { class: "field-error", "data-reasons": "" }, "Refused by the server: open it to see why."),
                  element("a", { class: "btn btn-secondary", href: "/outbox/correct/" + post.id, "data-correct": "" },
                          "Open and correct"));
      }
      list.appendChild(li);
    });
  }

  // --- "available offline" ---------------------------------------------------------------------------
  function askWorker(message) {
    return navigator.serviceWorker.ready.then(function (registration) {
      var worker = navigator.serviceWorker.controller || registration.active;
      return new Promise(function (resolve) {
        var pipe = new MessageChannel();
        pipe.port1.onmessage = function (event) { resolve(event.data); };
        worker.postMessage(message, [pipe.port2]);
      });
    });
  }

  function holdAll() {
    var info = document.getElementById("held-status");
    function say(text) { if (info) info.textContent = text; }
    say("Getting the list of your permits…");
    return getJson("/offline/pages.json", "pages").then(function (list) {
      var urls = list.permits.reduce(function (all, p) { return all.concat(p.urls); }, list.common);
      say("Saving " + urls.length + " pages on this device…");
      return askWorker({ type: "hold", urls: urls }).then(function (saved) {
        var now = new Date().toISOString(), listed = {};
        return Promise.all(list.permits.map(function (p) {
          listed[p.id] = true;
          return Held.put({ id: p.id, number: p.number, site_address: p.site_address, urls: p.urls, held_at: now,
                            missing: p.urls.filter(function (u) { return !saved[u]; }) });
        })).then(Held.all).then(function (rows) {
          return Promise.all(rows.filter(function (r) { return !listed[r.id]; }).map(function (r) { return Held.del(r.id); }));
        }).then(function () {
          var failed = urls.filter(function (u) { return !saved[u]; }).length;
          say(failed ? failed + " page(s) could not be saved; try again." :
              "Done: " + list.permits.length + " permit(s) are available offline.");
        });
      });
    }).catch(function (error) {
      say(error instanceof LoginNeeded ? "Log in first." : "No connection to the server: try again when online.");
    }).then(renderHeld);
  }

  function renderHeld() {
    var list = document.getElementById("held-list");
    if (!list) return Promise.resolve();
    return Held.all().then(function (rows) {
      list.textContent = "";
      if (!rows.length) list.appendChild(element("li", { class: "empty" }, "No permits are held on this device yet."));
      rows.sort(function (a, b) { return a.number < b.number ? -1 : 1; }).forEach(function (row) {
        list.appendChild(element("li", { id: "held-" + row.id }, [
          element("a", { href: row.urls[0] }, "Permit " + row.number), " · " + row.site_address + " · ",
          element("span", { "data-held-at": row.held_at }, "saved " + new Date(row.held_at).toLocaleString()),
          " · " + (row.urls.length - row.missing.length) + " of " + row.urls.length + " pages",
        ]));
      });
    });
  }

  // --- wiring ---------------------------------------------------------------------------------------
  function onPage() { refresh(); renderHeld(); syncSoon(); }

  document.addEventListener("click", function (event) {
    var target = event.target.closest && event.target.closest("#sync-now, #hold-all");
    if (!target) return;
    event.preventDefault();
    if (target.id === "hold-all") return holdAll();
    var info = document.getElementById("outbox-status");
    if (info) info.textContent = "Sending…";
    syncNow();
  });
  document.addEventListener("htmx:afterRequest", function (event) {
    if (event.detail && event.detail.successful) syncSoon();
    refresh();  // a form htmx posted in place may have been kept by the worker
  });
  document.addEventListener("htmx:afterSettle", function (event) {
    if (event.detail && event.detail.boosted) onPage();
  });
  window.addEventListener("online", syncSoon);
  if (channel) channel.onmessage = function () { refresh(); };
  setInterval(syncNow, TIMER_MS);
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", onPage); else onPage();

  window.Outbox = { syncNow: syncNow, syncSoon: syncSoon, refresh: refresh, holdAll: holdAll, status: status };
})();
