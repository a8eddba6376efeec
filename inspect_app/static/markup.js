// Photo markup: draw arrows, circles and labels on a photo with a finger, as relative 0..1 coordinates in the
// editor's hidden `markup` field (JSON). Plain pointer events, no library. It checks nothing: the server does,
// and says what to fix. Each editor set up once (app.js: setUpEach).
// - photos/_markup_editor.html: a stored photo's own page, its form posts the shapes.
// - photos/_markup_dialog.html: on the report form, a photo chosen but not sent yet is marked up in place; the
//   shapes go with the report in its `photos_markup` field, by the SHA-256 of the file (the same name whether
//   the file is posted at once or uploaded first from the outbox), and the server draws them as it stores it.
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

// The report form: under each photo input, the photos chosen, each with its thumbnail and "Mark up", which opens
// the dialog over the page and comes back to the same place. What is drawn is kept by the file's SHA-256 in the
// form's `photos_markup` field (JSON: {sha256: shapes}).
function setUpPhotos(field) {
  const dialog = document.getElementById("photo-markup-dialog"), kept = document.getElementById("photos_markup");
  const fileInput = field.querySelector("input[type=file]"), list = field.querySelector("[data-photo-previews]");
  if (!dialog || !kept || !fileInput || !list) return;
  const editor = dialog.querySelector("[data-markup-editor]"), img = dialog.querySelector("img");
  const drawn = () => { try { return JSON.parse(kept.value || "{}") || {}; } catch (e) { return {}; } };
  const keep = (sha, shapes) => {
    const all = drawn();
    if (shapes.length) all[sha] = shapes; else delete all[sha];
    kept.value = Object.keys(all).length ? JSON.stringify(all) : "";
    kept.dispatchEvent(new Event("input", { bubbles: true }));  // kept on the device with the form's typing
  };
  const label = (shapes) => (shapes?.length ? `Marked up (${shapes.length})` : "Mark up");
  let urls = [], mine = new Set();
  fileInput.addEventListener("change", async () => {
    urls.forEach((url) => URL.revokeObjectURL(url));
    urls = [];
    list.replaceChildren();
    const chosen = new Set();
    for (const file of fileInput.files) {
      const url = URL.createObjectURL(file), item = document.createElement("li"), thumb = new Image();
      urls.push(url);
      Object.assign(thumb, { src: url, alt: file.name, className: "photo-preview-thumb" });
      const name = document.createElement("span"), button = document.createElement("button");
      name.textContent = file.name;
      Object.assign(button, { type: "button", className: "btn btn-secondary", disabled: true, textContent: "Mark up" });
      button.dataset.markup = "";
      item.append(thumb, name, button);
      list.append(item);
      const sha = hex(await crypto.subtle.digest("SHA-256", await file.arrayBuffer()));
      chosen.add(sha);
      button.textContent = label(drawn()[sha]);
      button.disabled = false;
      button.addEventListener("click", () => {
        editor.querySelector("[data-markup-value]").value = JSON.stringify(drawn()[sha] || []);
        dialog.onclose = () => {
          if (dialog.returnValue === "done") {
            const shapes = JSON.parse(editor.querySelector("[data-markup-value]").value || "[]");
            keep(sha, shapes);
            button.textContent = label(shapes);
          }
          button.focus();  // back to the same place
        };
        img.onload = () => editor.markupEditor?.fit(img.naturalWidth, img.naturalHeight);
        img.src = url;
        dialog.returnValue = "";  // Escape leaves it as the last closing set it: only Done keeps the drawing
        dialog.showModal();
        editor.markupEditor?.load();
      });
    }
    // What was drawn on this field's photos no longer chosen goes with them.
    for (const sha of mine) if (!chosen.has(sha)) keep(sha, []);
    mine = chosen;
  });
}

window.setUpEach("[data-photo-field]", setUpPhotos);
