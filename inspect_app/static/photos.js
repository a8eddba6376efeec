// Photo picker: refuse a photo over the size limit before sending it over a weak signal, and say in
// words why an upload did not go (too large, no connection), beside the file input. A module: the picker
// includes it and htmx inserts it again with each swap, but it runs (and listens) once per document.

// An htmx event of a picker's upload, handled with its picker.
function onUpload(type, handle) {
  document.addEventListener(type, (evt) => {
    const picker = evt.detail.elt?.matches?.("[data-photo-upload]") && evt.detail.elt.closest(".photo-picker");
    if (picker) handle(evt, picker);
  });
}

const say = (picker, message) =>
  Object.assign(picker.querySelector("[data-photo-message]"), { textContent: message, hidden: false });

onUpload("htmx:beforeRequest", (evt, picker) => {
  const file = picker.querySelector('input[type="file"][name="photo"]')?.files?.[0];
  const limit = Number(picker.dataset.maxBytes || 0);
  if (file && limit && file.size > limit) {
    evt.preventDefault();
    say(picker, picker.dataset.tooLarge);
  }
});

// htmx does not swap error responses other than 422; these have no picker to show. The words are the picker's.
onUpload("htmx:responseError", (evt, picker) => {
  const status = evt.detail.xhr ? evt.detail.xhr.status : 0;
  if (status !== 422) say(picker, status === 413 ? picker.dataset.tooLarge : picker.dataset.notSaved);
});
onUpload("htmx:sendError", (evt, picker) => say(picker, picker.dataset.noConnection));
