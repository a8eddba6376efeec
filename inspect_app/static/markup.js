// Photo markup (photos/_markup_editor.html): draw arrows, circles and labels on a photo with a finger,
// as relative 0..1 coordinates in the form's hidden `markup` field (JSON). Plain pointer events, no
// library. It checks nothing: the server does, and says what to fix. Each form set up once (app.js: setUpEach).
const HALO = "#fff", RED = "#e61414";
const clamp = (v) => Math.min(1, Math.max(0, v));

function setUp(form) {
  const canvas = form.querySelector("canvas"), ctx = canvas.getContext("2d");
  const input = form.querySelector("[data-markup-value]"), labelText = form.querySelector("input[name=label_text]");
  let shapes = [], start = null, draft = null;
  try { shapes = JSON.parse(input.value || "[]"); } catch (e) { /* not JSON: start again */ }
  if (!Array.isArray(shapes)) shapes = [];

  const tool = () => form.querySelector("input[name=tool]:checked")?.value || "arrow";

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
  form.querySelector("[data-markup-undo]").addEventListener("click", () => { shapes.pop(); save(); });
  form.querySelector("[data-markup-clear]").addEventListener("click", () => { shapes = []; save(); });
  window.addEventListener("resize", redraw);
  redraw();
}

window.setUpEach("form[data-markup-editor]", setUp);
