// Material centres the active link of the navigation in its sidebar when a page opens. On the compile
// page, whose link sits below the gauge, that scrolled the sidebar by some 60 px at 1280 x 800 and hid
// the gauge's heading under the header, though the link was in view unscrolled. The sidebar goes back
// to its top whenever the active link fits in it there; a link further down keeps Material's centring.
document$.subscribe(() => {
  setTimeout(() => {
    for (const wrap of document.querySelectorAll(".md-sidebar--primary .md-sidebar__scrollwrap")) {
      const active = wrap.querySelector(".md-nav__link--active[href]");
      if (!active || !active.clientHeight) continue;
      const bottom = active.getBoundingClientRect().bottom - wrap.getBoundingClientRect().top + wrap.scrollTop;
      if (bottom <= wrap.clientHeight) wrap.scrollTo({ top: 0 });
    }
  }, 0);
});
