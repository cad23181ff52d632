// Other machines' outputs beside a proof's (pytorch_floors.recordings.tabs.LazyOutputs): a page holds each
// recorded tab's machine and claims, and a placeholder for its output, which comes from the page's
// floors-tiers.json (same origin) when the tab is first shown. A floor with three recorded machines
// weighed more than a phone's budget with every output in the page, opened or not.
// Its words are the page's (overrides/main.html writes them, in the page's language, into #floors-words).
(() => {
  const FILE = "floors-tiers.json";
  const say = window.floorsSay; // javascripts/floors-words.js
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

  // Material links tab sets by label: a machine chosen on one block is shown on every block that has its
  // tab. A set without it stayed on "This build" with no sign; it now says so above its output.
  const CHINESE = document.documentElement.lang === "zh";
  const absent = (tier) =>
    CHINESE
      ? `这个证明没有 ${tier} 的记录（或它的输出与本次构建相同）：下面是本次构建的输出。`
      : `No output of ${tier} differs here (not recorded, or the same as this build's): this build's output is shown.`;
  const chosenTier = (set) => {
    const input = set.querySelector(":scope > input:checked");
    const label = input && set.querySelector(`:scope > .tabbed-labels > label[for="${CSS.escape(input.id)}"]`);
    return label ? label.dataset.tier || null : null;
  };
  const markAbsent = (tier) => {
    for (const set of document.querySelectorAll(".floors-tiers")) {
      let note = set.querySelector(":scope > .floors-tiers__absent");
      const has = !tier || set.querySelector(`:scope > .tabbed-labels > label[data-tier="${CSS.escape(tier)}"]`);
      if (has) {
        if (note) note.remove();
        continue;
      }
      if (!note) {
        note = document.createElement("p");
        note.className = "floors-tiers__absent";
        note.dataset.searchExclude = "";
        set.querySelector(":scope > .tabbed-content").before(note);
      }
      note.dataset.tier = tier;
      note.textContent = absent(tier);
    }
  };
  // On opening a page, the choice Material restored: a set showing a tab that is not its first.
  const restored = () => {
    for (const set of document.querySelectorAll(".floors-tiers")) {
      const first = set.querySelector(":scope > input");
      if (first && !first.checked) return chosenTier(set);
    }
    return null;
  };

  document.addEventListener("change", (event) => {
    const set = event.target.closest(".floors-tiers");
    if (!set) return;
    setTimeout(fill, 0);
    setTimeout(() => markAbsent(chosenTier(set)), 0);
  });
  document.addEventListener("click", (event) => {
    if (event.target.closest(".floors-tiers")) setTimeout(fill, 0);
  });
  document$.subscribe(() => {
    fill();
    setTimeout(() => {
      fill(); // after Material has restored a linked tab choice
      markAbsent(restored());
    }, 250);
  });
})();
