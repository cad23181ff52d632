// On paper a link is only useful with its address: give every link in the content its public
// address in data-print-href, which print.css prints after the link. The address is the one the
// page has where it is published (its canonical URL), not where it was served from for printing.
// Before printing, collapsed notes open so paper shows them.

// The local and the public root of the site: the page's own path, taken off the end of both.
function floorsSiteRoots() {
  const here = new URL(document.location.href);
  const canonical = document.querySelector('link[rel="canonical"]');
  const published = canonical ? new URL(canonical.href) : here;
  const local = here.pathname.split("/");
  const remote = published.pathname.split("/");
  while (local.length > 1 && remote.length > 1 && local.at(-1) === remote.at(-1)) {
    local.pop();
    remote.pop();
  }
  return [here.origin + local.join("/") + "/", published.origin + remote.join("/") + "/"];
}

function floorsMarkPrintLinks() {
  const [localRoot, publicRoot] = floorsSiteRoots();
  for (const link of document.querySelectorAll(".md-content a[href]")) {
    if (link.getAttribute("href").startsWith("#")) continue;
    if (link.matches(".headerlink, .floors-copy-link, .footnote-backref")) continue;
    const resolved = link.href; // absolute, whatever form the attribute has
    const address = resolved.startsWith(localRoot) ? publicRoot + resolved.slice(localRoot.length) : resolved;
    // A link that already reads as its address gets an empty mark: print.css then adds nothing.
    link.dataset.printHref = link.textContent.trim() === address ? "" : address;
  }
}

function floorsOpenNotesForPrint() {
  for (const note of document.querySelectorAll(".md-content details:not(.floors-proof__source)")) {
    note.open = true;
  }
}

if (typeof document$ !== "undefined") {
  document$.subscribe(floorsMarkPrintLinks); // Material's instant navigation swaps pages in
} else {
  document.addEventListener("DOMContentLoaded", floorsMarkPrintLinks);
}
window.addEventListener("beforeprint", floorsOpenNotesForPrint);
