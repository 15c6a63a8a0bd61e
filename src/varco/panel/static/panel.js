// Drag and drop onto the upload drop zone fills the file input (the form also works without this).
document.addEventListener("DOMContentLoaded", function () {
  var zone = document.querySelector(".dropzone");
  if (!zone) return;
  var input = zone.querySelector("input[type=file]");
  ["dragenter", "dragover"].forEach(function (name) {
    zone.addEventListener(name, function (e) { e.preventDefault(); zone.classList.add("over"); });
  });
  ["dragleave", "drop"].forEach(function (name) {
    zone.addEventListener(name, function (e) { e.preventDefault(); zone.classList.remove("over"); });
  });
  zone.addEventListener("drop", function (e) { if (e.dataTransfer.files.length) input.files = e.dataTransfer.files; });
});
