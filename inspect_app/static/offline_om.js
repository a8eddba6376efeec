// O&M with no network (§380-14): the maintenance log's "Add an entry" form and the annual certification's
// sign form (templates/certifications/log.html and certify.html) become outbox operations, `om.log` and
// `om.certify` (docs/sync.md), that static/outbox.js sends. Without JavaScript both forms post as before.
//
// - A log entry is kept in IndexedDB as it is typed (a reload loses nothing), its photos as blobs.
// - On submit the device checks what the server form would refuse, with the server's words beside the
//   fields; then the operation goes into the outbox and the outbox is asked to send at once. Applied:
//   the new record's page opens. Not reachable: "Saved on this device — will sync".
// - A refused item opens here from the outbox (`#item=<op_id>`), with the server's reasons beside the
//   fields, and goes back into the outbox in place of the refused one.
// Needs window.Outbox; safe to load more than once (hx-boost runs a swapped page's scripts again).
(function () {
  "use strict";

  if (window.OfflineOM) {
    window.OfflineOM.init();
    return;
  }

  var SAVE_DELAY_MS = 250;
  // How long a submit waits for the server before saying it is saved on the device (a network that hangs).
  var SYNC_WAIT_MS = 8000;
  var SAVED = "Saved on this device — will sync";
  // The server's words (certifications/forms.py and services.add_log_entry, certify), so both say the same.
  var LOG_MESSAGES = {
    kind: "Choose what was done.",
    performed_on: "Give the date the work was done.",
    future: "The date cannot be in the future.",
    description: "Say what was done.",
    performed_by: "Say who did the work.",
    material_type: "A disposal needs the type of material.",
    disposal_location: "A disposal needs the disposal location.",
  };
  var CERTIFY_MESSAGES = {
    agree: "Tick the box to make the certification.",
    signer_name: "Type your name to sign.",
  };
  var LOG_FIELDS = ["kind", "performed_on", "structure_id", "description", "material_type", "disposal_location",
                    "performed_by"];
  var channel = "BroadcastChannel" in window ? new BroadcastChannel("outbox") : null;

  // --- small helpers ----------------------------------------------------------------------------------
  function element(tag, attrs, text) {
    var el = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) { el.setAttribute(k, attrs[k]); });
    if (text !== undefined) el.textContent = text;
    return el;
  }

  function capitalize(word) { return word ? word.charAt(0).toUpperCase() + word.slice(1) : ""; }

  // "2026-12-02" as the device writes dates ("Dec 2, 2026"); read as a local day, not UTC midnight.
  function shownDate(iso) {
    var parts = /^(\d{4})-(\d{2})-(\d{2})$/.exec(iso || "");
    if (!parts) return iso || "";
    return new Date(+parts[1], parts[2] - 1, +parts[3])
      .toLocaleDateString(undefined, { year: "numeric", month: "short", day: "numeric" });
  }

  function isRefused(item) { return !!item && (item.state === "rejected" || item.state === "conflict"); }

  function correctingId() { return (location.hash.match(/item=([0-9a-f-]+)/) || [])[1] || null; }

  function control(form, prefix, name) { return form.elements.namedItem(prefix + "-" + name); }

  function valueOf(form, prefix, name) {
    var el = control(form, prefix, name);
    return el ? el.value : "";
  }

  function setValue(form, prefix, name, value) {
    var el = control(form, prefix, name);
    if (el) el.value = value || "";  // a RadioNodeList's value ticks the matching radio
  }

  function today() { return window.Outbox.isoWithOffset(new Date()).slice(0, 10); }

  function wait(ms) { return new Promise(function (resolve) { setTimeout(resolve, ms); }); }

  function dataUrlBlob(dataUrl) {
    var bytes = atob(dataUrl.split(",")[1] || "");
    var array = new Uint8Array(bytes.length);
    for (var i = 0; i < bytes.length; i++) array[i] = bytes.charCodeAt(i);
    return new Blob([array], { type: "image/png" });
  }

  // The message area above a form: "saved on this device", "sending", a refusal that is about no field.
  function say(kind, text) {
    var box = document.querySelector("[data-om-message]");
    if (!box) return;
    box.hidden = !text;
    box.textContent = text || "";
    box.className = kind === "error" ? "error-summary" : "flash flash-" + kind;
    box.setAttribute("role", kind === "error" ? "alert" : "status");
  }

  // --- errors beside the fields, as the server's form macro shows them ---------------------------------
  function fieldBox(form, prefix, name) {
    var el = document.getElementById(prefix + "-" + name);
    return el && form.contains(el) ? el.closest(".field") : null;
  }

  // An error goes once its field is changed (the next submit checks again).
  function clearFieldError(event) {
    var box = event.target.closest && event.target.closest(".field.has-error");
    if (!box) return;
    box.querySelectorAll(".field-error").forEach(function (p) { p.remove(); });
    box.classList.remove("has-error");
    box.querySelectorAll("[aria-invalid]").forEach(function (el) { el.removeAttribute("aria-invalid"); });
  }

  function clearErrors(form) {
    form.querySelectorAll(".field-error").forEach(function (p) { p.remove(); });
    form.querySelectorAll(".has-error").forEach(function (box) { box.classList.remove("has-error"); });
    form.querySelectorAll("[aria-invalid]").forEach(function (el) { el.removeAttribute("aria-invalid"); });
  }

  // Show `errors` (field name → message) beside their fields; those about no field go above the form.
  // Returns true when there were any.
  function showErrors(form, prefix, errors) {
    clearErrors(form);
    var elsewhere = [];
    var first = null;
    Object.keys(errors).forEach(function (name) {
      var box = fieldBox(form, prefix, name);
      if (!box) { elsewhere.push(errors[name]); return; }
      var id = prefix + "-" + name + "-error";
      var p = element("p", { class: "field-error", id: id });
      p.appendChild(element("span", { class: "visually-hidden" }, "Error: "));
      p.appendChild(document.createTextNode(errors[name]));
      (box.querySelector("fieldset") || box).appendChild(p);
      box.classList.add("has-error");
      var input = document.getElementById(prefix + "-" + name);
      input.setAttribute("aria-invalid", "true");
      var described = (input.getAttribute("aria-describedby") || "").split(" ").filter(Boolean);
      if (described.indexOf(id) < 0) input.setAttribute("aria-describedby", described.concat(id).join(" "));
      if (!first) first = box.querySelector("input:not([type=hidden]), textarea, select");
    });
    if (elsewhere.length) say("error", elsewhere.join(" "));
    if (first) first.focus();
    return Object.keys(errors).length > 0;
  }

  // The server's reasons (`payload.performed_by`, `payload.photos.0.sha256`, `record_id`) by form field.
  function reasonsByField(reasons, fields) {
    var out = {};
    Object.keys(reasons || {}).forEach(function (key) {
      var name = key.replace(/^payload\./, "").split(".")[0];
      if (name === "signature_sha256") name = "signature";
      if (fields.indexOf(name) < 0) name = "";
      out[name] = out[name] ? out[name] + " " + reasons[key] : reasons[key];
    });
    return out;
  }

  function tooLong(form, prefix, name, value) {
    var el = control(form, prefix, name);
    var max = el && el.maxLength > 0 ? el.maxLength : 0;
    return max && value.length > max ? "Field cannot be longer than " + max + " characters." : null;
  }

  // --- sending ----------------------------------------------------------------------------------------
  // Ask the outbox to send now; then the record's page if the server applied the item, else `saved`
  // (still waiting) or `refused` (the server's reasons, kept on the item).
  function sendAndFollow(item, doneUrl, saved, refused) {
    var O = window.Outbox;
    say("info", "Sending…");
    return Promise.race([O.syncNow(), wait(SYNC_WAIT_MS)]).then(function () {
      return O.store.get("outbox", item.op_id);
    }).then(function (left) {
      if (!left) {
        location.assign(doneUrl);
      } else if (isRefused(left)) {
        refused(left);
      } else {
        saved(left);
      }
    });
  }

  function sameUrlWith(hash) {
    history.replaceState(history.state, "", location.pathname + location.search + hash);
  }

  // The log entries of this permit waiting in the outbox, listed on the log and certify pages.
  function renderWaiting(permitId) {
    var section = document.getElementById("om-waiting");
    var list = section && section.querySelector("[data-om-waiting-list]");
    if (!list) return Promise.resolve();
    var onlyWaiting = section.hasAttribute("data-only-waiting");
    return window.Outbox.store.all("outbox").then(function (items) {
      items = items.filter(function (i) {
        return i.op && i.op.kind === "om.log" && i.op.payload.permit_id === permitId &&
          !(onlyWaiting && isRefused(i));
      }).sort(function (a, b) { return a.created_at < b.created_at ? -1 : 1; });
      list.textContent = "";
      section.hidden = !items.length;
      items.forEach(function (item) {
        var p = item.op.payload;
        var li = element("li", { "data-op-id": item.op_id, "data-state": item.state });
        li.appendChild(element("strong", {}, shownDate(p.performed_on) + " · " + capitalize(p.kind)));
        li.appendChild(element("span", {}, " " + (p.description || "")));
        if (p.kind === "disposal") {
          li.appendChild(element("span", { class: "meta" }, " " + (p.material_type || "") + " → " + (p.disposal_location || "")));
        }
        var photos = (p.photos || []).length;
        if (photos) li.appendChild(element("span", { class: "meta" }, " · " + photos + " photo" + (photos === 1 ? "" : "s")));
        var refusedItem = isRefused(item);
        li.appendChild(element("span", { class: refusedItem ? "pill pill-overdue" : "pill pill-due" },
                               refusedItem ? "Refused" : "Waiting to be sent"));
        if (refusedItem && item.href) {
          li.appendChild(document.createTextNode(" "));
          li.appendChild(element("a", { href: item.href + "#item=" + item.op_id, "data-correct": "" }, "Open and correct"));
        }
        list.appendChild(li);
      });
    }, function () { /* no IndexedDB: nothing to list */ });
  }

  // --- the maintenance log's "Add an entry" -------------------------------------------------------------
  function setUpLog(form) {
    var O = window.Outbox;
    var permitId = form.dataset.permitId;
    var baseKey = "om.log:" + permitId;
    var correcting = correctingId();
    // A correction is drafted apart, so it never overwrites an entry being typed meanwhile.
    var draftKey = correcting ? baseKey + ":" + correcting : baseKey;
    var state = null;
    var urls = [];
    var photoBox = form.querySelector("[data-om-photos]");
    var photoInput = form.querySelector("[data-om-photo-input]");
    var photoList = form.querySelector("[data-om-photo-list]");

    function fieldValues() {
      var values = {};
      LOG_FIELDS.forEach(function (name) { values[name] = valueOf(form, "log", name); });
      return values;
    }

    function fresh() {
      return { key: draftKey, entry_id: O.uuid(), permit_id: permitId, fields: null, photos: [] };
    }

    // A refused item back into a draft: the operation's own payload, so any item can be corrected.
    function fromItem(item) {
      var p = item.op.payload;
      var refs = {};
      (item.blobs || []).forEach(function (b) { refs[b.sha256] = b; });
      var fields = {};
      LOG_FIELDS.forEach(function (name) { fields[name] = p[name] || ""; });
      return {
        key: draftKey, entry_id: item.op.record_id, permit_id: permitId, fields: fields,
        photos: (p.photos || []).map(function (ph) {
          var ref = refs[ph.sha256] || {};
          return { id: ph.id, sha256: ph.sha256, caption: ph.caption || "", type: ref.type || "image/jpeg",
                   size: ref.size || 0 };
        }),
      };
    }

    // --- the draft ------------------------------------------------------------------------------------
    var timer = null;
    function saveSoon() {
      clearTimeout(timer);
      timer = setTimeout(saveDraft, SAVE_DELAY_MS);
    }
    function saveDraft() {
      clearTimeout(timer);
      if (!state) return Promise.resolve();
      state.key = draftKey;
      state.fields = fieldValues();
      state.saved_at = new Date().toISOString();
      return O.store.put("drafts", state);
    }

    function restore(saved) {
      state = saved;
      if (state.fields) LOG_FIELDS.forEach(function (name) { setValue(form, "log", name, state.fields[name]); });
      renderPhotos();
    }

    // --- photos ---------------------------------------------------------------------------------------
    function addPhotos() {
      var files = Array.prototype.slice.call(photoInput.files || []);
      photoInput.value = "";
      return Promise.all(files.map(function (file) {
        return O.sha256(file).then(function (sha) {
          var blob = new Blob([file], { type: file.type || "image/jpeg" });
          return O.store.put("blobs", { sha256: sha, blob: blob, type: blob.type, size: blob.size }).then(function () {
            state.photos.push({ id: O.uuid(), sha256: sha, caption: "", type: blob.type, size: blob.size });
          });
        });
      })).then(function () { renderPhotos(); return saveDraft(); });
    }

    function renderPhotos() {
      urls.forEach(URL.revokeObjectURL);
      urls = [];
      photoList.textContent = "";
      state.photos.forEach(function (photo) {
        photoList.appendChild(O.photoTile(photo, urls, saveSoon, function () {
          state.photos = state.photos.filter(function (p) { return p !== photo; });
          renderPhotos();
          saveDraft();
        }));
      });
    }

    // --- checks and submit ----------------------------------------------------------------------------
    function validate(values) {
      var errors = {};
      if (!values.kind) errors.kind = LOG_MESSAGES.kind;
      if (!/^\d{4}-\d{2}-\d{2}$/.test(values.performed_on)) errors.performed_on = LOG_MESSAGES.performed_on;
      else if (values.performed_on > today()) errors.performed_on = LOG_MESSAGES.future;
      if (!values.description.trim()) errors.description = LOG_MESSAGES.description;
      if (!values.performed_by.trim()) errors.performed_by = LOG_MESSAGES.performed_by;
      // §380-14 C(2)(j): a disposal is logged with the type of material and the disposal location.
      if (values.kind === "disposal" && !values.material_type.trim()) errors.material_type = LOG_MESSAGES.material_type;
      if (values.kind === "disposal" && !values.disposal_location.trim()) {
        errors.disposal_location = LOG_MESSAGES.disposal_location;
      }
      ["description", "material_type", "disposal_location", "performed_by"].forEach(function (name) {
        var message = !errors[name] && tooLong(form, "log", name, values[name]);
        if (message) errors[name] = message;
      });
      return errors;
    }

    function showRefused(item) {
      correcting = item.op_id;
      draftKey = baseKey + ":" + correcting;
      sameUrlWith("#item=" + item.op_id);  // a reload opens the correction again
      say("warning", "The server refused this entry. Correct what is marked and add it again.");
      var byField = reasonsByField(item.reasons, LOG_FIELDS.concat("photos"));
      var elsewhere = byField[""];
      delete byField[""];
      showErrors(form, "log", byField);
      if (elsewhere) say("warning", "The server refused this entry: " + elsewhere + " Correct it and add it again.");
    }

    function submit() {
      var values = fieldValues();
      say("info", "");
      if (showErrors(form, "log", validate(values))) return Promise.resolve();
      var trimmed = function (name) { return values[name].trim() || null; };
      var photos = state.photos.map(function (p) { return { id: p.id, sha256: p.sha256, caption: p.caption || "" }; });
      var op = {
        op_id: O.uuid(), kind: "om.log", record_id: state.entry_id, base_revision: null,
        device_time: O.isoWithOffset(new Date()),
        payload: {
          permit_id: permitId, kind: values.kind, performed_on: values.performed_on,
          description: values.description.trim(), performed_by: values.performed_by.trim(),
          structure_id: values.structure_id || null, material_type: trimmed("material_type"),
          disposal_location: trimmed("disposal_location"), photos: photos,
        },
      };
      var item = {
        op_id: op.op_id, op: op, kind: op.kind, permit_id: permitId,
        label: "Maintenance log: " + capitalize(values.kind) + " · permit " + form.dataset.permitNumber,
        href: location.pathname,
        blobs: state.photos.map(function (p) {
          return { sha256: p.sha256, size: p.size, type: p.type, photo: true, caption: p.caption || "" };
        }),
      };
      var doneUrl = form.dataset.entryUrl.replace("ENTRY_ID", state.entry_id);
      var button = form.querySelector("button[type=submit]");
      button.disabled = true;
      clearTimeout(timer);
      return O.enqueue(item, [], { draftKey: draftKey, replaces: correcting }).then(function () {
        return sendAndFollow(item, doneUrl, function () {
          // Kept on the device: a blank form for the next entry.
          correcting = null;
          draftKey = baseKey;
          sameUrlWith("");
          form.reset();
          clearErrors(form);
          state = fresh();
          renderPhotos();
          say("success", SAVED);
        }, showRefused);
      }, function (error) {
        say("error", "This device could not keep the entry: " + error + ". Nothing was sent; try again.");
      }).then(function () {
        button.disabled = false;
        renderWaiting(permitId);
      });
    }

    // --- wiring ---------------------------------------------------------------------------------------
    // The draft being typed; or, for `#item=<op_id>`, the refused item (or its correction begun before).
    function load() {
      var refused = correcting ? O.store.get("outbox", correcting) : Promise.resolve(null);
      return refused.then(function (item) {
        if (!isRefused(item)) { item = null; correcting = null; draftKey = baseKey; }
        return O.store.get("drafts", draftKey).then(function (draft) {
          if (draft || item) restore(draft || fromItem(item));
          else { state = fresh(); renderPhotos(); }
          if (item) showRefused(item);
          else if (correctingId()) sameUrlWith("");  // already sent or dropped: a new entry
        });
      });
    }

    load().then(function () {
      photoBox.hidden = false;
      form.addEventListener("submit", function (event) { event.preventDefault(); submit(); });
      form.addEventListener("input", function (event) {
        clearFieldError(event);
        if (event.target !== photoInput) saveSoon();
      });
      form.addEventListener("change", function (event) {
        clearFieldError(event);
        if (event.target === photoInput) addPhotos();
        else saveSoon();
      });
      // Keep what was typed last when the tab goes away (the debounce may not have run yet).
      document.addEventListener("visibilitychange", function () { if (document.hidden && form.isConnected) saveDraft(); });
      window.addEventListener("pagehide", function () { if (form.isConnected) saveDraft(); });
      // "Open and correct" on this very page changes only the hash: load that item.
      window.addEventListener("hashchange", function () {
        if (form.isConnected && correctingId() && correctingId() !== correcting) location.reload();
      });
      if (channel) channel.addEventListener("message", function () { if (form.isConnected) renderWaiting(permitId); });
      renderWaiting(permitId);
      form.dataset.loaded = "1";
    }, function () { /* no IndexedDB (private mode): the form posts to the server as without JavaScript */ });
  }

  // --- the annual certification's sign form ---------------------------------------------------------------
  function setUpCertify(form) {
    var O = window.Outbox;
    var permitId = form.dataset.permitId;
    var periodStart = form.dataset.periodStart;
    var correcting = correctingId();
    var recordId = O.uuid();
    var pad = form.querySelector("[data-signature-pad]");
    var signature = pad && pad.querySelector("[data-signature-value]");
    var button = form.querySelector("button[type=submit]");
    var fields = ["agree", "signer_name", "signature"];

    function drawSignature(dataUrl) {
      if (!signature || !dataUrl) return;
      signature.value = dataUrl;
      var canvas = pad.querySelector("canvas");
      var image = new Image();
      image.onload = function () {
        var box = canvas.getBoundingClientRect();
        canvas.getContext("2d").drawImage(image, 0, 0, box.width, box.height);
        pad.classList.add("signed");
      };
      image.src = dataUrl;
    }

    function showRefused(item) {
      correcting = item.op_id;
      recordId = item.op.record_id;
      sameUrlWith("#item=" + item.op_id);
      var byField = reasonsByField(item.reasons, fields);
      var elsewhere = byField[""];
      delete byField[""];
      showErrors(form, "cert", byField);
      say("warning", "The server refused this certification" + (elsewhere ? ": " + elsewhere : ".") +
          " Correct it and sign again.");
    }

    function saved() {
      say("success", SAVED);
      button.disabled = true;
    }

    function submit() {
      var agree = control(form, "cert", "agree");
      var signer = valueOf(form, "cert", "signer_name").trim();
      var errors = {};
      if (!agree || !agree.checked) errors.agree = CERTIFY_MESSAGES.agree;
      if (!signer) errors.signer_name = CERTIFY_MESSAGES.signer_name;
      else if (tooLong(form, "cert", "signer_name", signer)) errors.signer_name = tooLong(form, "cert", "signer_name", signer);
      say("info", "");
      if (showErrors(form, "cert", errors)) return Promise.resolve();
      var drawn = signature && signature.value.indexOf("data:image/png;base64,") === 0 ? signature.value : "";
      var png = drawn ? dataUrlBlob(drawn) : null;
      button.disabled = true;
      var item = null;
      return (png ? O.sha256(png) : Promise.resolve(null)).then(function (sha) {
        var op = {
          op_id: O.uuid(), kind: "om.certify", record_id: recordId, base_revision: null,
          device_time: O.isoWithOffset(new Date()),
          payload: { permit_id: permitId, period_start: periodStart, signer_name: signer, signature_sha256: sha },
        };
        item = {
          op_id: op.op_id, op: op, kind: op.kind, permit_id: permitId,
          label: "Annual O&M certification · permit " + form.dataset.permitNumber, href: location.pathname,
          blobs: sha ? [{ sha256: sha, size: png.size, type: "image/png", photo: false }] : [],
          signature: drawn,  // to draw it again if the server refuses the item
        };
        var blobs = sha ? [{ sha256: sha, blob: png, type: "image/png", size: png.size }] : [];
        return O.enqueue(item, blobs, { replaces: correcting });
      }).then(function () {
        var doneUrl = form.dataset.certificationUrl.replace("CERTIFICATION_ID", recordId);
        return sendAndFollow(item, doneUrl, saved, function (left) { button.disabled = false; showRefused(left); });
      }, function (error) {
        button.disabled = false;
        say("error", "This device could not keep the certification: " + error + ". Nothing was sent; try again.");
      });
    }

    // A refused certification to correct (`#item=<op_id>`), signed again for the period this page shows;
    // and one per period: one already waiting on this device is not made twice.
    function load() {
      return O.store.all("outbox").then(function (items) {
        var mine = items.filter(function (i) {
          return i.op && i.op.kind === "om.certify" && i.op.payload.permit_id === permitId;
        });
        var fixing = mine.filter(function (i) { return i.op_id === correcting && isRefused(i); })[0];
        if (fixing) {
          setValue(form, "cert", "signer_name", fixing.op.payload.signer_name);
          drawSignature(fixing.signature);
          showRefused(fixing);
          return;
        }
        correcting = null;
        if (correctingId()) sameUrlWith("");
        if (mine.some(function (i) { return i.op.payload.period_start === periodStart && !isRefused(i); })) saved();
      });
    }

    load().then(function () {
      form.addEventListener("submit", function (event) { event.preventDefault(); submit(); });
      form.addEventListener("input", clearFieldError);
      form.addEventListener("change", clearFieldError);
      window.addEventListener("hashchange", function () {
        if (form.isConnected && correctingId() && correctingId() !== correcting) location.reload();
      });
      if (channel) channel.addEventListener("message", function () { if (form.isConnected) renderWaiting(permitId); });
      renderWaiting(permitId);
      form.dataset.loaded = "1";
    }, function () { /* no IndexedDB: the form posts to the server */ });
  }

  function init() {
    if (!window.Outbox) return;
    document.querySelectorAll("form[data-offline-om]").forEach(function (form) {
      if (form.dataset.omReady) return;
      form.dataset.omReady = "1";
      if (form.dataset.offlineOm === "log") setUpLog(form);
      else if (form.dataset.offlineOm === "certify") setUpCertify(form);
    });
  }

  window.OfflineOM = { init: init };
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", init);
  } else {
    init();
  }
})();
