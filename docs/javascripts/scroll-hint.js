// On a phone a code block scrolls sideways (stylesheets/floors.css): a table of numbers keeps its
// columns. Its edge shadows alone went unseen, so a block whose lines run past its width is marked
// (`data-floors-scrolls` on its <pre>) and floors.css writes "scroll →" in the band above its first
// line. A block is measured again whenever its size changes (a turn of the phone, a machine's tab or a
// fold that opens: hidden, it measured nothing), and a block added later (a machine's output, fetched
// when its tab opens: javascripts/tier-tabs.js) is measured when it arrives.
document$.subscribe(() => {
  const measure = (code) => {
    const pre = code.parentElement;
    if (pre) pre.toggleAttribute("data-floors-scrolls", code.scrollWidth > code.clientWidth + 1);
  };
  const sizes = new ResizeObserver((entries) => {
    for (const entry of entries) measure(entry.target);
  });
  const watch = (root) => {
    for (const code of root.querySelectorAll(".md-typeset pre > code, pre > code")) {
      measure(code);
      sizes.observe(code);
    }
  };
  const article = document.querySelector(".md-content") || document.body;
  watch(article);
  new MutationObserver((changes) => {
    for (const change of changes) {
      for (const node of change.addedNodes) if (node instanceof Element) watch(node);
    }
  }).observe(article, { childList: true, subtree: true });
});
