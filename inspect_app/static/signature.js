// Inspection forms on a tablet: the finger-drawn signature pad, and the device's location when an
// inspection is started. Plain pointer events, no library. Each element is set up once (app.js: setUpEach).
(function () {
  "use strict";

  // Pad: <div data-signature-pad> with a <canvas>, a hidden input[data-signature-value] that receives
  // the PNG as a data URL, and a button[data-signature-clear].
  function setUpPad(pad) {
    var canvas = pad.querySelector("canvas"), input = pad.querySelector("[data-signature-value]");
    var clear = pad.querySelector("[data-signature-clear]");
    if (!canvas || !input) return;
    var ctx = canvas.getContext("2d"), drawing = false, last = null;

    function size() {
      // Draw at the screen's real pixel density so the stroke is sharp; keep what was drawn.
      var kept = input.value;
      var ratio = window.devicePixelRatio || 1;
      var box = canvas.getBoundingClientRect();
      canvas.width = Math.max(1, Math.round(box.width * ratio));
      canvas.height = Math.max(1, Math.round(box.height * ratio));
      ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
      Object.assign(ctx, { lineWidth: 2.5, lineCap: "round", lineJoin: "round" });
      ctx.strokeStyle = ctx.fillStyle = "#111";  // the stroke, and the dot of a tap
      if (!kept) return;
      var image = new Image();
      image.onload = function () {
        var drawn = canvas.getBoundingClientRect();
        ctx.drawImage(image, 0, 0, drawn.width, drawn.height);
        pad.classList.add("signed");
      };
      image.src = kept;
    }

    function point(event) {
      var box = canvas.getBoundingClientRect();
      return { x: event.clientX - box.left, y: event.clientY - box.top };
    }

    canvas.addEventListener("pointerdown", function (event) {
      event.preventDefault();
      canvas.setPointerCapture(event.pointerId);
      drawing = true;
      last = point(event);
      ctx.beginPath();
      ctx.arc(last.x, last.y, ctx.lineWidth / 2, 0, Math.PI * 2);
      ctx.fill();
    });
    canvas.addEventListener("pointermove", function (event) {
      if (!drawing) return;
      event.preventDefault();
      var next = point(event);
      ctx.beginPath();
      ctx.moveTo(last.x, last.y);
      ctx.lineTo(next.x, next.y);
      ctx.stroke();
      last = next;
    });
    function finish() {
      if (!drawing) return;
      drawing = false;
      input.value = canvas.toDataURL("image/png");
      pad.classList.add("signed");
    }
    ["pointerup", "pointercancel", "pointerleave"].forEach(function (type) { canvas.addEventListener(type, finish); });

    if (clear) {
      clear.addEventListener("click", function () {
        ctx.clearRect(0, 0, canvas.width, canvas.height);
        input.value = "";
        pad.classList.remove("signed");
      });
    }
    size();
  }

  // Start forms: <form data-geolocate> with input[data-latitude] and input[data-longitude]. On submit,
  // ask the device for its position (a few seconds at most), then send the form with or without it.
  function setUpLocation(form) {
    form.addEventListener("submit", function (event) {
      if (!navigator.geolocation || form.dataset.located) return;
      event.preventDefault();
      function send() {  // once: whichever comes first, the position, a refusal or the timer
        if (form.dataset.located) return;
        form.dataset.located = "1";
        form.submit();
      }
      navigator.geolocation.getCurrentPosition(function (position) {
        form.querySelector("[data-latitude]").value = position.coords.latitude.toFixed(6);
        form.querySelector("[data-longitude]").value = position.coords.longitude.toFixed(6);
        send();
      }, send, { enableHighAccuracy: true, timeout: 5000, maximumAge: 60000 });
      window.setTimeout(send, 6000);
    });
  }

  window.setUpEach("[data-signature-pad]", setUpPad);
  window.setUpEach("form[data-geolocate]", setUpLocation);
})();
