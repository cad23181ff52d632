// On a phone a code block scrolls sideways (stylesheets/floors.css): a table of numbers keeps its
// columns. Its edge shadows alone went unseen, so a block whose lines run past its width is marked
// (`data-floors-scrolls` on its <pre>) and floors.css writes "scroll →" in the band above its first
// line. A block is measured again whenever its size changes: on a turn of the phone, and when a
// machine's tab or a fold that held it opens (hidden, it measured nothing).
document$.subscribe(() => {
  const measure = (code) => {
    const pre = code.parentElement;
    if (!pre) return;
    pre.toggleAttribute("data-floors-scrolls", code.scrollWidth > code.clientWidth + 1);
  };
  const observer = new ResizeObserver((entries) => {
    for (const entry of entries) measure(entry.target);
  });
  for (const code of document.querySelectorAll(".md-typeset pre > code")) {
    measure(code);
    observer.observe(code);
  }
});
