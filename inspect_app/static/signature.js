// Inspection forms on a tablet: the finger-drawn signature pad, and the device's location when an
// inspection is started. Plain pointer events, no library. Each element is set up once (app.js: setUpEach).

// Pad: <div data-signature-pad> with a <canvas>, a hidden input[data-signature-value] that receives
// the PNG as a data URL, and a button[data-signature-clear].
function setUpPad(pad) {
  const canvas = pad.querySelector("canvas"), input = pad.querySelector("[data-signature-value]");
  const ctx = canvas.getContext("2d");
  let last = null;  // where the finger is, while it draws

  // Draw at the screen's real pixel density so the stroke is sharp; keep what was drawn.
  const ratio = window.devicePixelRatio || 1, box = canvas.getBoundingClientRect();
  canvas.width = Math.max(1, Math.round(box.width * ratio));
  canvas.height = Math.max(1, Math.round(box.height * ratio));
  ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
  Object.assign(ctx, { lineWidth: 2.5, lineCap: "round", lineJoin: "round", strokeStyle: "#111", fillStyle: "#111" });
  if (input.value) {
    const image = new Image();
    image.onload = () => { ctx.drawImage(image, 0, 0, box.width, box.height); pad.classList.add("signed"); };
    image.src = input.value;
  }

  function point(event) {
    const at = canvas.getBoundingClientRect();
    return { x: event.clientX - at.left, y: event.clientY - at.top };
  }
  canvas.addEventListener("pointerdown", (event) => {
    event.preventDefault();
    canvas.setPointerCapture(event.pointerId);
    last = point(event);
    ctx.beginPath();  // the dot of a tap
    ctx.arc(last.x, last.y, ctx.lineWidth / 2, 0, Math.PI * 2);
    ctx.fill();
  });
  canvas.addEventListener("pointermove", (event) => {
    if (!last) return;
    event.preventDefault();
    const next = point(event);
    ctx.beginPath();
    ctx.moveTo(last.x, last.y);
    ctx.lineTo(next.x, next.y);
    ctx.stroke();
    last = next;
  });
  for (const type of ["pointerup", "pointercancel", "pointerleave"]) {
    canvas.addEventListener(type, () => {
      if (!last) return;
      last = null;
      input.value = canvas.toDataURL("image/png");
      pad.classList.add("signed");
    });
  }
  pad.querySelector("[data-signature-clear]").addEventListener("click", () => {
    ctx.clearRect(0, 0, canvas.width, canvas.height);
    input.value = "";
    pad.classList.remove("signed");
  });
}

// Forms that take the device's position: <form data-geolocate> with input[data-latitude] and input[data-longitude]
// (the form's own or named form="..."), where the position is asked of the device (a few seconds at most):
// - "Start" forms (data-geolocate empty): on submit, then the form is sent with or without it;
// - a new report's form (data-geolocate="open", the report started on the device): as it opens, with no server
//   too; the report records it as the device's position, as one started online does.
function locate(form, then) {
  const input = (name) => form.querySelector(`[data-${name}]`) || document.querySelector(`[form="${form.id}"][data-${name}]`);
  navigator.geolocation.getCurrentPosition((position) => {
    input("latitude").value = position.coords.latitude.toFixed(6);
    input("longitude").value = position.coords.longitude.toFixed(6);
    then();
  }, then, { enableHighAccuracy: true, timeout: 5000, maximumAge: 60000 });
}
function setUpLocation(form) {
  if (!navigator.geolocation) return;
  if (form.dataset.geolocate === "open") return locate(form, () => null);
  form.addEventListener("submit", (event) => {
    if (form.dataset.located) return;
    event.preventDefault();
    function send() {  // once: whichever comes first, the position, a refusal or the timer
      if (form.dataset.located) return;
      form.dataset.located = "1";
      form.submit();
    }
    locate(form, send);
    window.setTimeout(send, 6000);
  });
}

window.setUpEach("[data-signature-pad]", setUpPad);
window.setUpEach("form[data-geolocate]", setUpLocation);
