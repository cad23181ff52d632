// The one control of each section heading (rendered by overrides/partials/floors-cite.html).
// Without JavaScript it is an ordinary link to the section's full address. Here a click (mouse,
// touch, or Enter on the focused link) either copies the link (pages that are not citable) or opens
// a small menu: copy the link, a plain-text citation, or BibTeX of that section. Escape or a click
// elsewhere closes the menu and gives the focus back to the control.
// Delegated on the document, so it keeps working after Material's instant navigation.
(() => {
  // The menu speaks the page's language (a Chinese page's <html lang> is "zh"): its words, and what was copied.
  const CHINESE = document.documentElement.lang === "zh";
  const CHOICES = CHINESE
    ? [["floorsCopy", "复制链接", "链接"], ["floorsCitation", "复制引用", "引用"], ["floorsBibtex", "复制 BibTeX", "BibTeX"]]
    : [["floorsCopy", "Copy link", "link"], ["floorsCitation", "Copy citation", "citation"], ["floorsBibtex", "Copy BibTeX", "BibTeX"]];
  const COPIED = CHINESE ? (what) => `已复制${what}。` : (what) => `Copied the ${what}.`;
  const REFUSED = CHINESE ? "复制失败：浏览器拒绝访问剪贴板。" : "Copy failed: your browser refused the clipboard.";
  let open = null; // { control, menu }

  async function copy(text) {
    try {
      await navigator.clipboard.writeText(text);
      return true;
    } catch (error) {
      // No clipboard permission (an embedded frame, an old browser): the selection fallback.
      const field = document.createElement("textarea");
      field.value = text;
      field.setAttribute("readonly", "");
      field.style.position = "fixed";
      field.style.opacity = "0";
      document.body.appendChild(field);
      field.select();
      const copied = document.execCommand("copy");
      field.remove();
      return copied;
    }
  }

  function say(control, copied, what) {
    control.dataset.floorsCopied = copied ? "yes" : "no";
    let status = document.getElementById("floors-cite-status");
    if (!status) {
      // One polite live region says what was copied (the control's own label stays the heading's).
      status = document.createElement("div");
      status.id = "floors-cite-status";
      status.className = "md-visually-hidden";
      status.setAttribute("role", "status");
      document.body.append(status);
    }
    status.textContent = copied ? COPIED(what) : REFUSED;
    setTimeout(() => delete control.dataset.floorsCopied, 2000);
  }

  function close(focusControl) {
    if (!open) return;
    const { control, menu } = open;
    open = null;
    menu.remove();
    control.setAttribute("aria-expanded", "false");
    if (focusControl) control.focus();
  }

  function openMenu(control) {
    const menu = document.createElement("div");
    menu.className = "floors-cite-menu";
    menu.setAttribute("role", "menu");
    menu.setAttribute("aria-label", control.getAttribute("aria-label"));
    for (const [key, label, what] of CHOICES) {
      const item = document.createElement("button");
      item.type = "button";
      item.setAttribute("role", "menuitem");
      item.textContent = label;
      item.addEventListener("click", async () => {
        const copied = await copy(control.dataset[key]);
        close(true);
        say(control, copied, what);
      });
      menu.append(item);
    }
    menu.addEventListener("keydown", (event) => {
      const items = [...menu.querySelectorAll("button")];
      const at = items.indexOf(document.activeElement);
      if (event.key === "ArrowDown" || event.key === "ArrowUp") {
        event.preventDefault();
        const step = event.key === "ArrowDown" ? 1 : items.length - 1;
        items[(at + step) % items.length].focus();
      }
    });
    // After the heading, not inside it: the heading's accessible name stays its words.
    (control.closest("h2, h3, h4") || control).after(menu);
    control.setAttribute("aria-expanded", "true");
    open = { control, menu };
    menu.querySelector("button").focus();
  }

  document.addEventListener("click", async (event) => {
    const control = event.target.closest("a.floors-copy-link");
    if (!control) {
      if (open && !open.menu.contains(event.target)) close(false);
      return;
    }
    event.preventDefault();
    if (control.dataset.floorsCitation === undefined) {
      say(control, await copy(control.dataset.floorsCopy), "link");
      return;
    }
    const wasOpen = open && open.control === control;
    close(false);
    if (!wasOpen) openMenu(control);
  });

  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && open) close(true);
  });
})();
