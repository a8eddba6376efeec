// Front-end shell glue for htmx 2: CSRF header, error pages under hx-boost, offline fallback.
(function () {
  "use strict";

  function csrfMeta() { return document.querySelector('meta[name="csrf-token"]'); }

  // Flask-WTF reads the token from this header on every non-GET htmx request.
  document.addEventListener("htmx:configRequest", function (evt) {
    var meta = csrfMeta();
    if (meta && meta.content) evt.detail.headers["X-CSRFToken"] = meta.content;
  });

  document.addEventListener("htmx:beforeSwap", function (evt) {
    var d = evt.detail, html = typeof d.serverResponse === "string" ? d.serverResponse : "";

    // hx-boost swaps only <body>; a new session (log in / log out) brings a new token in <head>.
    var m = html.match(/<meta\s+name="csrf-token"\s+content="([^"]*)"/i), meta = csrfMeta();
    if (m && meta) meta.content = m[1];

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
    var d = evt.detail, cfg = d.requestConfig || {};
    if (d.boosted && cfg.verb === "get" && cfg.path) window.location.href = cfg.path;
  });

  // Each form post carries its own key, so a post sent again from the outbox is applied once; a new
  // report takes the id this device makes for it, in its URL from the start (create-or-submit).
  function freshForms(root) {
    root.querySelectorAll("input[data-fresh-key]").forEach(function (input) { input.value = crypto.randomUUID(); });
    root.querySelectorAll("form[data-new-record]").forEach(function (form) {
      var planned = form.getAttribute("data-new-record"), made = crypto.randomUUID();
      [form].concat(Array.from(document.querySelectorAll('[form="' + form.id + '"][formaction]'))).forEach(function (el) {
        var name = el === form ? "action" : "formaction";
        el.setAttribute(name, el.getAttribute(name).replace(planned, made));
      });
      form.setAttribute("data-new-record", made);
      var when = document.getElementById("performed_at");  // now, on the town's clock
      if (when && !when.value) {
        when.value = new Intl.DateTimeFormat("sv-SE", { timeZone: form.getAttribute("data-local-tz"), year: "numeric",
          month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit" }).format(new Date()).replace(" ", "T");
      }
    });
    var posted = sessionStorage.getItem("posted-draft");
    sessionStorage.removeItem("posted-draft");
    if (posted) Drafts.del(posted);
    root.querySelectorAll("form[data-draft]").forEach(function (form) { if (form.dataset.draft !== posted) restore(form); });
  }

  // Unsaved typing survives a reload and a closed tab: a form[data-draft] keeps its fields on the device a
  // moment after each change, gets them back when it opens (online or held), and forgets them once posted
  // (the server has them then, or the outbox). Files and hidden fields are not kept: a photo chosen but not
  // saved must be chosen again.
  var Drafts = DeviceStore("drafts"), typing = null;
  function fields(form) {
    return Array.from(form.elements).filter(function (el) { return el.name && !/^(file|hidden|submit|button)$/.test(el.type); });
  }
  function prop(el) { return /^(radio|checkbox)$/.test(el.type) ? "checked" : "value"; }
  function keyOf(el) { return prop(el) === "checked" ? el.name + "=" + el.value : el.name; }
  function keep(form) {
    var kept = {}, parts = Array.from(document.querySelectorAll("[data-part*=' ']"), function (p) { return p.dataset.part; });
    fields(form).forEach(function (el) { kept[keyOf(el)] = el[prop(el)]; });
    clearTimeout(typing);
    typing = setTimeout(function () { Drafts.put({ id: form.dataset.draft, fields: kept, parts: parts }); }, 300);
  }
  function restore(form) {
    Drafts.get(form.dataset.draft).then(function (draft) {
      if (!draft) return;
      draft.parts.forEach(function (p) { if (!document.querySelector('[data-part="' + p + '"]')) addPart.apply(null, p.split(" ")); });
      fields(form).forEach(function (el) {
        var value = draft.fields[keyOf(el)];
        if (value !== undefined) el[prop(el)] = value;
      });
    });
  }
  document.addEventListener("input", function (evt) { if (evt.target.form && evt.target.form.dataset.draft) keep(evt.target.form); });
  document.addEventListener("DOMContentLoaded", function () { freshForms(document); });
  document.addEventListener("htmx:load", function (evt) { freshForms(evt.target); });

  // Repeating parts of a form (a finding, a punch-list item, a control): its <template> cloned under an id
  // this device makes, or removed again.
  // data-part becomes "<template> <id>", so a kept draft can bring the part back.
  function addPart(templateId, id) {
    var part = document.getElementById(templateId).content.cloneNode(true);
    part.querySelectorAll("[id], [name], [for], [aria-describedby], [data-part]").forEach(function (el) {
      ["id", "name", "for", "aria-describedby", "data-part"].forEach(function (name) {
        if (el.hasAttribute(name)) el.setAttribute(name, el.getAttribute(name).split("__id__").join(id));
      });
    });
    document.querySelector('[data-list-of="' + templateId + '"]').appendChild(part);
  }
  document.addEventListener("click", function (evt) {
    var add = evt.target.closest && evt.target.closest("[data-add]");
    var remove = evt.target.closest && evt.target.closest("[data-remove]");
    if (add) addPart(add.getAttribute("data-add"), crypto.randomUUID());
    if (remove) {
      remove.closest("[data-part]").remove();
      document.querySelectorAll("form[data-draft]").forEach(keep);
    }
  });

  // Page scripts set up their elements through this: each one once, those on the page and those htmx swaps
  // in later (hx-boost runs a page's scripts again with each page it brings; they load deferred, after this).
  var setUps = {};
  function setUpIn(root, selector) {
    var found = Array.from(root.querySelectorAll(selector)).concat(root.matches && root.matches(selector) ? [root] : []);
    found.forEach(function (el) {  // a setUp that answers false is tried again with the next swap
      if (!setUps[selector].done.has(el) && setUps[selector].setUp(el) !== false) setUps[selector].done.add(el);
    });
  }
  window.setUpEach = function (selector, setUp) {
    if (!setUps[selector]) document.addEventListener("htmx:load", function (evt) { setUpIn(evt.detail.elt, selector); });
    setUps[selector] = { setUp: setUp, done: (setUps[selector] || { done: new WeakSet() }).done };
    setUpIn(document, selector);
  };

  // The service worker makes the app open with no network (served from the root: it controls "/").
  if ("serviceWorker" in navigator) navigator.serviceWorker.register("/sw.js").catch(function () { /* not a secure origin */ });

  // A posted form's draft is forgotten as the next page opens: the post goes first.
  document.addEventListener("submit", function (evt) {
    var draft = evt.target.dataset.draft;
    if (draft) { clearTimeout(typing); sessionStorage.setItem("posted-draft", draft); }
  }, true);
})();
