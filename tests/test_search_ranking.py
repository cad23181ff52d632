"""What a reader's query finds first: the section that answers it, in both languages (issue 59).

Each query is run through Material's own search, typed into the built site's search field in
Chromium (`search_ranking.py`), and the results a reader sees are read from the page: each page's
group in order, its sections unfolded only where they lead it. A query names the section a reader
wants (or two, where two headings name it alike); that section must lead in all but two queries of
each language and be among the first three results in every one, and every result must open its
section, not its page's top.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page
from search_ranking import open_search, search

from conftest import Build

pytestmark = pytest.mark.browser

ENGLISH: dict[str, tuple[str, ...]] = {
    "graph break": ("compile/#graph-breaks",),
    "pinned memory": ("floors/8-chip/#host-device-copy",),
    "dispatch key": ("floors/4-dispatcher/#dispatch-keys",),
    "meta device": ("floors/4-dispatcher/#meta-device",),
    "roofline": ("floors/6-kernels/#roofline",),
    "arithmetic intensity": ("floors/6-kernels/#arithmetic-intensity",),
    "caching allocator": ("floors/7-memory/#cuda-caching-allocator",),
    "strides": ("floors/7-memory/#strides",),
    "import cost": ("floors/2-python/#import-cost",),
    "GIL": ("floors/3-boundary/#the-gil",),
    "chain rule": ("floors/5-autograd/#chain-rule",),
    "saved tensors": ("floors/5-autograd/#saved-tensor-cost", "floors/5-autograd/#release-during-backward"),
    "inference mode": ("floors/5-autograd/#grad-modes",),
    "custom operator": ("floors/4-dispatcher/#custom-op",),
    "guards recompile": ("compile/#guards",),
    "dynamic shapes": ("compile/#dynamic-shapes",),
    "intra-op threads": ("floors/8-chip/#thread-scaling",),
    "bandwidth buffer size": ("floors/8-chip/#bandwidth-vs-size",),
    "views and copies": ("floors/7-memory/#views-and-copies",),
    "numpy shared memory": ("floors/1-program/#numpy-interop",),
    "TensorIterator": ("floors/6-kernels/#elementwise-loops",),
    "generated bindings": ("floors/3-boundary/#generated-bindings", "floors/3-boundary/#inside-a-binding"),
    "AccumulateGrad": ("floors/5-autograd/#accumulate-grad",),
    "cite section": ("cite/#cite-a-section",),
    "asynchronous launch": ("floors/8-chip/#streams",),
    "decompositions": ("floors/4-dispatcher/#decompositions",),
    "grain size": ("floors/6-kernels/#kernel-walk",),
}
"""English queries and the sections that answer them."""

CHINESE: dict[str, tuple[str, ...]] = {
    "图中断": ("zh/compile/#graph-breaks",),
    "锁页内存": ("zh/floors/8-chip/#host-device-copy",),
    "分发键": ("zh/floors/4-dispatcher/#dispatch-keys",),
    "meta 设备": ("zh/floors/4-dispatcher/#meta-device",),
    "roofline": ("zh/floors/6-kernels/#roofline",),
    "算术强度": ("zh/floors/6-kernels/#arithmetic-intensity",),
    "缓存分配器": ("zh/floors/7-memory/#cuda-caching-allocator",),
    "步长": ("zh/floors/7-memory/#strides",),
    "import 开销": ("zh/floors/2-python/#import-cost",),
    "GIL": ("zh/floors/3-boundary/#the-gil",),
    "链式法则": ("zh/floors/5-autograd/#chain-rule",),
    "推理模式": ("zh/floors/5-autograd/#grad-modes",),
    "自定义算子": ("zh/floors/4-dispatcher/#custom-op",),
    "守卫": ("zh/compile/#guards",),
    "动态形状": ("zh/compile/#dynamic-shapes",),
    "CPU 线程": ("zh/floors/8-chip/#cpu-threads",),
    "带宽 缓冲区": ("zh/floors/8-chip/#bandwidth-vs-size",),
    "视图与复制": ("zh/floors/7-memory/#views-and-copies",),
    "共享内存": ("zh/floors/1-program/#numpy-interop",),
    "TensorIterator": ("zh/floors/6-kernels/#elementwise-loops",),
    "反向传播 释放": ("zh/floors/5-autograd/#backward-rules", "zh/floors/5-autograd/#release-during-backward"),
    "分解": ("zh/floors/4-dispatcher/#decompositions",),
    "异步启动": ("zh/floors/8-chip/#streams",),
    "引用一节": ("zh/cite/#cite-a-section",),
    "内存上限": ("zh/floors/8-chip/#memory-ceiling",),
}
"""Chinese queries (a glossary term, or words of a heading) and the sections that answer them."""

LEADS_AT_LEAST = {"en": len(ENGLISH) - 2, "zh": len(CHINESE) - 2}


@pytest.fixture
def tab(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    yield context.new_page()
    context.close()


def rank(results: list[str], wanted: tuple[str, ...]) -> int | None:
    """The 1-based place of the first wanted section among the results a reader sees; `None` if it is not shown."""
    return next((place for place, found in enumerate(results, start=1) if found in wanted), None)


@pytest.mark.parametrize(("language", "queries"), [("en", ENGLISH), ("zh", CHINESE)], ids=["en", "zh"])
def test_a_query_leads_with_the_section_that_answers_it(
    tab: Page, built_site: Build, site_url: str, language: str, queries: dict[str, tuple[str, ...]]
) -> None:
    """Material's worker weighs a page's own entry above a section that holds more of the query ("graph
    break" led with Floor 5, "Missing: break"), and cut a Chinese run's last character (步长 searched as 步)."""
    assert built_site.returncode == 0, built_site.log[-3000:]
    open_search(tab, site_url + ("zh/" if language == "zh" else ""))
    ranks, tops = {}, {}
    for query, wanted in queries.items():
        results = search(tab, query, site_url)
        ranks[query], tops[query] = rank(results, wanted), results[:3]
    table = "\n".join(f"{query!r}: {ranks[query]} {tops[query]}" for query in queries)
    assert all(place is not None and place <= 3 for place in ranks.values()), table
    assert sum(place == 1 for place in ranks.values()) >= LEADS_AT_LEAST[language], table
    # Every result a reader is offered first opens a section (a page's own entry leads only a page's group).
    assert all("#" in top[0] for top in tops.values()), table
