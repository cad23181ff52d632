// Material centres the active link of the navigation in its sidebar when a page opens. On the compile
// page, whose link sits below the gauge, that scrolled the sidebar by some 60 px at 1280 x 800 and hid
// the gauge's heading under the header, though the link was in view unscrolled. The sidebar goes back
// to its top whenever the active link fits in it there; a link further down keeps Material's centring.
//
// Material centres on an animation frame, which a busy machine runs after a timer set here (the
// sidebar stayed scrolled by 166 px under load): until the reader scrolls, points, touches or types,
// a scroll of the sidebar is Material's, and is undone too.
const READER_INPUT = ["wheel", "pointerdown", "touchstart", "keydown"];

document$.subscribe(() => {
  for (const wrap of document.querySelectorAll(".md-sidebar--primary .md-sidebar__scrollwrap")) {
    const toTop = () => {
      const active = wrap.querySelector(".md-nav__link--active[href]");
      if (!active || !active.clientHeight || !wrap.scrollTop) return;
      const bottom = active.getBoundingClientRect().bottom - wrap.getBoundingClientRect().top + wrap.scrollTop;
      if (bottom <= wrap.clientHeight) wrap.scrollTo({ top: 0 });
    };
    const readerMoved = () => {
      wrap.removeEventListener("scroll", toTop);
      for (const kind of READER_INPUT) removeEventListener(kind, readerMoved, true);
    };
    wrap.addEventListener("scroll", toTop);
    for (const kind of READER_INPUT) addEventListener(kind, readerMoved, true);
    setTimeout(toTop, 0);
  }
});
