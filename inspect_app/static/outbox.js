// The outbox: form posts the service worker kept on this device (static/formstore.js), sent again as they were.
// - With a fresh CSRF token and its Idempotency-Key (the server applies it once); it leaves on a 2xx/3xx.
// - Its files first, to /sync/blobs in 1 MiB chunks resumed from the server's offset; the form names each
//   by its SHA-256 (`<field>_sha256`).
// - A refusal (4xx) is the server's page, the form with its errors, kept to open (/outbox/correct/<id>).
// - Replay on page load, `online`, each successful htmx request, a timer and *Sync now*: a stopped server
//   raises no `online` event, and Safari has no Background Sync.
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

  // --- what the pages show: their own words, from their <template>s (offline/outbox.html, held.html) ---
  var objectUrls = [];

  // A copy of the page's <template id>, each [data-field] given its text.
  function fromTemplate(id, fields) {
    var copy = document.getElementById(id).content.firstElementChild.cloneNode(true);
    copy.querySelectorAll("[data-field]").forEach(function (el) { el.textContent = fields[el.dataset.field]; });
    return copy;
  }

  // One of the page's sentences (a [data-say] of its <template id="<slot>-says">) in the slot, or none.
  function say(slot, which, number) {
    if (!document.getElementById(slot)) return;
    var sentence = which ? fromTemplate(slot + "-says", { n: number }).querySelector('[data-say="' + which + '"]') : "";
    document.getElementById(slot).replaceChildren(sentence);
  }

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
    var list = document.getElementById("outbox-list");
    say("outbox-status", status.login ? "login" : status.unreachable ? "unreachable" : posts.length ? null : "empty",
        status.lastTry && status.lastTry.toLocaleTimeString());
    if (!list) return;
    objectUrls.forEach(URL.revokeObjectURL);
    objectUrls = [];
    list.replaceChildren.apply(list, posts.map(function (post) {
      var li = fromTemplate("outbox-item", { url: post.url, saved: new Date(post.created_at).toLocaleString() });
      li.id = "item-" + post.id;
      li.setAttribute("data-state", post.state);
      li.querySelectorAll("[data-if]").forEach(function (el) { if (el.dataset.if !== post.state) el.remove(); });
      li.querySelectorAll("[data-correct]").forEach(function (a) { a.href = "/outbox/correct/" + post.id; });
      var photos = li.querySelector(".photo-grid");
      post.entries.forEach(function (e) {
        if (typeof e[1] === "string" || !e[1].size) return;  // a text field, or a file input left empty
        var img = photos.appendChild(document.createElement("li")).appendChild(new Image());
        objectUrls.push(img.src = URL.createObjectURL(e[1]));
        img.alt = e[1].name;
      });
      if (!photos.children.length) photos.remove();
      return li;
    }));
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
    say("held-status", "asking");
    return getJson("/offline/pages.json", "pages").then(function (list) {
      var urls = list.permits.reduce(function (all, p) { return all.concat(p.urls); }, list.common);
      say("held-status", "saving", urls.length);
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
          say("held-status", failed ? "failed" : "done", failed || list.permits.length);
        });
      });
    }).catch(function (error) {
      say("held-status", error instanceof LoginNeeded ? "login" : "unreachable");
    }).then(renderHeld);
  }

  function renderHeld() {
    var list = document.getElementById("held-list");
    if (!list) return Promise.resolve();
    return Held.all().then(function (rows) {
      list.replaceChildren(rows.length ? "" : fromTemplate("held-none", {}));
      rows.sort(function (a, b) { return a.number < b.number ? -1 : 1; }).forEach(function (row) {
        var li = list.appendChild(fromTemplate("held-item", {
          number: row.number, site_address: row.site_address, held_at: new Date(row.held_at).toLocaleString(),
          held: row.urls.length - row.missing.length, pages: row.urls.length }));
        li.id = "held-" + row.id;
        li.querySelector("a").href = row.urls[0];
        li.querySelector("[data-held-at]").setAttribute("data-held-at", row.held_at);
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
    say("outbox-status", "sending");
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
