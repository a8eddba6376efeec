// The offline inspection form (templates/offline/inspection_form.html): a draft kept in IndexedDB as it
// is typed, findings, photos, a walk-through's punch list and an erosion-control report's typed controls
// added on the device, and on submit an `inspection.submit` operation in the outbox (static/outbox.js
// sends it). Needs window.Outbox; safe to load more than once (hx-boost).
(function () {
  "use strict";

  var SAVE_DELAY_MS = 250;
  // The online form's limits for typed controls (inspections/forms.py `_controls`) and punch-list items.
  var MAX_CONTROLS = 100;
  var MAX_CONTROL_NAME = 120;
  var MAX_PUNCH = 2000;

  function setUp(form) {
    var O = window.Outbox;
    var permitId = form.dataset.permitId;
    var type = form.dataset.type;
    var draftKey = "inspection:" + permitId + ":" + type;
    var correcting = (location.hash.match(/item=([0-9a-f-]+)/) || [])[1] || null;
    var state = null;
    var urls = [];
    var message = document.getElementById("offline-message");
    var problem = document.getElementById("offline-error");
    var pad = document.querySelector("[data-signature-pad]");
    var signature = pad && pad.querySelector("[data-signature-value]");
    var controlsBox = document.getElementById("controls");

    function fieldValues() {
      var values = {};
      new FormData(form).forEach(function (value, name) {
        if (name === "signature" || name === "csrf_token") return;
        if (name in values) {
          values[name] = [].concat(values[name], value);
        } else {
          values[name] = value;
        }
      });
      return values;
    }

    function localNow() {
      var d = new Date();
      return O.isoWithOffset(d).slice(0, 16);
    }

    // --- the draft ----------------------------------------------------------------------------------
    var timer = null;
    function saveSoon() {
      clearTimeout(timer);
      timer = setTimeout(saveDraft, SAVE_DELAY_MS);
    }
    function saveDraft() {
      clearTimeout(timer);
      if (!state || state.sent) return Promise.resolve();
      state.fields = fieldValues();
      state.signature = signature ? signature.value : "";
      state.saved_at = new Date().toISOString();
      return O.store.put("drafts", state);
    }

    function restore(saved) {
      state = saved;
      state.controls = state.controls || [];
      state.punch_list = state.punch_list || [];
      renderControls();  // first: the answers restored below need the typed controls' rows
      Object.keys(state.fields || {}).forEach(function (name) {
        var values = [].concat(state.fields[name]);
        Array.prototype.forEach.call(form.elements, function (el) {
          if (el.name !== name) return;
          if (el.type === "radio" || el.type === "checkbox") el.checked = values.indexOf(el.value) >= 0;
          else el.value = values[0];
        });
      });
      if (signature && state.signature) {
        signature.value = state.signature;
        var canvas = pad.querySelector("canvas");
        var image = new Image();
        image.onload = function () {
          var box = canvas.getBoundingClientRect();
          canvas.getContext("2d").drawImage(image, 0, 0, box.width, box.height);
          pad.classList.add("signed");
        };
        image.src = state.signature;
      }
      renderFindings();
      renderPhotos();
      renderPunch();
    }

    function fresh() {
      return {
        key: draftKey, inspection_id: O.uuid(), permit_id: permitId, type: type, fields: {},
        findings: [], photos: [], controls: [], punch_list: [], latitude: null, longitude: null,
        started_at: new Date().toISOString(),
      };
    }

    function locate() {
      if (!navigator.geolocation || state.latitude !== null) return;
      navigator.geolocation.getCurrentPosition(function (position) {
        state.latitude = Number(position.coords.latitude.toFixed(6));
        state.longitude = Number(position.coords.longitude.toFixed(6));
        var where = document.querySelector("[data-location]");
        if (where) where.textContent = state.latitude + ", " + state.longitude + " (device GPS)";
        saveSoon();
      }, function () { /* the permit site is used */ }, { enableHighAccuracy: true, timeout: 5000, maximumAge: 60000 });
    }

    // --- photos -------------------------------------------------------------------------------------
    function addPhotos(input) {
      var findingId = input.dataset.finding || null;
      var files = Array.prototype.slice.call(input.files || []);
      input.value = "";
      return Promise.all(files.map(function (file) {
        return O.sha256(file).then(function (sha) {
          var blob = new Blob([file], { type: file.type || "image/jpeg" });
          return O.store.put("blobs", { sha256: sha, blob: blob, type: blob.type, size: blob.size })
            .then(function () {
              state.photos.push({ id: O.uuid(), sha256: sha, caption: "", finding_id: findingId,
                                  type: blob.type, size: blob.size });
            });
        });
      })).then(function () { renderPhotos(); return saveDraft(); });
    }

    function renderPhotos() {
      urls.forEach(URL.revokeObjectURL);
      urls = [];
      document.querySelectorAll("[data-photo-list]").forEach(function (list) {
        var findingId = list.dataset.finding || null;
        list.textContent = "";
        state.photos.filter(function (p) { return (p.finding_id || null) === findingId; }).forEach(function (photo) {
          list.appendChild(O.photoTile(photo, urls, saveSoon, function () {
            state.photos = state.photos.filter(function (p) { return p !== photo; });
            renderPhotos();
            saveDraft();
          }));
        });
      });
    }

    // --- findings -----------------------------------------------------------------------------------
    function value(id) { var el = document.getElementById(id); return el ? el.value.trim() : ""; }

    function addFinding() {
      var error = document.querySelector("[data-finding-error]");
      var description = value("finding-description");
      var kind = value("action-kind");
      var say = function (text) { error.textContent = text; error.hidden = !text; };
      if (!description) return say("Describe what was found.");
      if (kind && !value("action-description")) return say("Say what must be done for the corrective action.");
      say("");
      state.findings.push({
        id: O.uuid(), description: description, location: value("finding-location"),
        severity: value("finding-severity") || "minor",
        is_violation: document.getElementById("finding-is_violation").checked,
        citation: value("finding-citation"), area_id: value("finding-area_id") || null,
        structure_id: value("finding-structure_id") || null,
        actions: kind ? [{ id: O.uuid(), kind: kind, description: value("action-description"),
                           owner_name: value("action-owner_name") }] : [],
      });
      ["finding-description", "finding-location", "finding-citation", "action-description", "action-owner_name"]
        .forEach(function (id) { document.getElementById(id).value = ""; });
      ["finding-area_id", "finding-structure_id", "action-kind"].forEach(function (id) {
        document.getElementById(id).value = "";
      });
      document.getElementById("finding-is_violation").checked = false;
      renderFindings();
      renderPhotos();
      saveDraft();
    }

    function renderFindings() {
      var box = document.querySelector("[data-findings]");
      var template = document.getElementById("finding-template");
      box.querySelectorAll("article").forEach(function (a) { a.remove(); });
      box.querySelector("[data-findings-empty]").hidden = state.findings.length > 0;
      state.findings.forEach(function (finding) {
        var article = template.content.firstElementChild.cloneNode(true);
        article.dataset.findingId = finding.id;
        article.id = "finding-" + finding.id;
        article.querySelector("[data-finding-title]").textContent =
          (finding.is_violation ? "Violation: " : "") + finding.description;
        article.querySelector("[data-finding-meta]").textContent = [finding.severity, finding.location, finding.citation]
          .filter(Boolean).join(" · ");
        var action = finding.actions[0];
        article.querySelector("[data-finding-action]").textContent = action
          ? "Corrective action (" + action.kind.replace(/_/g, " ") + "): " + action.description +
            (action.owner_name ? " · owner " + action.owner_name : "") : "";
        article.querySelectorAll("[data-finding]").forEach(function (el) { el.dataset.finding = finding.id; });
        var input = article.querySelector("[data-photo-input]");
        input.id = "photo-input-" + finding.id;
        article.querySelector("[data-photo-label]").setAttribute("for", input.id);
        article.querySelector("[data-finding-remove]").addEventListener("click", function () {
          state.findings = state.findings.filter(function (f) { return f !== finding; });
          state.photos = state.photos.filter(function (p) { return p.finding_id !== finding.id; });
          renderFindings();
          renderPhotos();
          saveDraft();
        });
        box.appendChild(article);
      });
    }

    // --- typed controls (erosion control) ------------------------------------------------------------
    // Online, saving the draft gives each new line of `controls` an id and the checklist a row per control
    // for the items asked per control. Here each name gets an id made on this device, kept in the draft
    // (a renamed line is a new control), and its rows are added at once; the ids travel in the
    // operation's `controls`, so the server keeps them and the answers (answer-<item>-<id>) stay theirs.
    function controlsProblem(lines) {
      if (lines.length > MAX_CONTROLS || lines.some(function (n) { return n.length > MAX_CONTROL_NAME; })) {
        return "List at most " + MAX_CONTROLS + " controls, each under " + MAX_CONTROL_NAME + " characters.";
      }
      return "";
    }

    function syncControls() {
      if (!controlsBox) return "";
      var known = {};
      state.controls.forEach(function (c) { known[c.name.toLowerCase()] = c.id; });
      var lines = controlsBox.value.split("\n").map(function (l) { return l.trim(); }).filter(Boolean);
      var problem = controlsProblem(lines);
      var error = document.querySelector("[data-controls-error]");
      error.textContent = problem;
      error.hidden = !problem;
      var seen = {};
      state.controls = [];
      lines.slice(0, MAX_CONTROLS).forEach(function (line) {
        var name = line.slice(0, MAX_CONTROL_NAME);
        var key = name.toLowerCase();
        if (seen[key]) return;  // one id per name, as the server keeps it
        seen[key] = true;
        state.controls.push({ id: known[key] || O.uuid(), name: name });
      });
      renderControls();
      return problem;
    }

    function controlRow(template, itemKey, controlId) {
      var row = template.content.firstElementChild.cloneNode(true);
      row.dataset.controlId = controlId;
      row.querySelectorAll("[id], [name], [for], [aria-describedby]").forEach(function (el) {
        ["id", "name", "for", "aria-describedby"].forEach(function (attribute) {
          var value = el.getAttribute(attribute);
          if (value) el.setAttribute(attribute, value.split("KEY-ID").join(itemKey + "-" + controlId));
        });
      });
      return row;
    }

    function renderControls() {
      var template = document.getElementById("control-row-template");
      if (!template) return;
      document.querySelectorAll("[data-typed-controls]").forEach(function (box) {
        var item = box.closest("[data-item-key]");
        var rows = {};
        box.querySelectorAll("[data-control-row]").forEach(function (row) { rows[row.dataset.controlId] = row; });
        state.controls.forEach(function (control) {
          var row = rows[control.id] || controlRow(template, item.dataset.itemKey, control.id);
          delete rows[control.id];
          row.querySelector("legend").textContent = control.name;
          box.appendChild(row);  // in the order of the lines; a kept row keeps its answer
        });
        Object.keys(rows).forEach(function (id) { rows[id].remove(); });
        var empty = item.querySelector("[data-checklist-empty]");
        if (empty) empty.hidden = state.controls.length > 0;
      });
    }

    // --- punch list (walk-through) ---------------------------------------------------------------------
    function addPunch() {
      var input = document.getElementById("punch-description");
      var error = document.querySelector("[data-punch-error]");
      var say = function (text) { error.textContent = text; error.hidden = !text; };
      var description = input.value.trim();
      if (!description) return say("Describe the remaining work and where it is.");
      if (description.length > MAX_PUNCH) return say("Keep it under " + MAX_PUNCH + " characters.");
      say("");
      state.punch_list.push({ id: O.uuid(), description: description });
      input.value = "";
      renderPunch();
      saveDraft();
    }

    function renderPunch() {
      var list = document.querySelector("[data-punch-list]");
      if (!list) return;
      list.textContent = "";
      document.querySelector("[data-punch-empty]").hidden = state.punch_list.length > 0;
      state.punch_list.forEach(function (item) {
        var li = document.createElement("li");
        li.id = "punch-item-" + item.id;
        li.dataset.punchId = item.id;
        var text = document.createElement("span");
        text.dataset.punchDescription = "";
        text.textContent = item.description;
        var remove = document.createElement("button");
        remove.type = "button";
        remove.className = "btn btn-secondary";
        remove.textContent = "Remove";
        remove.setAttribute("aria-label", "Remove: " + item.description);
        remove.addEventListener("click", function () {
          state.punch_list = state.punch_list.filter(function (p) { return p !== item; });
          renderPunch();
          saveDraft();
        });
        li.appendChild(text);
        li.appendChild(document.createTextNode(" "));
        li.appendChild(remove);
        list.appendChild(li);
      });
    }

    // --- submit -------------------------------------------------------------------------------------
    function dataUrlBlob(dataUrl) {
      var bytes = atob(dataUrl.split(",")[1]);
      var array = new Uint8Array(bytes.length);
      for (var i = 0; i < bytes.length; i++) array[i] = bytes.charCodeAt(i);
      return new Blob([array], { type: "image/png" });
    }

    function submit() {
      var started = performance.now();
      problem.hidden = true;
      var refusal = (!signature || !signature.value) ? "Sign the report on the signature pad." : syncControls();
      if (refusal) {
        problem.textContent = refusal;
        problem.hidden = false;
        return Promise.resolve();
      }
      var fields = fieldValues();
      var performed = fields.performed_at ? new Date(fields.performed_at) : new Date();
      var png = dataUrlBlob(signature.value);
      return O.sha256(png).then(function (signatureSha) {
        var photos = state.photos.map(function (p) {
          return { id: p.id, sha256: p.sha256, caption: p.caption || "", finding_id: p.finding_id || null };
        });
        var op = {
          op_id: O.uuid(), kind: "inspection.submit", record_id: state.inspection_id, base_revision: null,
          device_time: O.isoWithOffset(new Date()),
          payload: {
            permit_id: permitId, type: type, performed_at: O.isoWithOffset(performed),
            latitude: state.latitude, longitude: state.longitude, form: fields,
            signature_sha256: signatureSha, findings: state.findings, photos: photos,
            // Each only for its own type (the server refuses them on another).
            punch_list: type === "walk_through" ? state.punch_list : [],
            controls: type === "erosion_control" ? state.controls : [],
          },
        };
        var blobs = state.photos.map(function (p) {
          return { sha256: p.sha256, size: p.size, type: p.type, photo: true, caption: p.caption || "" };
        });
        blobs.push({ sha256: signatureSha, size: png.size, type: "image/png", photo: false });
        state.fields = fields;
        state.signature = signature.value;
        var item = {
          op_id: op.op_id, op: op, kind: op.kind, permit_id: permitId,
          label: form.dataset.typeName + " · permit " + form.dataset.permitNumber,
          href: location.pathname, blobs: blobs, draft: state,
        };
        return O.enqueue(item, [{ sha256: signatureSha, blob: png, type: "image/png", size: png.size }],
                         { draftKey: draftKey, replaces: correcting });
      }).then(function () {
        state.sent = true;
        message.className = "flash flash-success";
        message.textContent = "Saved on this device — will sync";
        document.getElementById("submit-report").disabled = true;
        window.lastSaveMs = performance.now() - started;
        message.scrollIntoView({ block: "center" });
        O.syncSoon();
      }, function (error) {
        problem.textContent = "This device could not keep the report: " + error + ". Nothing was sent; try again.";
        problem.hidden = false;
      });
    }

    // --- wiring -------------------------------------------------------------------------------------
    form.addEventListener("submit", function (event) { event.preventDefault(); submit(); });
    document.addEventListener("input", function (event) {
      if (form.isConnected && event.target.form === form) saveSoon();
    });
    document.addEventListener("change", function (event) {
      var target = event.target;
      if (!form.isConnected) return;  // a page left by hx-boost
      if (target.matches && target.matches("[data-photo-input]")) addPhotos(target);
      else if (target.form === form) saveSoon();
    });
    document.getElementById("add-finding").addEventListener("click", addFinding);
    if (controlsBox) controlsBox.addEventListener("input", syncControls);  // before the draft is saved
    var punchInput = document.getElementById("punch-description");
    if (punchInput) {
      document.getElementById("add-punch").addEventListener("click", addPunch);
      punchInput.addEventListener("keydown", function (event) {
        if (event.key === "Enter") { event.preventDefault(); addPunch(); }
      });
    }
    if (pad) {
      pad.addEventListener("pointerup", function () { setTimeout(saveDraft, 0); });
      pad.addEventListener("click", function (event) {
        if (event.target.matches("[data-signature-clear]")) setTimeout(saveDraft, 0);
      });
    }
    // Keep what was typed last when the tab goes away (the debounce may not have run yet).
    document.addEventListener("visibilitychange", function () { if (document.hidden) saveDraft(); });
    window.addEventListener("pagehide", saveDraft);

    var loading = correcting
      ? O.store.get("outbox", correcting).then(function (item) {
        if (!item) return O.store.get("drafts", draftKey);
        var draft = item.draft;
        draft.sent = false;
        message.className = "flash flash-warning";
        message.textContent = "The server refused this report: " + Object.keys(item.reasons || {}).map(function (k) {
          return (k ? k + ": " : "") + item.reasons[k];
        }).join("; ") + " Correct it and submit again.";
        return draft;
      })
      : O.store.get("drafts", draftKey);
    loading.then(function (saved) {
      if (saved) {
        restore(saved);
      } else {
        state = fresh();
        var when = document.getElementById("performed_at");
        if (when && !when.value) when.value = localNow();
        renderFindings();
        renderPunch();
        saveDraft();
      }
      form.dataset.loaded = "1";
      locate();
    });
  }

  function init() {
    var form = document.querySelector("form[data-offline-report]");
    if (!form || form.dataset.ready || !window.Outbox) return;
    form.dataset.ready = "1";
    setUp(form);
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", init);
  } else {
    init();
  }
})();
