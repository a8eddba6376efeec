// Front-end shell glue for htmx 2 (the CSRF header is the page's own: base.html's hx-headers): error pages under
// hx-boost, offline fallback, the device's ids, drafts and repeating parts. A module: run once per document.
import "./formstore.js";

// htmx 2 drops 4xx/5xx bodies. A boosted navigation should show our error page,
// and 422 is how a form comes back with its errors beside the fields.
document.addEventListener("htmx:beforeSwap", (evt) => {
  const d = evt.detail, status = d.xhr ? d.xhr.status : 0;
  if (status >= 400 && d.serverResponse && (d.boosted || status === 422)) Object.assign(d, { shouldSwap: true, isError: false });
});

// A boosted GET that cannot reach anything: let the browser navigate for real,
// so the service worker can answer with a saved page or the offline page.
document.addEventListener("htmx:sendError", (evt) => {
  const d = evt.detail, cfg = d.requestConfig || {};
  if (d.boosted && cfg.verb === "get" && cfg.path) window.location.href = cfg.path;
});

// Each form post carries its own key, so a post sent again from the outbox is applied once; a new
// report takes the id this device makes for it, in its URL from the start (create-or-submit).
function freshForms(root) {
  root.querySelectorAll("input[data-fresh-key]").forEach((input) => { input.value = crypto.randomUUID(); });
  root.querySelectorAll("form[data-new-record]").forEach((form) => {
    const planned = form.dataset.newRecord, made = crypto.randomUUID();
    for (const el of [form, ...document.querySelectorAll(`[form="${form.id}"][formaction]`)]) {
      const name = el === form ? "action" : "formaction";
      el.setAttribute(name, el.getAttribute(name).replace(planned, made));
    }
    form.dataset.newRecord = made;
    const when = document.getElementById("performed_at");  // now, on the town's clock
    if (when && !when.value) {
      when.value = new Intl.DateTimeFormat("sv-SE", { timeZone: form.dataset.localTz, year: "numeric",
        month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit" }).format(new Date()).replace(" ", "T");
    }
  });
  const posted = sessionStorage.getItem("posted-draft");
  sessionStorage.removeItem("posted-draft");
  if (posted) Drafts.del(posted);
  root.querySelectorAll("form[data-draft]").forEach((form) => { if (form.dataset.draft !== posted) restore(form); });
}

// Unsaved typing survives a reload and a closed tab: a form[data-draft] keeps its fields on the device a
// moment after each change, gets them back when it opens (online or held), and forgets them once posted
// (the server has them then, or the outbox). Files and hidden fields are not kept: a photo chosen but not
// saved must be chosen again.
const Drafts = DeviceStore("drafts");
let typing = null;
const fields = (form) => Array.from(form.elements).filter((el) => el.name && !/^(file|hidden|submit|button)$/.test(el.type));
const prop = (el) => (/^(radio|checkbox)$/.test(el.type) ? "checked" : "value");
const keyOf = (el) => (prop(el) === "checked" ? `${el.name}=${el.value}` : el.name);
function keep(form) {
  const kept = Object.fromEntries(fields(form).map((el) => [keyOf(el), el[prop(el)]]));
  const parts = Array.from(document.querySelectorAll("[data-part*=' ']"), (p) => p.dataset.part);
  clearTimeout(typing);
  typing = setTimeout(() => Drafts.put({ id: form.dataset.draft, fields: kept, parts }), 300);
}
async function restore(form) {
  const draft = await Drafts.get(form.dataset.draft);
  if (!draft) return;
  draft.parts.forEach((p) => { if (!document.querySelector(`[data-part="${p}"]`)) addPart(...p.split(" ")); });
  fields(form).forEach((el) => { if (keyOf(el) in draft.fields) el[prop(el)] = draft.fields[keyOf(el)]; });
}
document.addEventListener("input", (evt) => { if (evt.target.form?.dataset.draft) keep(evt.target.form); });
if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", () => freshForms(document));
else freshForms(document);  // loaded async, after the page was parsed (offline/saved.html)
document.addEventListener("htmx:load", (evt) => freshForms(evt.target));

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

// A posted form's draft is forgotten as the next page opens: the post goes first.
document.addEventListener("submit", (evt) => {
  if (evt.target.dataset.draft) { clearTimeout(typing); sessionStorage.setItem("posted-draft", evt.target.dataset.draft); }
}, true);
