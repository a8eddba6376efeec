// Front-end shell glue for htmx 2: CSRF header, error pages under hx-boost, offline fallback.
(function () {
  "use strict";

  function csrfMeta() {
    return document.querySelector('meta[name="csrf-token"]');
  }

  // Flask-WTF reads the token from this header on every non-GET htmx request.
  document.addEventListener("htmx:configRequest", function (evt) {
    var meta = csrfMeta();
    if (meta && meta.content) {
      evt.detail.headers["X-CSRFToken"] = meta.content;
    }
  });

  document.addEventListener("htmx:beforeSwap", function (evt) {
    var d = evt.detail;
    var html = typeof d.serverResponse === "string" ? d.serverResponse : "";

    // hx-boost swaps only <body>; a new session (log in / log out) brings a new token in <head>.
    var m = html.match(/<meta\s+name="csrf-token"\s+content="([^"]*)"/i);
    var meta = csrfMeta();
    if (m && meta) {
      meta.content = m[1];
    }

    var status = d.xhr ? d.xhr.status : 0;
    // htmx 2 drops 4xx/5xx bodies. A boosted navigation should show our error page,
    // and 422 is how a form comes back with its errors beside the fields.
    if (status >= 400 && html && (d.boosted || status === 422)) {
      d.shouldSwap = true;
      d.isError = false;
    }
  });

  // A boosted GET that cannot reach anything: let the browser navigate for real,
  // so the service worker can answer with a saved page or the offline page.
  document.addEventListener("htmx:sendError", function (evt) {
    var d = evt.detail;
    var cfg = d.requestConfig || {};
    if (d.boosted && cfg.verb === "get" && cfg.path) {
      window.location.href = cfg.path;
    }
  });

  // The service worker makes the app open with no network (served from the root: it controls "/").
  if ("serviceWorker" in navigator) {
    navigator.serviceWorker.register("/sw.js").catch(function () { /* not a secure origin */ });
  }

  // Signing out on a shared tablet: the next user must not find the previous user's pages.
  document.addEventListener("submit", function (evt) {
    var form = evt.target;
    if (form.action && new URL(form.action, location.href).pathname === "/logout"
        && navigator.serviceWorker && navigator.serviceWorker.controller) {
      navigator.serviceWorker.controller.postMessage({ type: "forget-pages" });
    }
  }, true);
})();
