// Photo markup: draw arrows, circles and labels on a photo with a finger, as relative 0..1 coordinates in the
// editor's hidden `markup` field (JSON). Plain pointer events, no library. It checks nothing: the server does,
// and says what to fix. Each editor set up once (app.js: setUpEach).
// - photos/_markup_editor.html: a stored photo's own page, its form posts the shapes.
// - photos/_markup_dialog.html: on the report form, a photo chosen but not sent yet is marked up in place; the
//   shapes go with the report in its `photos_markup` field, by the SHA-256 of the file (the same name whether
//   the file is posted at once or uploaded first from the outbox), and the server draws them as it stores it.
// EXIF is read with exifr's lite build (vendored: vendor/exifr.LICENSE), on the device, so a photo taken with
// no connection shows its time and place too.
import { parse as readExif } from "./vendor/exifr-lite.esm.js";

const HALO = "#fff", RED = "#e61414";
const clamp = (v) => Math.min(1, Math.max(0, v));
const hex = (buffer) => [...new Uint8Array(buffer)].map((b) => b.toString(16).padStart(2, "0")).join("");

// The stage keeps the photo's proportions, never taller than most of the screen (set here: the page's
// Content-Security-Policy refuses style attributes).
// In the dialog, its tools and buttons share the screen with it.
function fit(stage, width, height) {
  if (!width || !height) return;
  const tallest = stage.closest("dialog") ? 55 : 70;
  stage.style.aspectRatio = `${width} / ${height}`;
  stage.style.width = `min(100%, 48rem, calc(${tallest}vh * ${width} / ${height}))`;
}

function setUp(editor) {
  const canvas = editor.querySelector("canvas"), ctx = canvas.getContext("2d");
  const input = editor.querySelector("[data-markup-value]"), labelText = editor.querySelector("input[name=label_text]");
  const stage = editor.querySelector(".markup-stage");
  let shapes = [], start = null, draft = null;
  const load = () => {
    try { shapes = JSON.parse(input.value || "[]"); } catch (e) { shapes = []; /* not JSON: start again */ }
    if (!Array.isArray(shapes)) shapes = [];
    redraw();
  };
  editor.markupEditor = { load, fit: (width, height) => { fit(stage, width, height); redraw(); } };
  fit(stage, Number(stage.dataset.width), Number(stage.dataset.height));

  const tool = () => editor.querySelector("input[name=tool]:checked")?.value || "arrow";

  function where(event) {
    const box = canvas.getBoundingClientRect();
    return [clamp((event.clientX - box.left) / box.width), clamp((event.clientY - box.top) / box.height)];
  }

  function save() {
    input.value = JSON.stringify(shapes);
    redraw();
  }

  // One shape in one colour: drawn in white, twice as wide, then in red over it, it shows on any photo.
  function paint(shape, w, h, line, colour) {
    const side = Math.min(w, h), halo = colour === HALO, px = (p) => [p[0] * w, p[1] * h];
    Object.assign(ctx, { lineWidth: halo ? line * 2 : line, strokeStyle: colour, fillStyle: colour });
    ctx.beginPath();
    if (shape.kind === "label") {
      Object.assign(ctx, { font: `bold ${Math.round(side / 20)}px sans-serif`, textBaseline: "middle" });
      ctx[halo ? "strokeText" : "fillText"](shape.text, ...px(shape.at));
    } else if (shape.kind === "circle") {
      ctx.arc(...px(shape.at), shape.r * side, 0, 2 * Math.PI);
      ctx.stroke();
    } else {
      const a = px(shape.from), b = px(shape.to), angle = Math.atan2(b[1] - a[1], b[0] - a[0]);
      ctx.moveTo(...a);
      ctx.lineTo(...b);
      ctx.stroke();
      ctx.beginPath();
      ctx.moveTo(...b);
      for (const turn of [0.44, -0.44]) {
        ctx.lineTo(b[0] - line * 6 * Math.cos(angle + turn), b[1] - line * 6 * Math.sin(angle + turn));
      }
      ctx.closePath();
      ctx.fill();
      ctx.stroke();
    }
  }

  function redraw() {
    const ratio = window.devicePixelRatio || 1, box = canvas.getBoundingClientRect();
    canvas.width = Math.max(1, Math.round(box.width * ratio));
    canvas.height = Math.max(1, Math.round(box.height * ratio));
    Object.assign(ctx, { lineCap: "round", lineJoin: "round" });
    const line = Math.max(2, Math.min(canvas.width, canvas.height) / 100);
    for (const shape of draft ? [...shapes, draft] : shapes) {
      for (const colour of [HALO, RED]) paint(shape, canvas.width, canvas.height, line, colour);
    }
  }

  function shapeTo(end) {
    const box = canvas.getBoundingClientRect(), side = Math.min(box.width, box.height);
    const length = Math.hypot((end[0] - start[0]) * box.width, (end[1] - start[1]) * box.height);
    if (length < 4) return null;  // a tap, not a drag
    if (tool() === "circle") return { kind: "circle", at: start, r: Math.min(1, length / side) };
    return { kind: "arrow", from: start, to: end };
  }

  canvas.addEventListener("pointerdown", (event) => {
    event.preventDefault();
    canvas.setPointerCapture(event.pointerId);
    start = where(event);
  });
  canvas.addEventListener("pointermove", (event) => {
    if (!start || tool() === "label") return;
    draft = shapeTo(where(event));
    redraw();
  });
  canvas.addEventListener("pointerup", (event) => {
    if (!start) return;
    const text = labelText.value.trim();
    const made = tool() === "label" ? (text ? { kind: "label", at: start, text } : null) : shapeTo(where(event));
    if (tool() === "label" && !text) labelText.focus();
    start = draft = null;
    if (made) shapes.push(made);
    save();
  });
  canvas.addEventListener("pointercancel", () => { start = draft = null; redraw(); });
  editor.querySelector("[data-markup-undo]").addEventListener("click", () => { shapes.pop(); save(); });
  editor.querySelector("[data-markup-clear]").addEventListener("click", () => { shapes = []; save(); });
  window.addEventListener("resize", redraw);
  load();
}

