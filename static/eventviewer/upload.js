// The Import page: a bar for the bytes sent while htmx uploads the form, and the
// form's own 400 (what is wrong with the files) swapped in like any answer.
"use strict";

document.addEventListener("htmx:xhr:progress", (event) => {
  const bar = document.getElementById("upload-progress");
  if (!bar || !event.detail.lengthComputable) return;
  bar.hidden = false;
  bar.max = event.detail.total;
  bar.value = event.detail.loaded;
});

document.addEventListener("htmx:beforeSwap", (event) => {
  if (event.detail.elt.id === "import-form" && event.detail.xhr.status === 400) {
    event.detail.shouldSwap = true;
    event.detail.isError = false;
  }
});
