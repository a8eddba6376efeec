// Photo picker: refuse a photo over the size limit before sending it over a weak signal, and say in
// words why an upload did not go (too large, no connection), beside the file input.
(function () {
  "use strict";
  // The picker includes this script and htmx runs it again after each swap: listen only once.
  if (window.photoPickerReady) return;
  window.photoPickerReady = true;

  function uploadPicker(elt) {
    if (!elt || !elt.matches || !elt.matches("[data-photo-upload]")) return null;
    return elt.closest(".photo-picker");
  }

  function say(picker, message) {
    var slot = picker.querySelector("[data-photo-message]");
    if (slot) {
      slot.textContent = message;
      slot.hidden = false;
    }
  }

  document.addEventListener("htmx:beforeRequest", function (evt) {
    var picker = uploadPicker(evt.detail.elt);
    if (!picker) return;
    var input = picker.querySelector('input[type="file"][name="photo"]');
    var file = input && input.files && input.files[0];
    var limit = Number(picker.dataset.maxBytes || 0);
    if (file && limit && file.size > limit) {
      evt.preventDefault();
      say(picker, picker.dataset.tooLarge);
    }
  });

  // htmx does not swap error responses other than 422; these have no picker to show.
  document.addEventListener("htmx:responseError", function (evt) {
    var picker = uploadPicker(evt.detail.elt);
    if (!picker) return;
    var status = evt.detail.xhr ? evt.detail.xhr.status : 0;
    if (status === 413) {
      say(picker, picker.dataset.tooLarge);
    } else if (status !== 422) {
      say(picker, "The photo was not saved (the server answered " + status + "). Try again.");
    }
  });

  document.addEventListener("htmx:sendError", function (evt) {
    var picker = uploadPicker(evt.detail.elt);
    if (picker) {
      say(picker, "No connection: the photo was not sent. Try again when there is signal.");
    }
  });
})();