window.setUpEach("[data-markup-editor]", setUp);

// The report form: under each of its photo inputs (inspections/_parts.html: photo_input, one for the site, each
// checklist item, each point of discharge and each finding, those added on the device too), each photo chosen
// with its thumbnail, the time and place its EXIF gives, a caption and "Mark up", which opens the dialog over the
// page and comes back to the same place. Captions and shapes are kept by the file's SHA-256 in the form's
// `photos_caption` and `photos_markup` fields (JSON: {sha256: caption}, {sha256: shapes}); the server checks them.
const NO_EXIF = "No time or place in the photo";

// One of the form's JSON fields kept by SHA-256: read it, set (or, given nothing, drop) one photo's value.
function keptBySha(id) {
  const field = () => document.getElementById(id);
  const read = () => { try { return JSON.parse(field()?.value || "{}") || {}; } catch (e) { return {}; } };
  const set = (sha, value) => {
    const el = field();
    if (!el) return;
    const all = read();
    if (value?.length) all[sha] = value; else delete all[sha];
    el.value = Object.keys(all).length ? JSON.stringify(all) : "";
    el.dispatchEvent(new Event("input", { bubbles: true }));
  };
  return { read, set };
}
const markups = keptBySha("photos_markup"), captions = keptBySha("photos_caption");

// When and where the photo was taken, as its EXIF says (DateTimeOriginal: the camera's clock, on site; GPS).
async function takenWhereWhen(file) {
  let exif = null;
  try {
    exif = await readExif(file, { ifd0: false, exif: true, gps: true, reviveValues: false });
  } catch (e) { /* not a photo exifr can read: nothing to say */ }
  const when = exif?.DateTimeOriginal || exif?.CreateDate, said = [];
  if (typeof when === "string" && /^\d{4}:\d\d:\d\d \d\d:\d\d/.test(when)) {
    said.push(`Taken ${when.slice(0, 10).replaceAll(":", "-")} ${when.slice(11, 16)}`);
  }
  if (Number.isFinite(exif?.latitude) && Number.isFinite(exif?.longitude)) {
    said.push(`at ${exif.latitude.toFixed(5)}, ${exif.longitude.toFixed(5)}`);
  }
  return said.length ? said.join(" ") : NO_EXIF;
}

