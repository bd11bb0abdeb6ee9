// memsync ui: search as you type. Without this script the search form
// still works (it submits); with it, each change of the query or a filter
// fetches the results part of the page, as the server renders and escapes
// it, and the address follows, so every view keeps a stable URL.
"use strict";
(function () {
  const form = document.getElementById("search");
  const results = document.getElementById("results");
  if (!form || !results) return;
  let timer = 0, latest = 0;
  async function update() {
    const params = new URLSearchParams(new FormData(form));
    for (const [k, v] of [...params]) if (v === "") params.delete(k);
    const query = params.toString();
    const n = ++latest;
    const resp = await fetch("/?" + (query ? query + "&" : "") + "fragment=1", { credentials: "same-origin" });
    if (n !== latest || !resp.ok) return; // a newer search is under way, or this one failed
    results.innerHTML = await resp.text();
    history.replaceState(null, "", query ? "/?" + query : "/");
  }
  function soon() { clearTimeout(timer); timer = setTimeout(update, 120); }
  form.addEventListener("input", soon);
  form.addEventListener("change", soon);
  form.addEventListener("submit", function (ev) { ev.preventDefault(); clearTimeout(timer); update(); });
})();
