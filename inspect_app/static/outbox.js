// The outbox: work saved on this device (IndexedDB) and sent through the sync protocol (docs/sync.md).
//
// - An item leaves the outbox only after the server confirmed it (applied, or a duplicate of an applied
//   operation). Rejected items stay with the server's reasons until corrected; the others still go.
// - Replay runs on page load, on the `online` event, after every successful htmx request, on a timer and
//   on *Sync now*: a stopped server raises no `online` event, and Safari has no Background Sync.
// - Blobs (photos, signatures) go first, in chunks that resume from the server's offset.
// - A Web Lock keeps two tabs from sending the same item at once.
// Also: the badge on every page, the outbox page (/outbox) and the "available offline" page (/offline/).
(function () {
  "use strict";

  if (window.Outbox) return;

  var DB_NAME = "inspect-offline";
  var DB_VERSION = 1;
  var CHUNK_BYTES = 1024 * 1024;  // docs/sync.md: the client sends 1 MiB chunks
  var TIMER_MS = 30000;
  var channel = "BroadcastChannel" in window ? new BroadcastChannel("outbox") : null;

  // --- IndexedDB: a few promise helpers over plain IndexedDB -------------------------------------------
  var opening = null;
  function openDb() {
    if (opening) return opening;
    opening = new Promise(function (resolve, reject) {
      var request = indexedDB.open(DB_NAME, DB_VERSION);
      request.onupgradeneeded = function () {
        var db = request.result;
        // outbox: one item per operation (key op_id); blobs: photo and signature bytes (key sha256);
        // drafts: forms being filled in (key "inspection:<permit>:<type>"); held: permits held offline.
        db.createObjectStore("outbox", { keyPath: "op_id" });
        db.createObjectStore("blobs", { keyPath: "sha256" });
        db.createObjectStore("drafts", { keyPath: "key" });
        db.createObjectStore("held", { keyPath: "id" });
      };
      request.onsuccess = function () { resolve(request.result); };
      request.onerror = function () { opening = null; reject(request.error); };
    });
    return opening;
  }

  // Run `work(stores)` in one transaction; resolves with its result once the transaction committed.
  function transact(names, mode, work) {
    return openDb().then(function (db) {
      return new Promise(function (resolve, reject) {
        var tx = db.transaction(names, mode);
        var stores = {};
        names.forEach(function (name) { stores[name] = tx.objectStore(name); });
        var result;
        Promise.resolve(work(stores)).then(function (value) { result = value; }, function (error) {
          tx.abort();
          reject(error);
        });
        tx.oncomplete = function () { resolve(result); };
        tx.onerror = tx.onabort = function () { reject(tx.error || new Error("IndexedDB transaction aborted")); };
      });
    });
  }

  function req(request) {
    return new Promise(function (resolve, reject) {
      request.onsuccess = function () { resolve(request.result); };
      request.onerror = function () { reject(request.error); };
    });
  }

  var store = {
    get: function (name, key) { return transact([name], "readonly", function (s) { return req(s[name].get(key)); }); },
    all: function (name) { return transact([name], "readonly", function (s) { return req(s[name].getAll()); }); },
    put: function (name, value) { return transact([name], "readwrite", function (s) { return req(s[name].put(value)); }); },
    del: function (name, key) { return transact([name], "readwrite", function (s) { return req(s[name].delete(key)); }); },
  };

  // --- small helpers --------------------------------------------------------------------------------
  function pad(n) { return (n < 10 ? "0" : "") + n; }

  // An ISO time with the device's offset (the protocol's `device_time`, `sent_at`).
  function isoWithOffset(date) {
    var minutes = -date.getTimezoneOffset();
    var sign = minutes >= 0 ? "+" : "-";
    minutes = Math.abs(minutes);
    return date.getFullYear() + "-" + pad(date.getMonth() + 1) + "-" + pad(date.getDate()) + "T" +
      pad(date.getHours()) + ":" + pad(date.getMinutes()) + ":" + pad(date.getSeconds()) +
      sign + pad(Math.floor(minutes / 60)) + ":" + pad(minutes % 60);
  }

  function sha256(blob) {
    return blob.arrayBuffer().then(function (bytes) { return crypto.subtle.digest("SHA-256", bytes); })
      .then(function (digest) {
        return Array.prototype.map.call(new Uint8Array(digest), function (b) {
          return (b < 16 ? "0" : "") + b.toString(16);
        }).join("");
      });
  }

  function uuid() { return crypto.randomUUID(); }

  function when(iso) {
    try { return new Date(iso).toLocaleString(); } catch (e) { return iso; }
  }

  function element(tag, attrs, text) {
    var el = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) { el.setAttribute(k, attrs[k]); });
    if (text !== undefined) el.textContent = text;
    return el;
  }

  // A photo kept on this device, as the forms show it: the image, its caption and a Remove button.
  // `objectUrls` collects the image URLs for the caller to revoke; `changed` runs as the caption is typed.
  function photoTile(photo, objectUrls, changed, removed) {
    var tile = element("li", { "data-photo-id": photo.id });
    var img = element("img", { alt: "Photo " + (photo.caption || "") });
    store.get("blobs", photo.sha256).then(function (record) {
      if (!record) return;
      var url = URL.createObjectURL(record.blob);
      objectUrls.push(url);
      img.src = url;
    });
    // In no form: the caption is kept with the photo, not posted.
    var caption = element("input", { form: "photo-none", "aria-label": "Caption", placeholder: "Caption",
                                     maxlength: "2000" });
    caption.value = photo.caption || "";
    caption.addEventListener("input", function () { photo.caption = caption.value; changed(); });
    var remove = element("button", { type: "button", class: "btn btn-secondary" }, "Remove");
    remove.addEventListener("click", removed);
    tile.appendChild(img);
    tile.appendChild(caption);
    tile.appendChild(remove);
    return tile;
  }

  // --- queueing -------------------------------------------------------------------------------------
  // Put an item and its new blobs in the outbox in one transaction (and drop the draft it came from,
  // and the rejected item it corrects): a closed tab right after this loses nothing.
  function enqueue(item, blobs, options) {
    options = options || {};
    item.state = "waiting";
    item.created_at = item.created_at || new Date().toISOString();
    return transact(["outbox", "blobs", "drafts"], "readwrite", function (s) {
      (blobs || []).forEach(function (b) { s.blobs.put(b); });
      s.outbox.put(item);
      if (options.draftKey) s.drafts.delete(options.draftKey);
      if (options.replaces && options.replaces !== item.op_id) s.outbox.delete(options.replaces);
    }).then(function () { changed(); return item; });
  }

  function changed() {
    if (channel) channel.postMessage({ type: "changed" });
    refresh();
  }

  // Blobs no outbox item nor draft uses any more.
  function forgetBlobs(shas) {
    return transact(["outbox", "drafts", "blobs"], "readwrite", function (s) {
      return Promise.all([req(s.outbox.getAll()), req(s.drafts.getAll())]).then(function (found) {
        var used = {};
        found[0].forEach(function (item) { (item.blobs || []).forEach(function (b) { used[b.sha256] = true; }); });
        found[1].forEach(function (draft) { (draft.photos || []).forEach(function (p) { used[p.sha256] = true; }); });
        shas.forEach(function (sha) { if (!used[sha]) s.blobs.delete(sha); });
      });
    });
  }

  // --- sending --------------------------------------------------------------------------------------
  var status = { login: false, unreachable: false, lastTry: null, progress: {}, message: "" };

  function LoginNeeded() { this.message = "login"; }
  function Unreachable(detail) { this.message = "unreachable: " + detail; }
  function Refused(reasons) { this.reasons = reasons; }

  function call(url, options) {
    options = options || {};
    options.credentials = "same-origin";
    options.cache = "no-store";
    return fetch(url, options).catch(function (error) { throw new Unreachable(String(error)); })
      .then(function (response) {
        if (response.status === 401) throw new LoginNeeded();
        return response;
      });
  }

  function json(response) { return response.json().catch(function () { return {}; }); }

  // The session's user and a fresh CSRF token, or LoginNeeded.
  function session() {
    return call("/sync/session", { headers: { Accept: "application/json" } }).then(function (response) {
      if (response.status === 404) {  // a server without /sync/session: the page's own token
        var meta = document.querySelector('meta[name="csrf-token"]');
        return meta ? meta.content : "";
      }
      if (!response.ok) throw new Unreachable("session " + response.status);
      return json(response).then(function (body) {
        if (!body.user) throw new LoginNeeded();
        return body.csrf_token;
      });
    });
  }

  // `ref.blob`: the bytes themselves (a photo of a kept form post); else they are in the blobs store.
  function uploadBlob(ref, csrf, onBytes) {
    var url = "/sync/blobs/" + ref.sha256;
    return (ref.blob ? Promise.resolve({ blob: ref.blob, type: ref.blob.type }) : store.get("blobs", ref.sha256)).then(function (record) {
      if (!record) throw new Refused({ photos: "A photo of this item is missing on this device." });
      // Ask the server how much it holds first: a broken-off upload resumes there.
      return call(url, { headers: { Accept: "application/json" } }).then(function (response) {
        if (!response.ok) throw new Unreachable("blob status " + response.status);
        return json(response);
      }).then(function (held) {
        if (held.complete) { onBytes(record.blob.size); return null; }
        return sendFrom(held.received || 0);
      });

      function sendFrom(offset) {
        onBytes(offset);
        if (offset >= record.blob.size) return complete();
        var chunk = record.blob.slice(offset, offset + CHUNK_BYTES);
        return call(url, {
          method: "PUT", body: chunk,
          headers: { "Upload-Offset": String(offset), "X-CSRFToken": csrf, "Content-Type": "application/octet-stream" },
        }).then(function (response) {
          if (response.status === 409 || response.ok) {
            return json(response).then(function (body) { return sendFrom(body.received); });
          }
          throw new Unreachable("blob chunk " + response.status);
        });
      }

      function complete() {
        return call(url + "/complete", {
          method: "POST", body: JSON.stringify({ content_type: record.type || "application/octet-stream" }),
          headers: { "Content-Type": "application/json", "X-CSRFToken": csrf },
        }).then(function (response) {
          if (response.status === 422) {
            throw new Refused({ photos: "A photo was damaged on the way; it will be sent again." });
          }
          if (!response.ok) throw new Unreachable("blob complete " + response.status);
        });
      }
    });
  }

  function push(item, csrf) {
    return call("/sync/push", {
      method: "POST", body: JSON.stringify({ sent_at: isoWithOffset(new Date()), ops: [item.op] }),
      headers: { "Content-Type": "application/json", "X-CSRFToken": csrf, Accept: "application/json" },
    }).then(function (response) {
      return json(response).then(function (body) {
        if (response.status === 422 || response.status === 413) {
          var problem = (body.problems || [])[0];
          throw new Refused(problem ? problem.reasons : { "": body.error || "The server refused this item." });
        }
        if (!response.ok) throw new Unreachable("push " + response.status + " " + (body.error || ""));
        return body.results[0];
      });
    });
  }

  function save(item) { return store.put("outbox", item).then(changed); }

  function sendItem(item, csrf) {
    var total = (item.blobs || []).reduce(function (sum, b) { return sum + (b.size || 0); }, 0) || 1;
    var done = 0;
    item.state = "sending";
    status.progress[item.op_id] = 0;
    refresh();
    var chain = Promise.resolve();
    (item.blobs || []).forEach(function (ref) {
      chain = chain.then(function () {
        var base = done;
        return uploadBlob(ref, csrf, function (bytes) {
          status.progress[item.op_id] = Math.min(99, Math.floor(100 * (base + bytes) / total));
          renderProgress(item.op_id);
        }).then(function () { done = base + (ref.size || 0); });
      });
    });
    return chain.then(function () { return push(item, csrf); }).then(function (answer) {
      delete status.progress[item.op_id];
      // A duplicate answers with the first answer: only an applied original means the server has it.
      var settled = answer.status === "duplicate" ? (answer.original || {}).status : answer.status;
      if (settled === "applied") {
        return store.del("outbox", item.op_id).then(function () {
          return forgetBlobs((item.blobs || []).map(function (b) { return b.sha256; }));
        }).then(changed);
      }
      if (settled === "rejected" || settled === "conflict") {
        item.state = settled;
        item.reasons = (answer.original || answer).reasons ||
          { "": "Someone changed this record on the server meanwhile; both versions are kept for a person to reconcile." };
        return save(item);
      }
      item.state = "waiting";
      item.note = "The server holds it and is waiting for " + JSON.stringify(answer.waiting_for || {});
      return save(item);
    }, function (error) {
      delete status.progress[item.op_id];
      if (error instanceof Refused) {
        item.state = "rejected";
        item.reasons = error.reasons;
        return save(item);
      }
      item.state = "waiting";
      return save(item).then(function () { throw error; });
    });
  }

  // --- form posts kept by the service worker (static/formstore.js) ----------------------------------
  // Sent again as they were, with a fresh CSRF token and their Idempotency-Key: the server applies each
  // once and answers a repeat with its first answer. A refusal is the server's own page (the form with
  // its errors beside the fields), kept for the user to open, correct and send again.
  // Files go first, to /sync/blobs in chunks that resume; the form then names them by SHA-256.
  function sendPost(post, csrf) {
    var body = new FormData();
    var uploads = Promise.resolve();
    post.entries.forEach(function (e) {
      if (typeof e[1] === "string") { body.append(e[0], e[0] === "csrf_token" ? csrf : e[1]); return; }
      if (!e[1].size) return;  // a file input left empty
      uploads = uploads.then(function () { return sha256(e[1]); }).then(function (sha) {
        return uploadBlob({ sha256: sha, blob: e[1] }, csrf, function () {}).then(function () {
          body.append(e[0] + "_sha256", sha);
        });
      });
    });
    return uploads.then(function () {
      return call(post.url, { method: "POST", body: body, headers: { "Idempotency-Key": post.key } });
    })
      .then(function (response) {
        if (response.redirected && new URL(response.url).pathname === "/login") throw new LoginNeeded();
        if (response.ok) return FormStore.del(post.id).then(changed);
        if (response.status >= 500 || response.status === 409 || response.status === 429) {
          throw new Unreachable("post " + response.status);
        }
        return response.text().then(function (html) {
          post.state = "refused";
          post.html = html;
          return FormStore.put(post).then(changed);
        });
      });
  }

  // A kept post as the outbox list shows it.
  function postItem(post) {
    return { op_id: post.id, state: post.state === "refused" ? "rejected" : "waiting", created_at: post.created_at,
             label: "Form for " + post.url, href: post.state === "refused" ? "/outbox/correct/" + post.id : null,
             reasons: post.state === "refused" ? { "": "Refused by the server: open it to see why." } : null };
  }

  function allItems() {
    return Promise.all([store.all("outbox"), FormStore.all()]).then(function (found) {
      return found[0].concat(found[1].map(postItem));
    });
  }

  function run() {
    return Promise.all([store.all("outbox"), FormStore.all()]).then(function (found) {
      var items = found[0];
      var posts = found[1].filter(function (p) { return p.state === "waiting"; })
        .sort(function (a, b) { return a.created_at < b.created_at ? -1 : 1; });
      var ready = items.filter(function (i) { return i.state !== "rejected" && i.state !== "conflict"; })
        .sort(function (a, b) { return a.created_at < b.created_at ? -1 : 1; });
      if (!ready.length && !posts.length) { status.login = false; return null; }
      status.lastTry = new Date();
      return session().then(function (csrf) {
        status.login = false;
        status.unreachable = false;
        var chain = Promise.resolve();
        ready.forEach(function (item) {
          chain = chain.then(function () {
            return store.get("outbox", item.op_id).then(function (fresh) {
              // Another tab may have sent it (or the user corrected it) meanwhile.
              if (fresh && fresh.state !== "rejected" && fresh.state !== "conflict") return sendItem(fresh, csrf);
              return null;
            });
          });
        });
        posts.forEach(function (post) {
          chain = chain.then(function () {
            return FormStore.get(post.id).then(function (fresh) {
              return fresh && fresh.state === "waiting" ? sendPost(fresh, csrf) : null;
            });
          });
        });
        return chain;
      });
    }).then(function () {
      status.message = "";
      refresh();
    }, function (error) {
      if (error instanceof LoginNeeded) {
        status.login = true;
      } else {
        status.unreachable = true;
        status.message = String(error && error.message || error);
      }
      return store.all("outbox").then(function (items) {
        items.forEach(function (i) { if (i.state === "sending") { i.state = "waiting"; store.put("outbox", i); } });
        refresh();
      });
    });
  }

  var running = null;
  var again = false;
  // Send what waits; one sender at a time per device (Web Lock), one run at a time per tab.
  function syncNow() {
    if (running) { again = true; return running; }
    var work = navigator.locks
      ? navigator.locks.request("outbox-sync", { ifAvailable: true }, function (lock) { return lock ? run() : null; })
      : run();
    running = Promise.resolve(work).catch(function () { return null; }).then(function () {
      running = null;
      if (again) { again = false; return syncNow(); }
      return null;
    });
    return running;
  }

  var soon = null;
  function syncSoon() {
    clearTimeout(soon);
    soon = setTimeout(syncNow, 50);
  }

  // --- what the pages show --------------------------------------------------------------------------
  var STATE_WORDS = { waiting: "Waiting", sending: "Sending", rejected: "Failed", conflict: "Conflict" };
  var objectUrls = [];

  function refresh() {
    return allItems().then(function (items) {
      var badge = document.getElementById("outbox-badge");
      if (badge) {
        badge.textContent = items.length ? String(items.length) : "";
        badge.setAttribute("data-count", String(items.length));
      }
      showLogin(items);
      renderOutbox(items);
    }, function () { /* no IndexedDB (private mode): nothing to show */ });
  }

  function showLogin(items) {
    var main = document.getElementById("main");
    var note = document.getElementById("outbox-login");
    var waiting = items.filter(function (i) { return i.state !== "rejected" && i.state !== "conflict"; }).length;
    if (!status.login || !waiting) { if (note) note.remove(); return; }
    if (!note && main) {
      note = element("div", { id: "outbox-login", class: "flash flash-warning", role: "alert" });
      main.insertBefore(note, main.firstChild);
    }
    if (note) {
      note.textContent = "Your login has expired. Nothing is lost: " + waiting +
        " item(s) wait on this device and are sent after you ";
      var link = element("a", { href: "/login" }, "log in again");
      note.appendChild(link);
      note.appendChild(document.createTextNode("."));
    }
  }

  function reasonsText(reasons) {
    return Object.keys(reasons || {}).map(function (k) { return (k ? k + ": " : "") + reasons[k]; }).join("; ");
  }

  function stateText(item) {
    if (status.progress[item.op_id] !== undefined) return "Sending " + status.progress[item.op_id] + " %";
    return STATE_WORDS[item.state] || item.state;
  }

  function renderProgress(opId) {
    var pill = document.querySelector('#item-' + opId + ' [data-item-state]');
    if (pill) pill.textContent = "Sending " + (status.progress[opId] || 0) + " %";
  }

  function renderOutbox(items) {
    var list = document.getElementById("outbox-list");
    var info = document.getElementById("outbox-status");
    if (info) {
      info.textContent = status.login ? "Log in again to send." :
        status.unreachable ? "The server cannot be reached right now; it will be tried again by itself." +
          (status.lastTry ? " Last try: " + status.lastTry.toLocaleTimeString() + "." : "") :
        items.length ? "" : "Nothing waits: everything made on this device has reached the server.";
    }
    if (!list) return;
    objectUrls.forEach(URL.revokeObjectURL);
    objectUrls = [];
    list.textContent = "";
    items.sort(function (a, b) { return a.created_at < b.created_at ? -1 : 1; }).forEach(function (item) {
      var li = element("li", { id: "item-" + item.op_id, "data-state": item.state, class: "card outbox-item" });
      var head = element("p");
      head.appendChild(element("strong", {}, item.label || item.op.kind));
      head.appendChild(document.createTextNode(" · saved " + when(item.created_at) + " "));
      var pillClass = item.state === "rejected" || item.state === "conflict" ? "pill pill-overdue" : "pill pill-due";
      head.appendChild(element("span", { class: pillClass, "data-item-state": "" }, stateText(item)));
      li.appendChild(head);
      if (item.reasons) li.appendChild(element("p", { class: "field-error", "data-reasons": "" }, reasonsText(item.reasons)));
      if (item.note && item.state === "waiting") li.appendChild(element("p", { class: "muted" }, item.note));
      var photos = (item.blobs || []).filter(function (b) { return b.photo; });
      if (photos.length) {
        var grid = element("ul", { class: "photo-grid" });
        photos.forEach(function (ref) {
          var tile = element("li");
          var img = element("img", { alt: ref.caption || "Photo" });
          store.get("blobs", ref.sha256).then(function (record) {
            if (!record) return;
            var url = URL.createObjectURL(record.blob);
            objectUrls.push(url);
            img.src = url;
          });
          tile.appendChild(img);
          if (ref.caption) tile.appendChild(element("span", {}, ref.caption));
          grid.appendChild(tile);
        });
        li.appendChild(grid);
      }
      if ((item.state === "rejected" || item.state === "conflict") && item.href) {
        li.appendChild(element("a", { class: "btn btn-secondary", href: item.href + "#item=" + item.op_id,
                                      "data-correct": "" }, "Open and correct"));
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
    return call("/offline/pages.json", { headers: { Accept: "application/json" } }).then(function (response) {
      if (!response.ok) throw new Unreachable("pages " + response.status);
      return json(response);
    }).then(function (list) {
      var urls = list.common.slice();
      list.permits.forEach(function (p) { urls = urls.concat(p.urls); });
      say("Saving " + urls.length + " pages on this device…");
      return askWorker({ type: "hold", urls: urls }).then(function (saved) {
        var now = new Date().toISOString();
        return transact(["held"], "readwrite", function (s) {
          return req(s.held.getAllKeys()).then(function (keys) {
            var listed = {};
            list.permits.forEach(function (p) {
              listed[p.id] = true;
              var missing = p.urls.filter(function (u) { return !saved[u]; });
              s.held.put({ id: p.id, number: p.number, site_address: p.site_address, urls: p.urls,
                           held_at: now, missing: missing });
            });
            keys.forEach(function (k) { if (!listed[k]) s.held.delete(k); });
          });
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
    return store.all("held").then(function (rows) {
      list.textContent = "";
      if (!rows.length) list.appendChild(element("li", { class: "empty" }, "No permits are held on this device yet."));
      rows.sort(function (a, b) { return a.number < b.number ? -1 : 1; }).forEach(function (row) {
        var li = element("li", { id: "held-" + row.id });
        li.appendChild(element("a", { href: row.urls[0] }, "Permit " + row.number));
        li.appendChild(document.createTextNode(" · " + row.site_address + " · "));
        li.appendChild(element("span", { "data-held-at": row.held_at }, "saved " + when(row.held_at)));
        li.appendChild(document.createTextNode(" · " + (row.urls.length - row.missing.length) + " of " +
                                               row.urls.length + " pages"));
        list.appendChild(li);
      });
    });
  }

  // --- a corrective action closed with no server --------------------------------------------------
  // The close-out form (findings/_findings.html, data-offline-kind="action.close") posts with htmx; when
  // that cannot reach the server, the close-out becomes an `action.close` operation in the outbox. A
  // chosen evidence photo is kept as a blob, byte for byte, and goes first (docs/sync.md).
  function closeActionOffline(form) {
    var field = function (name) {
      var el = form.querySelector('[name$="-' + name + '"]');
      return el ? el.value.trim() : "";
    };
    var input = form.querySelector('input[type="file"][name$="-evidence_photo"]');
    var file = input && input.files && input.files[0];
    var done = field("completed_at");
    var note = form.querySelector("[data-offline-note]") || element("p", { class: "field-error", role: "alert", "data-offline-note": "" });
    form.appendChild(note);
    if (!done) { note.textContent = "Give the date and time it was done."; return null; }
    // A typed photo id names a photo on the server; `action.close` carries only a photo from this device.
    if (field("evidence_photo_id")) {
      note.textContent = "No connection: a photo already uploaded cannot be named now. Take or choose the " +
        "photo instead, or leave its id empty.";
      return null;
    }
    var opId = uuid();
    var blob = file ? new Blob([file], { type: file.type || "image/jpeg" }) : null;
    return (blob ? sha256(blob) : Promise.resolve(null)).then(function (sha) {
      var evidence = sha ? { id: uuid(), sha256: sha, caption: null } : null;
      var item = {
        op_id: opId, kind: "action.close", label: form.dataset.offlineLabel, href: location.pathname,
        blobs: sha ? [{ sha256: sha, size: blob.size, type: blob.type, photo: true, caption: "" }] : [],
        op: { op_id: opId, kind: "action.close", record_id: form.dataset.offlineRecord,
              base_revision: Number(form.dataset.offlineRevision), device_time: isoWithOffset(new Date()),
              payload: { completed_at: isoWithOffset(new Date(done)), note: field("note") || null,
                         evidence_photo: evidence } },
      };
      var blobs = sha ? [{ sha256: sha, blob: blob, type: blob.type, size: blob.size }] : [];
      return enqueue(item, blobs);
    }).then(function () {
      var saved = element("p", { class: "flash flash-success", role: "status", "data-offline-saved": "" },
                          "Saved on this device — will sync" + (file ? " (with its photo)" : ""));
      form.replaceWith(saved);
      syncSoon();
    }, function (error) {
      note.textContent = "This device could not keep the close-out: " + error + ". Try again.";
    });
  }

  document.addEventListener("htmx:sendError", function (event) {
    var form = event.detail.elt && event.detail.elt.closest && event.detail.elt.closest("form[data-offline-kind]");
    if (form && form.dataset.offlineKind === "action.close") closeActionOffline(form);
  });

  // --- wiring ---------------------------------------------------------------------------------------
  function onPage() {
    refresh();
    renderHeld();
    syncSoon();
  }

  document.addEventListener("click", function (event) {
    var target = event.target.closest && event.target.closest("#sync-now, #hold-all");
    if (!target) return;
    event.preventDefault();
    if (target.id === "sync-now") {
      var info = document.getElementById("outbox-status");
      if (info) info.textContent = "Sending…";
      syncNow();
    } else {
      holdAll();
    }
  });
  document.addEventListener("htmx:afterRequest", function (event) {
    if (event.detail && event.detail.successful) syncSoon();
  });
  document.addEventListener("htmx:afterSettle", function (event) {
    if (event.detail && event.detail.boosted) onPage();
  });
  window.addEventListener("online", syncSoon);
  if (channel) channel.onmessage = function () { refresh(); };
  setInterval(syncNow, TIMER_MS);
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", onPage);
  } else {
    onPage();
  }

  window.Outbox = {
    store: store, transact: transact, enqueue: enqueue, sha256: sha256, uuid: uuid, photoTile: photoTile,
    isoWithOffset: isoWithOffset, syncNow: syncNow, syncSoon: syncSoon, refresh: refresh,
    holdAll: holdAll, status: status,
  };
})();
