// Other machines' outputs beside a proof's (pytorch_floors.recordings.tabs.LazyOutputs): a page holds each
// recorded tab's machine and claims, and a placeholder for its output, which comes from the page's
// floors-tiers.json (same origin) when the tab is first shown. A floor with three recorded machines
// weighed more than a phone's budget with every output in the page, opened or not.
// Its words are the page's (overrides/main.html writes them, in the page's language, into #floors-words).
(() => {
  const FILE = "floors-tiers.json";
  const say = (key, english, fields) => {
    let words = {};
    try {
      words = JSON.parse(document.getElementById("floors-words").textContent);
    } catch {
      // no words on the page (a page of another theme): English
    }
    return (words[key] || english).replace(/\{(\w+)\}/g, (field, name) => fields[name] ?? field);
  };
  const files = new Map(); // a page's address -> the promise of its outputs

  const outputs = () => {
    const address = new URL(FILE, location.href).href;
    if (!files.has(address)) {
      files.set(
        address,
        fetch(address).then((response) => {
          if (!response.ok) throw new Error(`${FILE}: ${response.status}`);
          return response.json();
        }),
      );
    }
    return files.get(address);
  };

  const fill = () => {
    // A tab set's checked input is the tab shown (Material links tab sets by label and restores the choice).
    for (const set of document.querySelectorAll(".floors-tiers")) {
      const inputs = [...set.querySelectorAll(":scope > input")];
      const shown = inputs.findIndex((input) => input.checked);
      const block = set.querySelectorAll(":scope > .tabbed-content > .tabbed-block")[shown];
      const lazy = block && block.querySelector(".floors-tiers__lazy[data-floors-tier-output]");
      if (!lazy || lazy.dataset.floorsTierState) continue;
      lazy.dataset.floorsTierState = "loading";
      outputs()
        .then((all) => {
          const html = all[lazy.dataset.floorsTierOutput];
          if (html === undefined) throw new Error(`${FILE} has no ${lazy.dataset.floorsTierOutput}`);
          lazy.innerHTML = html; // the build's own rendering of a recording it allow-listed
          lazy.dataset.floorsTierState = "loaded";
        })
        .catch((error) => {
          lazy.dataset.floorsTierState = "failed";
          lazy.querySelector(".floors-tiers__loading").textContent = say(
            "tier_failed",
            "This machine's output and claims could not be loaded ({error}); reload the page to try again.",
            { error: error.message },
          );
        });
    }
  };

  document.addEventListener("change", (event) => {
    if (event.target.closest(".floors-tiers")) setTimeout(fill, 0);
  });
  document.addEventListener("click", (event) => {
    if (event.target.closest(".floors-tiers")) setTimeout(fill, 0);
  });
  document$.subscribe(() => {
    fill();
    setTimeout(fill, 250); // after Material has restored a linked tab choice
  });
})();
