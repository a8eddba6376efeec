// Front-end shell glue for htmx 2 (the CSRF header is the page's own: base.html's hx-headers): error pages under
// hx-boost, offline fallback, the device's ids, drafts and repeating parts. A module: run once per document.
import "./formstore.js";

// htmx 2 drops 4xx/5xx bodies. A boosted navigation should show our error page, 422 is how a form comes back
// with its errors beside the fields, and 401 says a form was not taken for want of its author's sign-in (and
// whether the device kept it: errors/_401.html).
document.addEventListener("htmx:beforeSwap", (evt) => {
  const d = evt.detail, status = d.xhr ? d.xhr.status : 0;
  if (status >= 400 && d.serverResponse && (d.boosted || status === 422 || status === 401)) {
    Object.assign(d, { shouldSwap: true, isError: false });
  }
});

// A refusal htmx does not swap in (a page older than the sign-in now on the tablet: 400; not allowed: 403; gone: 404; a
// server error) is said beside what was tapped, in the server's page's own words: a tap must never seem to do
// nothing. (A photo picker says its own.)
document.addEventListener("htmx:responseError", (evt) => {
  const d = evt.detail, status = d.xhr ? d.xhr.status : 0;
  if (d.boosted || status === 401 || status === 422 || d.elt?.matches?.("[data-photo-upload]")) return;
  const page = new DOMParser().parseFromString(d.xhr?.responseText || "", "text/html");
  const words = [...page.querySelectorAll("main h1, main .card > p")].slice(0, 2).map((e) => e.textContent.trim());
  sayBeside(d.elt, words.join(": ") || `Not done: the server answered ${status}. Nothing was changed.`);
});

// `words` in the note after the form of `elt` (or after `elt`): one note, said again in place.
function sayBeside(elt, words) {
  const anchor = elt.closest("form") || elt;
  let note = anchor.nextElementSibling;
  if (!note?.matches("[data-refused-note]")) {
    note = Object.assign(document.createElement("p"), { className: "flash flash-error" });
    note.setAttribute("role", "alert");
    note.dataset.refusedNote = "";
    anchor.after(note);
  }
  note.textContent = words;
}

// A boosted GET that cannot reach anything: let the browser navigate for real,
// so the service worker can answer with a saved page or the offline page. A form that could not be sent, and that
// the device does not keep (one with no idempotency key), says so beside its button: a tap never seems to do nothing.
document.addEventListener("htmx:sendError", (evt) => {
  const d = evt.detail, cfg = d.requestConfig || {};
  if (d.boosted && cfg.verb === "get" && cfg.path) { window.location.href = cfg.path; return; }
  if (cfg.verb === "get" || !d.elt) return;
  sayBeside(d.elt, "Not saved: this device cannot reach the server, and this form is not kept on it. "
    + "Try again when the connection is back.");
});

