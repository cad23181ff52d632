"""Accessibility checks of a page in the browser, by one pinned release of npm's latest axe-core.

Every accessibility test runs this one engine (`serious_violations`): the desktop and phone tests,
every page of the site, and the root 404 of a published edition. axe-playwright-python, which these
tests used before, bundles an older axe-core and returns every rule's passes and incomplete nodes
to Python as well, so one page took about twice as long to check; here axe reports violations only.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from filelock import FileLock
from playwright.sync_api import Page

from conftest import AXE_CORE_ADDRESS, AXE_CORE_PREFIX

AXE_CORE_VERSION = "4.14.1"
"""npm's latest axe-core when this check was written, pinned so that every run applies the same rules."""

SERIOUS = ("serious", "critical")

NEVER_SERIOUS_JS = """
(serious) => axe._audit.rules.filter(rule => {
  const checks = [...rule.any, ...rule.all, ...rule.none].map(check => typeof check === 'string' ? check : check.id);
  const impacts = rule.impact ? [rule.impact] : checks.map(id => (axe._audit.data.checks[id] || {}).impact);
  return impacts.length > 0 && impacts.every(impact => typeof impact === 'string' && !serious.includes(impact));
}).map(rule => rule.id)
"""
"""The rules that can report no serious or critical violation. axe-core gives a violation the rule's own impact, or
else the highest of its failed checks' (aggregateNodeResults in axe.js): a rule whose impact, or every check's, is
minor or moderate never reports one that `serious_violations` keeps. A check of no known impact keeps its rule."""

AXE_RUN_JS = f"""
async () => {{
  // Only the rules that can report what is kept: the others took up to a tenth of a page's run.
  const never = ({NEVER_SERIOUS_JS})({list(SERIOUS)!r});
  const results = await axe.run(document, {{
    resultTypes: ['violations'], rules: Object.fromEntries(never.map(id => [id, {{enabled: false}}]))}});
  return {{version: axe.version, skipped: never, violations: results.violations.map(v => ({{
    id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.slice(0, 3).map(n => n.target.join(' '))}}))}};
}}
"""


def install_axe_core(lock_dir: Path) -> str:
    """axe-core's script at `AXE_CORE_VERSION`, installed with npm first if it is not there yet.

    Never skipped: without npm, or if the install fails, the test fails and says why. The workers of
    one run install it once, under a lock in `lock_dir`.
    """
    script = AXE_CORE_PREFIX / "node_modules" / "axe-core" / "axe.min.js"
    package = script.parent / "package.json"
    with FileLock(lock_dir / "axe-core.lock"):
        installed = json.loads(package.read_text(encoding="utf-8"))["version"] if package.is_file() else None
        if installed != AXE_CORE_VERSION:
            npm = shutil.which("npm")
            if npm is None:
                pytest.fail(f"npm is needed to install axe-core {AXE_CORE_VERSION} (apt-get install npm)")
            command = [npm, "install", "--no-save", "--prefix", str(AXE_CORE_PREFIX), f"axe-core@{AXE_CORE_VERSION}"]
            done = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)
            if done.returncode != 0 or not script.is_file():
                pytest.fail(f"{' '.join(command)} failed:\n{done.stdout}{done.stderr}"[-3000:])
    return script.read_text(encoding="utf-8")


def serious_violations(tab: Page, axe_core: str, where: str, *, served_from: str | None = None) -> list[str]:
    """The serious and critical violations axe-core finds in `tab` as it is now, each line naming `where`.

    Args:
        tab: The page.
        axe_core: axe-core's script (`install_axe_core`), added to the page as it is.
        where: What each line names.
        served_from: The test server's root (`site_url`), if the page is one it serves: the page then fetches the
            same script from it (`conftest.AXE_CORE_ADDRESS`), which the browser compiles once for every page.
    """
    if tab.evaluate("typeof window.axe === 'undefined'"):
        if served_from is None:
            tab.add_script_tag(content=axe_core)
        else:
            tab.add_script_tag(url=served_from.rstrip("/") + AXE_CORE_ADDRESS)
    found = tab.evaluate(AXE_RUN_JS)
    assert found["version"] == AXE_CORE_VERSION, f"{where}: the page runs axe-core {found['version']}"
    return [
        f"{where} {v['id']} ({v['impact']}): {v['help']} {v['nodes']}"
        for v in found["violations"]
        if v["impact"] in SERIOUS
    ]


def settle(tab: Page) -> None:
    """Wait until every transition and animation that has an end has ended (Material fades a palette change)."""
    tab.evaluate(SETTLE_JS)


SETTLE_JS = """
async () => {
  // Never longer than 5 s: Page.evaluate has no time limit of its own, and a frame that is never drawn
  // or an animation that never finishes (one left paused) held a run of make test for twenty minutes.
  const atMost = new Promise(done => setTimeout(done, 5000));
  const settled = (async () => {
    // Two frames first, so that a change made just now has started its transitions.
    await new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)));
    const ending = document.getAnimations().filter(a => a.effect && a.effect.getComputedTiming().endTime !== Infinity);
    await Promise.all(ending.map(a => a.finished.catch(() => null)));  // one cancelled by a newer change is over too
  })();
  await Promise.race([settled, atMost]);
}
"""
