// Copy-link affordance on citable headings: a click copies the section's full URL.
// Without JavaScript the affordance is an ordinary link to that URL.
// Delegated on the document, so it keeps working after Material's instant navigation.
document.addEventListener("click", async (event) => {
  const link = event.target.closest("a.floors-copy-link");
  if (!link) return;
  event.preventDefault();
  const url = link.dataset.floorsCopy;
  let copied = false;
  try {
    await navigator.clipboard.writeText(url);
    copied = true;
  } catch (error) {
    const field = document.createElement("textarea");
    field.value = url;
    field.setAttribute("readonly", "");
    field.style.position = "fixed";
    field.style.opacity = "0";
    document.body.appendChild(field);
    field.select();
    copied = document.execCommand("copy");
    field.remove();
  }
  link.dataset.floorsCopied = copied ? "yes" : "no";
  link.setAttribute("aria-label", copied ? `Copied: ${url}` : `Copy failed; the link is ${url}`);
  setTimeout(() => delete link.dataset.floorsCopied, 2000);
});
