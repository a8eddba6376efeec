// Photo markup (photos/_markup_editor.html): draw arrows, circles and labels on a photo with a finger,
// as relative 0..1 coordinates in the form's hidden `markup` field (JSON). Plain pointer events, no
// library. It checks nothing: the server does, and says what to fix. Each form set up once (app.js: setUpEach).
(function () {
  "use strict";
  var HALO = "#fff", RED = "#e61414";

  function setUp(form) {
    var canvas = form.querySelector("canvas");
    var input = form.querySelector("[data-markup-value]");
    var labelText = form.querySelector("input[name=label_text]");
    var ctx = canvas.getContext("2d");
    var shapes = [];
    try { shapes = JSON.parse(input.value || "[]"); } catch (e) { shapes = []; }
    if (!Array.isArray(shapes)) shapes = [];
    var start = null, draft = null;

    function tool() {
      var checked = form.querySelector("input[name=tool]:checked");
      return checked ? checked.value : "arrow";
    }

    function where(event) {
      var box = canvas.getBoundingClientRect();
      function clamp(v) { return Math.min(1, Math.max(0, v)); }
      return [clamp((event.clientX - box.left) / box.width), clamp((event.clientY - box.top) / box.height)];
    }

    function save() {
      input.value = JSON.stringify(shapes);
      redraw();
    }

    // One shape in one colour: drawn in white, twice as wide, then in red over it, it shows on any photo.
    function paint(shape, w, h, line, colour) {
      var side = Math.min(w, h), halo = colour === HALO;
      function px(p) { return [p[0] * w, p[1] * h]; }
      Object.assign(ctx, { lineWidth: halo ? line * 2 : line, strokeStyle: colour, fillStyle: colour });
      ctx.beginPath();
      if (shape.kind === "label") {
        Object.assign(ctx, { font: "bold " + Math.round(side / 20) + "px sans-serif", textBaseline: "middle" });
        ctx[halo ? "strokeText" : "fillText"](shape.text, px(shape.at)[0], px(shape.at)[1]);
      } else if (shape.kind === "circle") {
        ctx.arc(px(shape.at)[0], px(shape.at)[1], shape.r * side, 0, 2 * Math.PI);
        ctx.stroke();
      } else {
        var a = px(shape.from), b = px(shape.to), angle = Math.atan2(b[1] - a[1], b[0] - a[0]);
        ctx.moveTo(a[0], a[1]);
        ctx.lineTo(b[0], b[1]);
        ctx.stroke();
        ctx.beginPath();
        ctx.moveTo(b[0], b[1]);
        [0.44, -0.44].forEach(function (turn) {
          ctx.lineTo(b[0] - line * 6 * Math.cos(angle + turn), b[1] - line * 6 * Math.sin(angle + turn));
        });
        ctx.closePath();
        ctx.fill();
        ctx.stroke();
      }
    }

    function redraw() {
      var ratio = window.devicePixelRatio || 1, box = canvas.getBoundingClientRect();
      canvas.width = Math.max(1, Math.round(box.width * ratio));
      canvas.height = Math.max(1, Math.round(box.height * ratio));
      ctx.lineCap = "round";
      ctx.lineJoin = "round";
      var line = Math.max(2, Math.min(canvas.width, canvas.height) / 100);
      shapes.concat(draft ? [draft] : []).forEach(function (shape) {
        [HALO, RED].forEach(function (colour) { paint(shape, canvas.width, canvas.height, line, colour); });
      });
    }

    function shapeTo(end) {
      var box = canvas.getBoundingClientRect(), side = Math.min(box.width, box.height);
      var dx = (end[0] - start[0]) * box.width, dy = (end[1] - start[1]) * box.height;
      if (Math.sqrt(dx * dx + dy * dy) < 4) return null;  // a tap, not a drag
      if (tool() === "circle") return { kind: "circle", at: start, r: Math.min(1, Math.sqrt(dx * dx + dy * dy) / side) };
      return { kind: "arrow", from: start, to: end };
    }

    canvas.addEventListener("pointerdown", function (event) {
      event.preventDefault();
      canvas.setPointerCapture(event.pointerId);
      start = where(event);
    });
    canvas.addEventListener("pointermove", function (event) {
      if (!start || tool() === "label") return;
      draft = shapeTo(where(event));
      redraw();
    });
    canvas.addEventListener("pointerup", function (event) {
      if (!start) return;
      var text = labelText ? labelText.value.trim() : "";
      var made = tool() === "label" ? (text ? { kind: "label", at: start, text: text } : null) : shapeTo(where(event));
      if (tool() === "label" && !text && labelText) labelText.focus();
      start = draft = null;
      if (made) shapes.push(made);
      save();
    });
    canvas.addEventListener("pointercancel", function () { start = draft = null; redraw(); });
    form.querySelector("[data-markup-undo]").addEventListener("click", function () { shapes.pop(); save(); });
    form.querySelector("[data-markup-clear]").addEventListener("click", function () { shapes = []; save(); });
    window.addEventListener("resize", redraw);
    redraw();
  }

  window.setUpEach("form[data-markup-editor]", setUp);
})();
