// Save as you go (inspections/report.html): a draft's form reaches the server's draft a few seconds after the last
// change, with no page load, and the pill by the title says "Saved 09:41". Every change is kept on the device at once
// meanwhile (app.js, the drafts store), so what cannot reach the server now is not lost: the pill says so.
// What goes with "Save draft" or "Sign and submit" only, never in the background:
// - photos (files, uploads named *_sha256, their markups and captions): each is stored once, as it is sent;
// - new findings and punch-list items (finding-new-*, punch-new-*, action-new-*): made anew each time they are posted;
// - the post's idempotency key: it is the key of the Save or Submit that comes later, and a key is answered once.
// A new report made on the device (form[data-new-record]) is not saved in the background: its first post makes it.
// The form's posted_by goes with it, so a page left open by someone whose sign-in has gone is refused (401), never
// kept under the name of whoever is signed in now.
const WAIT_MS = 2500;  // after the last change
const LEFT = /(^(finding|punch|action)-new-)|(_sha256$)|(^photos_(markup|caption)$)|(^idempotency_key$)/;

// What a background save would send, as text: one that sends what the server has already is not sent (each save is
// an entry in the record's audit log). The draft's revision is not what was typed (each save moves it on).
const signature = (data) => new URLSearchParams([...data.entries()].filter(([name]) => name !== "revision")
  .map(([name, value]) => [name, String(value)])).toString();

function setUp(form) {
  const status = document.getElementById("saved");
  let timer = null, sending = null, again = false;
  let kept = null;  // what the last background save sent and the server kept
  const clock = () => new Intl.DateTimeFormat("en-US", { timeZone: status?.dataset.localTz, hour: "2-digit",
    minute: "2-digit", hourCycle: "h23" }).format(new Date());
  // "Not saved" is said as a warning, not with the check mark of "Saved".
  const say = (words) => {
    if (!status) return;
    Object.assign(status, { textContent: words, hidden: false });
    const refused = words.startsWith("Not saved");
    status.classList.toggle("pill-met", !refused);
    status.classList.toggle("pill-overdue", refused);
  };
  function payload() {
    const data = new FormData(form);
    for (const [name, value] of [...data.entries()]) if (value instanceof File || LEFT.test(name)) data.delete(name);
    return data;
  }
  async function send() {
    timer = null;
    if (sending) { again = true; return sending; }
    if (!navigator.onLine) { say(`On this device ${clock()}`); return null; }
    const body = payload(), sent = signature(body);
    if (sent === kept) return null;  // nothing changed since the server kept it
    sending = fetch(form.getAttribute("action"), { method: "POST", body, credentials: "same-origin",
      redirect: "manual", headers: { "X-Autosave": "1" } })
      .then((answer) => {
        kept = answer.status === 204 ? sent : null;
        const revision = answer.headers.get("Draft-Revision"), field = form.querySelector("[data-revision]");
        if (revision && field) field.value = revision;  // this page now has the draft as the server keeps it
        if (answer.status === 204) say(`Saved ${clock()}`);
        else if (answer.status === 409) say("Not saved: this draft was saved from another tab or device since. Reload it");
        else if (answer.status === 401) say("Not saved: sign in again (kept on this device)");
        else if (answer.status === 422) say(`On this device ${clock()}: check the fields before saving`);
        else say(`On this device ${clock()}`);
      }, () => say(`On this device ${clock()}`))
      .finally(() => { sending = null; if (again) { again = false; later(); } });
    return sending;
  }
  function later() { clearTimeout(timer); timer = setTimeout(send, WAIT_MS); }
  form.addEventListener("input", later);
  form.addEventListener("change", later);
  // Controls outside the <form> element (form="report-form") send their events to the document.
  document.addEventListener("change", (evt) => { if (evt.target.form === form && !form.contains(evt.target)) later(); });
  document.addEventListener("input", (evt) => { if (evt.target.form === form && !form.contains(evt.target)) later(); });
  // Leaving the page or the tablet going to sleep: what is waiting goes now.
  document.addEventListener("visibilitychange", () => { if (document.visibilityState === "hidden" && timer) send(); });
  // Save draft or Sign and submit: nothing more in the background, and the post waits for one still on its way (two
  // posts of the same draft at once would race for it).
  form.addEventListener("submit", (evt) => {
    clearTimeout(timer);
    timer = null;
    if (!sending) return;
    evt.preventDefault();
    const submitter = evt.submitter;
    sending.then(() => {
      if (submitter) submitter.disabled = false;  // made busy by this very tap (app.js): it posts now
      form.requestSubmit(submitter);
    });
  });
}

document.querySelectorAll("form[data-autosave]:not([data-new-record])").forEach(setUp);
