"""The proofs that walk an autograd graph count each node once, however torch makes its Python objects.

torch 2.11 makes a backward node's Python object afresh each time the node is reached, unless one is
still alive, and a freed object's id goes to the next one made: a walk that kept ids, not the objects,
counted 4 of a graph's 8 saved tensors on a GPU box and drew a cycle it never finished laying out.
The graph here makes its objects the same way, so the walks meet what they met there.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from types import ModuleType

import pytest

Loader = Callable[[str], ModuleType]

LEAVES = 3
CHAIN = 4


class _Node:
    """A node of the graph itself (autograd's C++ node)."""

    def __init__(self, children: list[_Node]) -> None:
        self.children = children


class FreshNodeObject:
    """A node's Python object, made anew unless one is alive (as torch 2.11 makes them).

    Its slots give it a size no tuple or dict of the walks has, so the memory a freed one leaves is
    what the next one made gets: its id, as it happened there.
    """

    __slots__ = ("__weakref__", "_a", "_b", "_c", "_d", "_e", "node")
    _alive: dict[int, weakref.ref[FreshNodeObject]] = {}  # noqa: RUF012  (the class's registry, as torch's)

    def __init__(self, node: _Node) -> None:
        self.node = node

    @classmethod
    def of(cls, node: _Node) -> FreshNodeObject:
        made = cls._alive.get(id(node))
        held = made() if made else None
        if held is None:
            held = cls(node)
            cls._alive[id(node)] = weakref.ref(held)
        return held

    @property
    def next_functions(self) -> tuple[tuple[FreshNodeObject, int], ...]:
        return tuple((FreshNodeObject.of(child), 0) for child in self.node.children)

    def _sequence_nr(self) -> int:
        return 0


class Loss:
    """What the walks read of a loss, its `grad_fn`: one node reached twice, by a short path and a long one."""

    def __init__(self) -> None:
        shared = _Node([_Node([]) for _ in range(LEAVES)])
        chain = shared
        for _ in range(CHAIN):
            chain = _Node([chain])
        self._root = _Node([_Node([shared]), chain])
        self.nodes = 1 + 1 + CHAIN + 1 + LEAVES

    @property
    def grad_fn(self) -> FreshNodeObject:
        return FreshNodeObject.of(self._root)


@pytest.fixture
def loss() -> Loss:
    return Loss()


def test_part_0_counts_every_node_once(load_proof: Loader, loss: Loss) -> None:
    assert load_proof("0-map/building.py").graph_size(loss) == loss.nodes
    assert len(load_proof("0-map/walk_5_graph.py").graph_nodes(loss)) == loss.nodes


def test_floor_5_saved_tensors_meets_every_node_once(load_proof: Loader, loss: Loss) -> None:
    nodes = load_proof("5-autograd/saved_tensors.py").graph_nodes(loss)
    assert len(nodes) == len({id(node) for node in nodes}) == loss.nodes


def test_floor_5_draws_every_node_once_and_the_shared_one_with_both_parents(load_proof: Loader, loss: Loss) -> None:
    graph = load_proof("5-autograd/graph_walk.py").walk(loss, "fresh objects", {})
    assert len(graph.nodes) == loss.nodes
    assert max(len(node.parents) for node in graph.nodes.values()) == 2  # the shared node, from both paths
