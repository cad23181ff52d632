// On a phone a code block scrolls sideways (stylesheets/floors.css): a table of numbers keeps its
// columns. Its edge shadows alone went unseen, so a block whose lines run past its width is marked
// (`data-floors-scrolls` on its <pre>, holding the words) and floors.css writes them in the band above
// its first line: "scroll →" in the page's language (#floors-words, javascripts/floors-words.js). A
// machine's tab marks the lines that differ from this build's (`.hll`): when one of them runs past the
// edge, the words say so, since the difference may be in the part that is off-screen.
// A block is measured again whenever its size changes (a turn of the phone, a machine's tab or a fold
// that opens: hidden, it measured nothing), and a block added later (a machine's output, fetched when its
// tab opens: javascripts/tier-tabs.js) is measured when it arrives.
document$.subscribe(() => {
  const say = window.floorsSay; // javascripts/floors-words.js
  const runsPast = (code, line) => {
    const range = document.createRange();
    range.selectNodeContents(line);
    const edge = code.getBoundingClientRect().left + code.clientWidth - parseFloat(getComputedStyle(code).paddingRight);
    return range.getBoundingClientRect().right > edge + 1;
  };
  const measure = (code) => {
    const pre = code.parentElement;
    if (!pre) return;
    if (code.scrollWidth <= code.clientWidth + 1) {
      pre.removeAttribute("data-floors-scrolls");
      return;
    }
    const marked = [...code.querySelectorAll(".hll")].some((line) => runsPast(code, line));
    const words = marked
      ? say("scrolls_marked", "scroll →: a marked line runs past the edge")
      : say("scrolls", "scroll →");
    if (pre.getAttribute("data-floors-scrolls") !== words) pre.setAttribute("data-floors-scrolls", words);
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
