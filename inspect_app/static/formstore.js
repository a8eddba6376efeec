// Form posts kept on this device (IndexedDB "inspect-forms"), shared by the service worker, which
// keeps a post that could not reach the server, and the outbox, which sends it again later.
// An item: {id, url, entries: [[name, value or File]], key (Idempotency-Key), created_at,
// state: "waiting" | "refused", html (the server's answer to a refused post, the form with its errors)}.
var FormStore = (function () {
  "use strict";
  var opening = null;
  function open() {
    opening = opening || new Promise(function (resolve, reject) {
      var request = indexedDB.open("inspect-forms", 1);
      request.onupgradeneeded = function () { request.result.createObjectStore("posts", { keyPath: "id" }); };
      request.onsuccess = function () { resolve(request.result); };
      request.onerror = function () { opening = null; reject(request.error); };
    });
    return opening;
  }
  function run(mode, work) {
    return open().then(function (db) {
      return new Promise(function (resolve, reject) {
        var tx = db.transaction("posts", mode), request = work(tx.objectStore("posts"));
        tx.oncomplete = function () { resolve(request && request.result); };
        tx.onerror = tx.onabort = function () { reject(tx.error); };
      });
    });
  }
  return {
    all: function () { return run("readonly", function (s) { return s.getAll(); }); },
    get: function (id) { return run("readonly", function (s) { return s.get(id); }); },
    put: function (item) { return run("readwrite", function (s) { return s.put(item); }); },
    del: function (id) { return run("readwrite", function (s) { return s.delete(id); }); },
  };
})();
