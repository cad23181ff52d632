// Material asks for the whole search index (search/search_index.json, most of a page's weight) as
// soon as a page opens, although most readers never search. This script, loaded before Material's
// bundle, holds that one request back until the reader starts a search: opens the search (button,
// keyboard shortcut, or a click into the field) or arrives from a result with `?h=` (highlighting
// needs the index). The request is then sent unchanged, once; while it loads, Material's search
// says "Initializing search", as it does on any slow connection. Material's search worker (its
// script is a page's heaviest after the stylesheet and the bundle) waits for the same moment: the
// bundle is handed a stand-in that keeps its messages and starts the real worker then. Every
// other request passes through untouched.
(() => {
  const indexPath = /\/search\/search_index\.json$/;
  const opened = XMLHttpRequest.prototype.open;
  const sent = XMLHttpRequest.prototype.send;
  const held = new WeakSet();
  let release;
  const wanted = new Promise((resolve) => {
    release = resolve;
  });
  const want = () => release();

  // Each language has its own index: a Chinese page (Material's theme sets <html lang="zh">) asks for zh/'s.
  const language = document.documentElement.lang === "zh" ? "zh/" : "";
  XMLHttpRequest.prototype.open = function open(method, url, ...rest) {
    const address = new URL(String(url), location.href);
    if (indexPath.test(address.pathname)) {
      held.add(this);
      if (language && !address.pathname.endsWith(`/${language}search/search_index.json`)) {
        address.pathname = address.pathname.replace(/search\/search_index\.json$/, `${language}search/search_index.json`);
        return opened.call(this, method, address.href, ...rest);
      }
    }
    return opened.call(this, method, url, ...rest);
  };
  XMLHttpRequest.prototype.send = function send(...body) {
    if (!held.has(this)) return sent.apply(this, body);
    held.delete(this);
    wanted.then(() => sent.apply(this, body));
    return undefined;
  };

  // Material's worker cuts a query's Chinese into the words its index holds, but its loop stops one
  // character short of each run's end: the last character never ends a word, so 步长 was searched as 步*
  // (every word that starts with 步) and 缓存分配器 as its first four characters. A mark no page holds
  // (〇, a Han character, so the run goes on to it) closes each run: the run's own last character can
  // then end a word, and the mark, left last, is dropped. A query message is `{type: 2, data: "…"}`.
  const QUERY = 2;
  const RUN_END = "\u3007";
  const wholeWords = (message) =>
    message && message.type === QUERY && typeof message.data === "string"
      ? { ...message, data: message.data.replace(/\p{sc=Han}+/gu, (run) => run + RUN_END) }
      : message;

  const searchWorker = /\/workers\/search\.[^/]*\.js$/;
  const RealWorker = window.Worker;
  // Material listens for the worker's "message" events and posts to it: nothing else of a Worker.
  class WorkerOnDemand extends EventTarget {
    constructor(url, options) {
      super();
      this.queued = [];
      wanted.then(() => {
        this.worker = new RealWorker(url, options);
        for (const type of ["message", "messageerror", "error"]) {
          this.worker.addEventListener(type, (event) => this.dispatchEvent(new event.constructor(type, event)));
        }
        for (const message of this.queued.splice(0)) this.worker.postMessage(message);
      });
    }
    postMessage(message) {
      message = wholeWords(message);
      if (this.worker) this.worker.postMessage(message);
      else this.queued.push(message);
    }
    terminate() {
      wanted.then(() => this.worker.terminate());
    }
  }
  window.Worker = function Worker(url, options) {
    if (!searchWorker.test(new URL(String(url), location.href).pathname)) return new RealWorker(url, options);
    return new WorkerOnDemand(url, options);
  };

  if (new URLSearchParams(location.search).has("h")) want();
  const searching = (target) =>
    target instanceof Element &&
    (target.matches("#__search, [data-md-component='search-query']") || target.closest("label[for='__search']"));
  document.addEventListener("focusin", (event) => searching(event.target) && want());
  document.addEventListener("pointerdown", (event) => searching(event.target) && want());
  document.addEventListener("change", (event) => searching(event.target) && want());
  // Material's own search shortcuts (f, s, /) open the search without a click.
  document.addEventListener("keydown", (event) => {
    const typing = event.target instanceof Element && event.target.closest("input, textarea, [contenteditable]");
    if (!typing && ["f", "s", "/"].includes(event.key)) want();
  });
})();
