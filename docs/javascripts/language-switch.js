// The language selector (overrides/partials/alternate.html) keeps the reader on the same section: every language's page has the same anchors,
// so the switch's link takes the address's #anchor with it. A link from one language's page to another
// language's loads the page whole instead of through Material's instant navigation: each language has its
// own search index, which a page loads once (search-on-demand.js picks it by the page's language).
(() => {
  const config = JSON.parse(document.getElementById("__config")?.textContent || "{}");
  const base = new URL(config.base || ".", location.href);
  const languageOf = (url) => (url.pathname.startsWith(new URL("zh/", base).pathname) ? "zh" : "en");
  document.addEventListener(
    "click",
    (event) => {
      const link = event.target instanceof Element ? event.target.closest("a[href]") : null;
      if (!link || event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey) {
        return;
      }
      const target = new URL(link.href, location.href);
      if (target.origin !== location.origin) return;
      const switching = link.hasAttribute("data-floors-language");
      if (!switching && languageOf(target) === languageOf(new URL(location.href))) return;
      if (switching && !target.hash && location.hash) target.hash = location.hash;
      event.preventDefault();
      event.stopImmediatePropagation();
      location.assign(target.href);
    },
    true,
  );
})();
