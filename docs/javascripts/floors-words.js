// The site's scripts' words in the page's language: overrides/main.html writes them into #floors-words,
// and each script says a message through floorsSay(key, english, fields). Loaded before the scripts using it.
window.floorsSay = (key, english, fields = {}) => {
  let words = {};
  try {
    words = JSON.parse(document.getElementById("floors-words").textContent);
  } catch {
    // no words on the page (a page of another theme): English
  }
  return (words[key] || english).replace(/\{(\w+)\}/g, (field, name) => fields[name] ?? field);
};
