// This device's IndexedDB ("inspect-forms"), shared by the service worker (importScripts) and the pages:
// - posts: form posts the worker kept when the server could not be reached, for the outbox to send.
//   {id, url, entries: [[name, text or File]] (or a File's bytes: see FormStore), key (Idempotency-Key), created_at,
//    state: "waiting" | "refused", html (the server's answer to a refused post: the form, errors beside fields)}
// - held: the permits held for offline use {id, number, site_address, urls, held_at, missing}.
// - drafts: a form's unsaved typing {id (its data-draft), fields: {name or name=value: value or checked}, parts}.
// A classic script (the worker's importScripts takes no module) that the pages' modules import too; it gives two globals.
self.DeviceStore = (() => {
  let opening = null;
  function open() {
    opening = opening || new Promise((resolve, reject) => {
      const request = indexedDB.open("inspect-forms", 3);
      request.onupgradeneeded = ({ target: { result: db } }) => ["posts", "held", "drafts"]
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
  // A page WebKit freezes in its back/forward cache keeps its transactions, blocking the next page's (docs/webkit.md).
  const active = new Set(), end = (tx) => { try { tx.abort(); } catch { /* committed meanwhile */ } };
  self.addEventListener("pagehide", (event) => event.persisted && active.forEach(end));
  const run = (name, mode, work) => open().then((db) => new Promise((resolve, reject) => {
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
  };
})(DeviceStore("posts"));