const chosenBefore = new WeakMap();  // a photo input → the object URLs and SHA-256s of the photos it shows
function showChosen(field, fileInput) {
  const dialog = document.getElementById("photo-markup-dialog"), list = field.querySelector("[data-photo-previews]");
  if (!list) return;
  const before = chosenBefore.get(fileInput) || { urls: [], shas: new Set() };
  before.urls.forEach((url) => URL.revokeObjectURL(url));
  list.replaceChildren();
  const now = { urls: [], shas: new Set() };
  chosenBefore.set(fileInput, now);
  const captionMax = Number(document.getElementById("photos_caption")?.dataset.captionMax || 0);
  const label = (shapes) => (shapes?.length ? `Marked up (${shapes.length})` : "Mark up");
  const done = [...fileInput.files].map(async (file, index) => {
    const url = URL.createObjectURL(file), item = document.createElement("li"), thumb = new Image();
    now.urls.push(url);
    Object.assign(thumb, { src: url, alt: file.name, className: "photo-preview-thumb" });
    const name = document.createElement("span"), exif = document.createElement("span");
    name.textContent = file.name;
    Object.assign(exif, { className: "photo-exif muted", textContent: "Reading the photo…" });
    exif.dataset.photoExif = "";
    const captionField = document.createElement("div"), captionLabel = document.createElement("label");
    const caption = document.createElement("input");
    Object.assign(caption, { id: `${fileInput.id}-caption-${index}`, type: "text", autocomplete: "off", disabled: true });
    if (captionMax) caption.maxLength = captionMax;
    caption.dataset.photoCaption = "";
    Object.assign(captionLabel, { htmlFor: caption.id, textContent: "Caption" });
    captionField.className = "field";
    captionField.append(captionLabel, caption);
    const button = document.createElement("button");
    Object.assign(button, { type: "button", className: "btn btn-secondary", disabled: true, textContent: "Mark up" });
    button.dataset.markup = "";
    item.append(thumb, name, exif, captionField, button);
    list.append(item);
    takenWhereWhen(file).then((words) => { exif.textContent = words; });
    const sha = hex(await crypto.subtle.digest("SHA-256", await file.arrayBuffer()));
    now.shas.add(sha);
    caption.value = captions.read()[sha] || "";
    caption.disabled = false;
    caption.addEventListener("input", () => captions.set(sha, caption.value.trim()));
    button.textContent = label(markups.read()[sha]);
    button.disabled = !dialog;
    button.addEventListener("click", () => markUp(dialog, url, sha, button, label));
  });
  // What was typed or drawn for this input's photos no longer chosen goes with them.
  Promise.all(done).then(() => {
    for (const sha of before.shas) {
      if (!now.shas.has(sha)) { markups.set(sha, null); captions.set(sha, null); }
    }
  });
}

function markUp(dialog, url, sha, button, label) {
  const editor = dialog.querySelector("[data-markup-editor]"), img = dialog.querySelector("img");
  editor.querySelector("[data-markup-value]").value = JSON.stringify(markups.read()[sha] || []);
  dialog.onclose = () => {
    if (dialog.returnValue === "done") {
      const shapes = JSON.parse(editor.querySelector("[data-markup-value]").value || "[]");
      markups.set(sha, shapes);
      button.textContent = label(shapes);
    }
    button.focus();  // back to the same place
  };
  img.onload = () => editor.markupEditor?.fit(img.naturalWidth, img.naturalHeight);
  img.src = url;
  dialog.returnValue = "";  // Escape leaves it as the last closing set it: only Done keeps the drawing
  dialog.showModal();
  editor.markupEditor?.load();
}

// Listened for on the document: inputs of parts added on the device (a finding, a control, a point) count too.
document.addEventListener("change", (evt) => {
  const input = evt.target, field = input.closest?.("[data-photo-field]");
  if (input.type === "file" && field) showChosen(field, input);
});
