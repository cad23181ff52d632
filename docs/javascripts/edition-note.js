// The note the root 404 of the published site leaves when it sends a reader from an edition that
// was never published (…/2025.01/floors/…) to the same address in the latest edition: shown once,
// then forgotten. The 404 page stores it under this key (pytorch_floors.root404.NOTE_KEY).
// It floats at the foot of the window, because the page opens scrolled to the cited section.
// Its words are the page's (overrides/main.html writes them, in the page's language, into #floors-words).
(() => {
  const say = window.floorsSay; // javascripts/floors-words.js
  const key = "floors-edition-note";
  const stored = sessionStorage.getItem(key);
  if (stored === null) return;
  sessionStorage.removeItem(key);
  const { asked, shown } = JSON.parse(stored);
  const note = document.createElement("div");
  note.className = "admonition note floors-edition-note";
  note.setAttribute("role", "status");
  Object.assign(note.style, {
    position: "fixed",
    bottom: "1rem",
    left: "50%",
    transform: "translateX(-50%)",
    width: "min(36rem, calc(100% - 2rem))",
    margin: "0",
    zIndex: "5",
    background: "var(--md-default-bg-color)",
  });
  const title = document.createElement("p");
  title.className = "admonition-title";
  title.textContent = say("no_edition", "There is no edition {asked}", { asked });
  const body = document.createElement("p");
  body.textContent = say(
    "followed",
    "You followed an address under edition {asked}, which was never published; this is the same address in the latest edition, {shown}. ",
    { asked, shown },
  );
  const dismiss = document.createElement("button");
  dismiss.type = "button";
  dismiss.className = "md-button";
  dismiss.textContent = say("dismiss", "Dismiss", {});
  dismiss.addEventListener("click", () => note.remove());
  body.append(dismiss);
  note.append(title, body);
  document.querySelector("article.md-content__inner").append(note);
})();
