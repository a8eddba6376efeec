// This device's IndexedDB ("inspect-forms"), shared by the service worker and the pages:
// - posts: form posts the worker kept when the server could not be reached, for the outbox to send.
//   {id, url, entries: [[name, text or File]] (or a File's bytes: see FormStore), key (Idempotency-Key), created_at,
//    state: "waiting" | "refused", html (the server's answer to a refused post: the form, errors beside fields)}
// - held: the permits held for offline use {id, number, site_address, urls, held_at, missing}.
// - drafts: a form's unsaved typing {id (its data-draft), fields: {name or name=value: value or checked}, parts}.
var DeviceStore = (function () {
  "use strict";
  var opening = null;
  function open() {
    opening = opening || new Promise(function (resolve, reject) {
      var request = indexedDB.open("inspect-forms", 3);
      request.onupgradeneeded = function () {
        ["posts", "held", "drafts"].forEach(function (name) {
          if (!request.result.objectStoreNames.contains(name)) request.result.createObjectStore(name, { keyPath: "id" });
        });
      };
      request.onsuccess = function () {
        // A newer release opening a newer version must not wait for this page: let go, open again later.
        request.result.onversionchange = function () { request.result.close(); opening = null; };
        resolve(request.result);
      };
      request.onerror = function () { opening = null; reject(request.error); };
    });
    return opening;
  }
  function run(name, mode, work) {
    return open().then(function (db) {
      return new Promise(function (resolve, reject) {
        var tx = db.transaction(name, mode), request = work(tx.objectStore(name));
        tx.oncomplete = function () { resolve(request && request.result); };
        tx.onerror = tx.onabort = function () { reject(tx.error); };
      });
    });
  }
  return function (name) {
    return {
      all: function () { return run(name, "readonly", function (s) { return s.getAll(); }); },
      get: function (id) { return run(name, "readonly", function (s) { return s.get(id); }); },
      put: function (item) { return run(name, "readwrite", function (s) { return s.put(item); }); },
      del: function (id) { return run(name, "readwrite", function (s) { return s.delete(id); }); },
    };
  };
})();
// A post's files are kept as they are (Blobs) where the engine stores Blobs, and as their bytes where it does
// not: WebKit keeps a Blob in IndexedDB as a file on disk, and where an origin has no disk (Safari's Private
// Browsing, every WebDriver session) the put fails with "UnknownError: Error preparing Blob/File data to be
// stored in object store" (docs/webkit.md). That refusal is the feature test: the post is kept again with
// its files' bytes inside the record, and so is every later one. Both are handed back as Files.
var FormStore = (function (posts) {
  "use strict";
  var blobsRefused = false;
  function asBytes(entry) {
    var value = entry[1];
    if (typeof value === "string") return Promise.resolve(entry);
    return value.arrayBuffer().then(function (bytes) {
      return [entry[0], { fileBytes: bytes, name: value.name, type: value.type, lastModified: value.lastModified }];
    });
  }
  function putAsBytes(post) {
    blobsRefused = true;
    return Promise.all(post.entries.map(asBytes))
      .then(function (entries) { return posts.put(Object.assign({}, post, { entries: entries })); });
  }
  function asFile(v) {
    return v && v.fileBytes ? new File([v.fileBytes], v.name, { type: v.type, lastModified: v.lastModified }) : v;
  }
  function handedBack(post) {
    if (post) post.entries = post.entries.map(function (e) { return [e[0], asFile(e[1])]; });
    return post;
  }
  return {
    all: function () { return posts.all().then(function (items) { return items.map(handedBack); }); },
    get: function (id) { return posts.get(id).then(handedBack); },
    put: function (post) { return blobsRefused ? putAsBytes(post) : posts.put(post).catch(function () { return putAsBytes(post); }); },
    del: posts.del,
  };
})(DeviceStore("posts"));
