// The Import page: a bar with the percentage of the bytes sent while htmx uploads the
// form (its button disabled meanwhile, by hx-disabled-elt), and the form's own 400
// (what is wrong with the files) swapped in like any answer.
"use strict";

document.addEventListener("htmx:xhr:progress", (event) => {
  const line = document.getElementById("upload-line");
  if (!line || !event.detail.lengthComputable || !event.detail.total) return;
  const percent = Math.floor((event.detail.loaded * 100) / event.detail.total);
  line.hidden = false;
  document.getElementById("upload-progress").value = percent;
  document.getElementById("upload-percent").textContent = `${percent}%`;
  document.getElementById("upload-words").textContent = percent < 100 ? "uploaded" : "uploaded; starting the import";
});

document.addEventListener("htmx:beforeSwap", (event) => {
  if (event.detail.elt.id === "import-form" && event.detail.xhr.status === 400) {
    event.detail.shouldSwap = true;
    event.detail.isError = false;
  }
});
