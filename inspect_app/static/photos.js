// Photo picker: refuse a photo over the size limit before sending it over a weak signal, and say in
// words why an upload did not go (too large, no connection), beside the file input.
(function () {
  "use strict";
  // The picker includes this script and htmx runs it again after each swap: listen only once.
  if (window.photoPickerReady) return;
  window.photoPickerReady = true;

  // An htmx event of a picker's upload, handled with its picker.
  function onUpload(type, handle) {
    document.addEventListener(type, function (evt) {
      var elt = evt.detail.elt;
      var picker = elt && elt.matches && elt.matches("[data-photo-upload]") && elt.closest(".photo-picker");
      if (picker) handle(evt, picker);
    });
  }

  function say(picker, message) {
    var slot = picker.querySelector("[data-photo-message]");
    if (slot) Object.assign(slot, { textContent: message, hidden: false });
  }

  onUpload("htmx:beforeRequest", function (evt, picker) {
    var input = picker.querySelector('input[type="file"][name="photo"]');
    var file = input && input.files && input.files[0];
    var limit = Number(picker.dataset.maxBytes || 0);
    if (file && limit && file.size > limit) {
      evt.preventDefault();
      say(picker, picker.dataset.tooLarge);
    }
  });

  // htmx does not swap error responses other than 422; these have no picker to show. The words are the picker's.
  onUpload("htmx:responseError", function (evt, picker) {
    var status = evt.detail.xhr ? evt.detail.xhr.status : 0;
    if (status !== 422) say(picker, status === 413 ? picker.dataset.tooLarge : picker.dataset.notSaved);
  });
  onUpload("htmx:sendError", function (evt, picker) { say(picker, picker.dataset.noConnection); });
})();