// Each form post carries its own key, so a post sent again from the outbox is applied once (a new report's
// submission: the report's own key, below); a new report takes the id this device made for it, in its URL.
const opened = new WeakSet();  // the forms[data-draft] set up
function freshForms(root) {
  // A new report's are filled once its id is known (ownReport); till then none, whatever the browser restored.
  root.querySelectorAll("input[data-fresh-key]").forEach((input) => {
    if (!opened.has(input.form)) input.value = input.form?.dataset.newRecord ? "" : crypto.randomUUID();
  });
  const back = root === document && performance.getEntriesByType?.("navigation")[0]?.type === "back_forward";
  root.querySelectorAll("form[data-new-record]").forEach((form) => {
    const when = document.getElementById("performed_at");  // now, on the town's clock
    if (when && !when.value) {
      when.value = new Intl.DateTimeFormat("sv-SE", { timeZone: form.dataset.localTz, year: "numeric",
        month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit" }).format(new Date()).replace(" ", "T");
    }
  });
  // Each form once (htmx's first htmx:load is the whole body again); a form swapped in later was not gone Back to.
  const forms = Array.from(root.querySelectorAll("form[data-draft]")).filter((form) => !opened.has(form));
  forms.forEach((form) => { opened.add(form); shown.set(form, values(form)); });
  // The form just posted shows the server's answer (saved, or refused with what was sent): its typing is in it
  // already, and put back again it would add a second, unsaved copy of each finding it posted (sent with the next
  // save, it was recorded twice). Not when no one kept the post (a sign-in wanted: the typing is all there is).
  const justPosted = sessionStorage.getItem("posted-draft") && !document.querySelector("[data-kept-note][hidden]")
    ? sessionStorage.getItem("posted-draft") : null;
  Promise.all(forms.map((form) => (form.dataset.newRecord ? ownReport(form, back) : Promise.resolve())
    .then(() => (form.dataset.draft === justPosted ? null : restore(form))))).then(() => {  // another tab's typing is read before this tab's is forgotten
    showProgress();  // the answers kept on the device count too
    return settlePosted();
  });
}

// Unsaved typing survives a reload and a closed tab: a form[data-draft] keeps its fields on the device a
// moment after each change, gets them back when it opens (online or held), and forgets them once posted
// (the server has them then, or the outbox). Files and hidden fields are not kept: a photo chosen but not
// saved must be chosen again. Typing is its author's: kept under the signed-in user, given back to them alone.
const Drafts = DeviceStore("drafts");
const user = () => document.getElementById("main")?.dataset.user || null;  // whom the page was made for
const drafts = "BroadcastChannel" in window ? new BroadcastChannel("drafts") : null;
let typing = null;
const fields = (form) => Array.from(form.elements).filter((el) => el.name && !/^(file|hidden|submit|button)$/.test(el.type));
const prop = (el) => (/^(radio|checkbox)$/.test(el.type) ? "checked" : "value");
const keyOf = (el) => (prop(el) === "checked" ? `${el.name}=${el.value}` : el.name);
// What the page showed of each field as it opened, and the fields this tab changed from it: the typing kept is
// those changes, merged with what other tabs of the draft keep, so a tab opened before another tab's save, reloaded,
// puts back what was typed in it and not its stale copy of the rest (the other tab's saved notes stay).
const shown = new WeakMap(), touched = new WeakMap();
const values = (form) => Object.fromEntries(fields(form).map((el) => [keyOf(el), el[prop(el)]]));
function keep(form) {
  const was = shown.get(form) || {}, now = values(form), mine = touched.get(form) || new Set();
  touched.set(form, mine);
  Object.keys(now).forEach((key) => { if (now[key] !== was[key]) mine.add(key); });
  const merged = (stored) => {
    const kept = { ...(stored?.fields || {}) };
    mine.forEach((key) => { if (now[key] !== was[key]) kept[key] = now[key]; else delete kept[key]; });  // typed back
    return kept;
  };
  const parts = Array.from(document.querySelectorAll("[data-part*=' ']"), (p) => p.dataset.part);
  clearTimeout(typing);
  // A new report sent (here, in another tab) or replaced by the next one keeps no more typing from this page.
  typing = setTimeout(() => Drafts.update(form.dataset.draft, (stored) => (form.dataset.newRecord
    && (!stored || stored.sent || stored.report !== form.dataset.newRecord) ? null
    : { ...stored, id: form.dataset.draft, user: user(), fields: merged(stored), parts })), 300);
}
async function restore(form) {
  const draft = await Drafts.get(form.dataset.draft);
  if (!draft || (draft.user && draft.user !== user())) return;
  draft.parts.forEach((p) => { if (!document.querySelector(`[data-part="${p}"]`)) addPart(...p.split(" ")); });
  fields(form).forEach((el) => { if (keyOf(el) in draft.fields) el[prop(el)] = draft.fields[keyOf(el)]; });
}
document.addEventListener("input", (evt) => { if (evt.target.form?.dataset.draft) keep(evt.target.form); });
if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", () => freshForms(document));
else freshForms(document);  // loaded async, after the page was parsed (offline/saved.html)
document.addEventListener("htmx:load", (evt) => freshForms(evt.target));

// A new report's id and the key of its submission belong to the report, not to the page: kept on the device with
// its typing, they are taken again by a reload, a second tab and Back after it was posted, so the report is
// posted once whatever is pressed (the server and the worker answer a key they have seen with the first answer).
// Once it was taken (by the server or the outbox), opening the form again, not by Back, starts the next report.
async function ownReport(form, back) {
  const planned = form.dataset.newRecord, stored = await Drafts.get(form.dataset.draft);
  // Taken also when its post waits in the outbox, though the page after it has not said so yet (opened at once, or
  // on a slow tablet): the next report must not take its id and key, or the worker would keep it as the same post.
  const mine = stored?.report && stored.user === user();
  const same = mine && (back || !(stored.taken || await waitsInOutbox(stored.report)));
  const report = same ? stored.report : crypto.randomUUID(), key = same ? stored.key : crypto.randomUUID();
  if (!same) {  // typing of the release before, which kept no report, stays with the report it was typed for
    const typed = stored && !stored.report ? { fields: stored.fields, parts: stored.parts } : { fields: {}, parts: [] };
    await Drafts.put({ id: form.dataset.draft, user: user(), report, key, ...typed });
  }
  for (const el of [form, ...document.querySelectorAll(`[form="${form.id}"][formaction]`)]) {
    const name = el === form ? "action" : "formaction";
    el.setAttribute(name, el.getAttribute(name).replace(planned, report));
  }
  Object.assign(form.dataset, { newRecord: report, reportKey: key });
  form.querySelectorAll("input[data-fresh-key]").forEach((input) => { input.value = crypto.randomUUID(); });
  if (same && stored.sent) saySent(form);
}

// Whether a post of the report `id` (its save or its submission) waits on this device for the outbox.
async function waitsInOutbox(id) {
  const posts = await DeviceStore("posts").all().catch(() => []);
  return posts.some((post) => post.url.includes(`/inspections/${id}`));
}

// "Already sent from this device" on a new report's page (its [data-sent-note]), with the way to it.
function saySent(form) {
  const note = document.querySelector(`[data-sent-note="${form.id}"]`);
  if (!note) return;
  note.querySelectorAll("[data-sent-report]").forEach((a) => { a.href = form.getAttribute("action"); });
  note.hidden = false;
}
drafts?.addEventListener("message", ({ data }) => {
  document.querySelectorAll(`form[data-new-record="${data.report}"]`).forEach(saySent);
});
// Back to a page the browser kept whole (its back/forward cache): no script runs again, so ask.
window.addEventListener("pageshow", (evt) => {
  if (!evt.persisted) return;
  document.querySelectorAll("form[data-new-record]").forEach(async (form) => {
    if ((await Drafts.get(form.dataset.draft))?.sent) saySent(form);
  });
});

// A posted form's typing is forgotten once the next page shows the post was taken: by the server, or kept on the
// device for the outbox. Not when the server refused it for want of a sign-in and nothing was kept (no service
// worker: its page's [data-kept-note] stays hidden); the typing is then all there is. A new report's record
// stays, taken: Back to it posts the same report.
async function settlePosted() {
  const posted = sessionStorage.getItem("posted-draft");
  if (!posted) return;
  sessionStorage.removeItem("posted-draft");
  if (document.querySelector("[data-kept-note][hidden]")) {
    await Drafts.update(posted, (kept) => kept && { ...kept, sent: null });
  } else if ((await Drafts.get(posted))?.report) {
    // Said again from here: the posting page may have gone before its own word reached the other tabs.
    let report = null;
    await Drafts.update(posted, (kept) => kept && (report = kept.report) && {
      ...kept, fields: {}, parts: [], taken: true, sent: kept.sent || new Date().toISOString() });
    if (report) drafts?.postMessage({ report });
  } else {
    await Drafts.del(posted);
  }
}

// Repeating parts of a form (a finding, a punch-list item, a control): its <template> cloned under an id
// this device makes, or removed again. data-part becomes "<template> <id>", so a kept draft can bring it back.
const NAMING = ["id", "name", "for", "aria-describedby", "data-part"];
function addPart(templateId, id) {
  const part = document.getElementById(templateId).content.cloneNode(true);
  part.querySelectorAll(NAMING.map((name) => `[${name}]`).join()).forEach((el) => {
    NAMING.forEach((name) => { if (el.hasAttribute(name)) el.setAttribute(name, el.getAttribute(name).replaceAll("__id__", id)); });
  });
  document.querySelector(`[data-list-of="${templateId}"]`).appendChild(part);
}
document.addEventListener("click", (evt) => {
  const add = evt.target.closest?.("[data-add]"), remove = evt.target.closest?.("[data-remove]");
  if (add) addPart(add.dataset.add, crypto.randomUUID());
  if (remove) {
    remove.closest("[data-part]").remove();
    document.querySelectorAll("form[data-draft]").forEach(keep);
  }
});

// Page scripts (modules: each runs once per document) set up their elements through this: those on the
// page and those htmx swaps in later, each once; a setUp that answers false is tried again with the next swap.
window.setUpEach = (selector, setUp) => {
  const done = new WeakSet();
  const setUpIn = (root) => [...root.querySelectorAll(selector), ...(root.matches?.(selector) ? [root] : [])]
    .forEach((el) => { if (!done.has(el) && setUp(el) !== false) done.add(el); });
  document.addEventListener("htmx:load", (evt) => setUpIn(evt.detail.elt));
  setUpIn(document);
};

// The service worker makes the app open with no network (served from the root: it controls "/"); none where
// the origin is not secure.
navigator.serviceWorker?.register("/sw.js").catch(() => null);

// A posted form's draft is forgotten as the next page opens (settlePosted): the post goes first. A new report's
// submission (its button[data-once]) carries the report's own key; its saves, the page's.
document.addEventListener("submit", (evt) => {
  const form = evt.target;
  if (!form.dataset.draft) return;
  clearTimeout(typing);
  sessionStorage.setItem("posted-draft", form.dataset.draft);
  const key = form.querySelector("input[data-fresh-key]"), report = form.dataset.newRecord;
  if (!report || !key) return;
  key.dataset.pageKey ??= key.value;
  key.value = evt.submitter?.hasAttribute("data-once") ? form.dataset.reportKey : key.dataset.pageKey;
  Drafts.update(form.dataset.draft, (kept) => kept?.report === report && { ...kept, sent: new Date().toISOString() })
    .then(() => drafts?.postMessage({ report }));
}, true);

// The report form on a tablet (inspections/report.html). Each checklist item is a section (<details
// data-section>) whose subjects are fieldset[data-answer]; [data-progress] says how many are answered, and
// a[data-first-unanswered] goes to the first that is not. The server renders them right; these keep them right
// as the inspector taps (subjects of a control added on the device count too).
const answered = (fieldset) => !!fieldset.querySelector("input[type=radio]:checked");
function showProgress() {
  if (!document.querySelector("[data-progress]")) return;
  const all = [...document.querySelectorAll("fieldset[data-answer]")];
  document.querySelectorAll("[data-section]").forEach((section) => {
    const rows = [...section.querySelectorAll("fieldset[data-answer]")], done = rows.filter(answered).length;
    section.querySelectorAll(":scope > summary [data-section-progress]").forEach((el) => {
      el.textContent = rows.length ? `${done} of ${rows.length}` : "nothing to answer";
      el.classList.toggle("pill-met", done === rows.length);
    });
  });
  const done = all.filter(answered).length, first = all.find((row) => !answered(row));
  document.querySelectorAll("[data-progress]").forEach((el) => { el.textContent = `${done} of ${all.length} answered`; });
  document.querySelectorAll("a[data-first-unanswered]").forEach((a) => {
    a.hidden = !first;
    if (first) a.setAttribute("href", `#${first.id}`);
  });
}
document.addEventListener("change", (evt) => { if (evt.target.closest?.("fieldset[data-answer]")) showProgress(); });
document.addEventListener("click", (evt) => { if (evt.target.closest?.("[data-add], [data-remove]")) showProgress(); });

// A link to a field of the page (the error summary's, "first unanswered"): the section holding it opens, the
// page goes there and the field takes the focus (its first input), as the inspector would go on from it.
function goTo(id) {
  const target = id && document.getElementById(id);
  if (!target) return false;
  for (let el = target.parentElement; el; el = el.parentElement) if (el.tagName === "DETAILS") el.open = true;
  target.scrollIntoView({ block: "center" });
  (target.matches("input, select, textarea, button") ? target : target.querySelector("input, select, textarea"))
    ?.focus({ preventScroll: true });
  return true;
}
// A refused post opened from the outbox (/outbox/correct/<id>: the server's answer, kept by the worker) goes to
// what the server said is wrong, as the outbox's "open it to see why" promised: the form itself starts at the top.
if (location.pathname.startsWith("/outbox/correct/")) {
  const said = document.querySelector("#error-summary, .error-summary, .field-error");
  if (said?.classList.contains("field-error")) goTo(said.id.replace(/-error$/, ""));
  else said?.scrollIntoView({ block: "center" });
}
document.addEventListener("click", (evt) => {
  const link = evt.target.closest?.("a[href^='#']");
  if (link && (link.closest("#error-summary") || link.hasAttribute("data-first-unanswered"))
      && goTo(decodeURIComponent(link.getAttribute("href").slice(1)))) evt.preventDefault();
});

// "All compliant": Yes to every subject of the section not answered yet (never one already answered), folding
// the item sections it finished, and "Undo" takes back exactly those. Only the page changes: the form posts as typed, online or from the outbox.
const given = new WeakMap();  // the button → the radios it checked
const foldedBy = new WeakMap();  // the button → the item sections it folded
function say(section, words) {
  const status = section.querySelector("[data-compliant-status]");
  if (status) status.textContent = words;
}
document.addEventListener("click", (evt) => {
  const all = evt.target.closest?.("[data-all-compliant]"), undo = evt.target.closest?.("[data-undo-compliant]");
  if (!all && !undo) return;
  const section = (all || undo).closest("[data-compliant-scope]");
  const [button, back] = ["[data-all-compliant]", "[data-undo-compliant]"].map((s) => section.querySelector(s));
  const changed = (radio) => ["input", "change"].forEach((type) => radio.dispatchEvent(new Event(type, { bubbles: true })));
  if (all) {
    const yes = [...section.querySelectorAll("fieldset[data-answer]")].filter((row) => !answered(row))
      .map((row) => row.querySelector("input[type=radio][value=yes]")).filter(Boolean);
    yes.forEach((radio) => { radio.checked = true; changed(radio); });
    // The item sections it finished fold away (the inspector asked for all of them at once), so the page
    // goes on to what is left; Undo opens them again.
    const folded = [...new Set(yes.map((radio) => radio.closest("details[data-section]")))]
      .filter((item) => item?.open && item !== section && !item.querySelector(".has-error")
        && [...item.querySelectorAll("fieldset[data-answer]")].every(answered));
    folded.forEach((item) => { item.open = false; });
    given.set(back, yes);
    foldedBy.set(back, folded);
    back.hidden = !yes.length;
    say(section, yes.length ? `${yes.length} answered Yes.` : "Every item here was already answered.");
  } else {
    const yes = (given.get(back) || []).filter((radio) => radio.checked);
    yes.forEach((radio) => { radio.checked = false; changed(radio); });
    (foldedBy.get(back) || []).forEach((item) => { item.open = true; });
    given.delete(back);
    foldedBy.delete(back);
    back.hidden = true;
    say(section, `Undone: ${yes.length} unanswered again.`);
    button.focus();
  }
});

// A "no" shows its fix (static/app.css) and fills in what it can: the day first observed is the inspection's, and
// who does it the permittee (the operator who must correct it, CGP 2022 Part 5), each only where empty and each
// changeable (data-filled remembers what the page put there). Another answer hides the fix again, and takes back
// what the page filled in and nobody changed; what was typed is never hidden.
const inspectionDay = (form) => {
  // The inspection's time is the form's control, though outside it (form="report-form"): form.elements has it.
  const at = form?.elements.namedItem("performed_at")?.value;
  if (at) return at.slice(0, 10);
  const zone = form?.dataset.localTz, now = new Date();
  return new Intl.DateTimeFormat("en-CA", zone ? { timeZone: zone } : {}).format(now);  // YYYY-MM-DD
};
function fill(el, value) {
  if (!el || el.value || !value) return;
  el.value = el.dataset.filled = value;
  el.dispatchEvent(new Event("input", { bubbles: true }));  // kept on the device with the typing
}
// A new finding's corrective action, once its kind is chosen, is the permittee's to do unless someone else is named.
document.addEventListener("change", (evt) => {
  const kind = evt.target;
  if (!kind.matches?.("[data-part^='finding-template'] select[name$='-kind']") || !kind.value) return;
  const part = kind.closest("[data-part]"), who = part.querySelector("select[name$='-owner_id']");
  const owner = document.getElementById("report-form")?.dataset.defaultOwnerId;
  if (!who || who.value || part.querySelector("input[name$='-owner_name']")?.value) return;
  if (owner && [...who.options].some((option) => option.value === owner)) {
    who.value = owner;
    who.dispatchEvent(new Event("input", { bubbles: true }));
  }
});

document.addEventListener("change", (evt) => {
  const radio = evt.target;
  if (radio.type !== "radio" || !radio.checked || !radio.closest("fieldset[data-answer]")) return;
  const fix = radio.closest(".subject")?.querySelector(":scope > details.fix");
  if (!fix) return;
  const form = document.getElementById("report-form");
  if (radio.value === "no") {
    fill(fix.querySelector("input[name$='-first_observed']"), inspectionDay(form));
    fill(fix.querySelector("input[name$='-owner_name']"), form?.dataset.defaultOwner);
    return;
  }
  fix.querySelectorAll("[data-filled]").forEach((el) => {
    if (el.value === el.dataset.filled) el.value = "";
    delete el.dataset.filled;
  });
  if ([...fix.querySelectorAll("input, select, textarea")].some((el) => el.value)) fix.classList.add("fix-kept");
});

// Busy: a button[data-busy] says so ("Starting…", "Submitting…") and takes no second tap while its post goes;
// set once the post has left (a page of its own answers it: the server's, or the device's from the outbox), and
// undone when the browser brings this page back (Back).
document.addEventListener("submit", (evt) => {
  const button = evt.submitter;
  if (!button?.dataset.busy) return;
  setTimeout(() => {
    button.dataset.idle ??= button.textContent;
    Object.assign(button, { disabled: true, textContent: button.dataset.busy });
    button.setAttribute("aria-busy", "true");
  });
});
window.addEventListener("pageshow", () => {
  document.querySelectorAll("button[data-busy][aria-busy]").forEach((button) => {
    Object.assign(button, { disabled: false, textContent: button.dataset.idle });
    button.removeAttribute("aria-busy");
  });
});

// After "Save draft" (the server sends the page back at #saved): "Saved 09:41", on the town's clock.
function saidSaved() {
  const status = document.getElementById("saved");
  if (!status || window.location.hash !== "#saved") return;
  const time = new Intl.DateTimeFormat("en-US", { timeZone: status.dataset.localTz, hour: "2-digit", minute: "2-digit",
    hourCycle: "h23" }).format(new Date());
  status.textContent = `Saved ${time}`;
  status.hidden = false;
  history.replaceState(null, "", window.location.pathname + window.location.search);  // a reload says it no more
}

// On load: a refused form shows its errors first (the summary takes the focus, and so the page goes there).
function onReportPage() {
  showProgress();
  saidSaved();
  document.getElementById("error-summary")?.focus() ?? showRefusal(document);
}

// Any other refused form shows what is wrong first, wherever it is on its page: a boosted answer starts at the top,
// and a form redrawn in place loses the focus. The first field refused takes it (its message is tied to it), or the
// message itself where it is tied to no field.
// On a page as it loads, only a field marked refused (aria-invalid) counts: pages also say things in red that are no
// refusal (the dashboard's permits the schedule cannot read), and those never take the focus.
function showRefusal(root, refused = false) {
  if (!root || document.getElementById("error-summary")) return;
  const invalid = (el) => {
    const field = el.id && document.getElementById(el.id.replace(/-error$/, ""));
    return field && (field.matches("[aria-invalid=true]") || field.querySelector("[aria-invalid=true]"));
  };
  const said = [...root.querySelectorAll(".field-error")]
    .find((el) => el.offsetParent && el.textContent.trim() && (refused || invalid(el)));
  if (!said || (said.id && goTo(said.id.replace(/-error$/, "")))) return;
  said.tabIndex = -1;
  said.scrollIntoView({ block: "center" });
  said.focus({ preventScroll: true });
}
document.addEventListener("htmx:afterSettle", (evt) => {
  const d = evt.detail || {};
  if ((d.xhr?.status || 0) < 400) return;  // an answer that refused nothing (a filter, a page) keeps the focus
  // (An outerHTML swap's target is the element it replaced: the one on the page now has its id.) After htmx's own
  // scroll, which follows this event: a boosted answer is shown from its top.
  const root = d.boosted ? document : (d.target?.id && document.getElementById(d.target.id)) || null;
  setTimeout(() => showRefusal(root, true));
});
if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", onReportPage);
else onReportPage();
