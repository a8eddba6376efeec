// This device's IndexedDB ("inspect-forms"), shared by the service worker (importScripts) and the pages.
// Everything in it is one person's (a tablet is shared; docs/sync.md, "Who owns what on a device"):
// - posts: form posts the worker kept when the server could not be reached (or answered 401: no sign-in, or
//   someone else's), for the outbox to send while their author (the post's `posted_by`) is signed in.
//   {id, url, entries: [[name, text or File]] (or a File's bytes: see FormStore), key (Idempotency-Key), created_at,
//    state: "waiting" | "refused", html (the server's answer to a refused post: the form, errors beside fields)}
// - held: the permits held for offline use {id: "<user> <permit id>", user, permit_id, number, site_address, urls,
//   held_at, missing}.
// - drafts: a form's unsaved typing {id (its data-draft), user, fields: {name or name=value: value or checked},
//   parts}; a new report's also {report: the id the device made for it, key: the Idempotency-Key of its one
//   submission, sent: when it was posted}, so that Back, a reload and a second tab post the same report.
// - device: {id: "signed-in", user}: who the server last said is signed in (the worker reads it off the server's
//   answers, SignedIn.HEADER); the pages held for them are the only ones served.
// A classic script (the worker's importScripts takes no module) that the pages' modules import too; it gives
// three globals.
self.DeviceStore = (() => {
  let opening = null;
  function open() {
    opening = opening || new Promise((resolve, reject) => {
      const request = indexedDB.open("inspect-forms", 4);
      request.onupgradeneeded = ({ target: { result: db } }) => ["posts", "held", "drafts", "device"]
        .forEach((name) => db.objectStoreNames.contains(name) || db.createObjectStore(name, { keyPath: "id" }));
      request.onsuccess = () => {
        // A newer release opening a newer version must not wait for this page: let go, open again later.
        request.result.onversionchange = () => { request.result.close(); opening = null; };
        resolve(request.result);
      };
      request.onerror = () => { opening = null; reject(request.error); };
    });
    return opening;
  }
  // A page WebKit freezes in its back/forward cache keeps its transactions, blocking the next page's (docs/webkit.md):
  // they are ended as it is hidden, and none starts until it is shown again, not even one whose call came just
  // before (a promise settling as the page froze would otherwise open one that holds the store for good).
  const active = new Set(), end = (tx) => { try { tx.abort(); } catch { /* committed meanwhile */ } };
  let frozen = false;
  self.addEventListener("pagehide", (event) => { if (event.persisted) { frozen = true; active.forEach(end); } });
  self.addEventListener("pageshow", () => { frozen = false; });
  const hidden = () => new DOMException("The page is in the back/forward cache.", "AbortError");
  const opened = () => (frozen ? Promise.reject(hidden()) : open());
  const run = (name, mode, work) => opened().then((db) => new Promise((resolve, reject) => {
    if (frozen) { reject(hidden()); return; }
    const tx = db.transaction(name, mode), request = work(tx.objectStore(name));
    active.add(tx);
    tx.oncomplete = () => { active.delete(tx); resolve(request.result); };
    tx.onerror = tx.onabort = () => { active.delete(tx); reject(tx.error); };
  }));
  return (name) => ({
    all: () => run(name, "readonly", (store) => store.getAll()),
    get: (id) => run(name, "readonly", (store) => store.get(id)),
    put: (item) => run(name, "readwrite", (store) => store.put(item)),
    del: (id) => run(name, "readwrite", (store) => store.delete(id)),
    clear: () => run(name, "readwrite", (store) => store.clear()),
    // Read and write back in one transaction (another tab's change comes before or after it, never between);
    // `change(item)` gives the new item, or nothing to leave it.
    update: (id, change) => run(name, "readwrite", (store) => {
      const request = store.get(id);
      request.onsuccess = () => { const next = change(request.result); if (next) store.put(next); };
      return request;
    }),
  });
})();

// A post's files are kept as they are (Blobs) where the engine stores Blobs, and as their bytes where it does
// not: WebKit keeps a Blob in IndexedDB as a file on disk, and where an origin has no disk (Safari's Private
// Browsing, every WebDriver session) the put fails with "UnknownError: Error preparing Blob/File data to be
// stored in object store" (docs/webkit.md). That refusal is the feature test: the post is kept again with
// its files' bytes inside the record, and so is every later one. Both are handed back as Files.
self.FormStore = ((posts) => {
  let blobsRefused = false;
  async function asBytes([name, value]) {
    if (typeof value === "string") return [name, value];
    return [name, { fileBytes: await value.arrayBuffer(), name: value.name, type: value.type, lastModified: value.lastModified }];
  }
  async function putAsBytes(post) {
    blobsRefused = true;
    return posts.put({ ...post, entries: await Promise.all(post.entries.map(asBytes)) });
  }
  const asFile = (v) => (v && v.fileBytes ? new File([v.fileBytes], v.name, { type: v.type, lastModified: v.lastModified }) : v);
  const handedBack = (post) => post && { ...post, entries: post.entries.map(([name, value]) => [name, asFile(value)]) };
  return {
    all: async () => (await posts.all()).map(handedBack),
    get: async (id) => handedBack(await posts.get(id)),
    put: (post) => (blobsRefused ? putAsBytes(post) : posts.put(post).catch(() => putAsBytes(post))),
    del: posts.del,
    // Who filled the post in (the form's posted_by); null for one kept before posts said.
    authorOf: (post) => post.entries.find(([name]) => name === "posted_by")?.[1] || null,
  };
})(DeviceStore("posts"));

// Who is signed in on this device, as the server last said: the `Signed-In-As` header of its answers (the user's
// id; empty when no one is), read by the service worker off every answer it passes on (offline/views.py).
self.SignedIn = ((device) => ({
  HEADER: "Signed-In-As",
  // The user's id, null for no one, undefined where the worker has never said (no worker on this page).
  get: () => device.get("signed-in").then((found) => (found ? found.user || null : undefined), () => undefined),
  set: (user) => device.put({ id: "signed-in", user: user || null }),
}))(DeviceStore("device"));
