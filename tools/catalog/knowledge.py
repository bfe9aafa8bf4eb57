"""What the process knows: the catalog with the user's overlay, the published rows, the acceptance priors, and every
table derived from them, held in one object instead of one cache per module.

Each fact is built on first use and kept on the ``Knowledge`` object, so ``reload()`` drops them all at once:
``specpick catalog update`` calls it after writing the overlay, and a long-running ``specpick mcp`` or ``chat``
then answers from the new rows. Keys name their owner (``"catalog"``, ``"published.rows"``, ``"priors.rows"``);
the modules that build a fact hold the typed accessor (``tables.get_catalog``, ``published.load_published``), this
module holds only the state, so it imports nothing of ours and every layer above may use it.

``without(sources)`` is a view that leaves sources out (a leave-one-source-out run): facts that do not depend on
which sources are in (the catalog, the parsed rows) are shared with the full view (``shared``); tables built from
the rows that remain are kept per view (``derived``), so a view never sees a table the full set built.

Caches that memoise a pure function of immutable inputs (arithmetic of a float, a parsed cell) stay ``lru_cache``:
nothing a reload changes can reach them.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Hashable, Iterable
from typing import Any, TypeVar

T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])


class Knowledge:
    """The catalog, overlay, published rows and priors of this process, and the tables derived from them.

    Build no instance yourself: ``knowledge()`` is the process's; ``without`` gives views of it.
    """

    def __init__(self, excluded: frozenset[str] = frozenset(), root: Knowledge | None = None) -> None:
        self.excluded: frozenset[str] = excluded
        self._root: Knowledge = root if root is not None else self
        self._facts: dict[Hashable, object] = {}
        self._views: dict[frozenset[str], Knowledge] = {}

    def shared(self, key: Hashable, build: Callable[[], T]) -> T:
        """A fact that does not depend on which sources are left out, built once for the process and its views."""
        facts = self._root._facts
        if key not in facts:
            facts[key] = build()
        return facts[key]  # type: ignore[return-value]

    def derived(self, key: Hashable, build: Callable[[], T]) -> T:
        """A table built from the rows this view keeps: one per view (the full set is the view leaving out none)."""
        if not self.excluded:
            return self.shared(key, build)
        if key not in self._facts:
            self._facts[key] = build()
        return self._facts[key]  # type: ignore[return-value]

    def without(self, sources: Iterable[str]) -> Knowledge:
        """The view leaving ``sources`` out (on top of what this view leaves out); views are kept per source set."""
        excluded = self.excluded | frozenset(sources)
        if excluded == self.excluded:
            return self
        views = self._root._views
        if excluded not in views:
            views[excluded] = Knowledge(excluded, root=self._root)
        return views[excluded]

    def keeps(self, sources: Iterable[str]) -> bool:
        """True when a row resting on ``sources`` is in this view (none of them is left out)."""
        return not self.excluded.intersection(sources)

    def reload(self) -> None:
        """Forget every fact and view: the next read parses the catalog and the overlay again."""
        root = self._root
        root._facts.clear()
        for view in root._views.values():
            view._facts.clear()
        root._views.clear()


_PROCESS = Knowledge()


def knowledge() -> Knowledge:
    """The process's knowledge (every verb, the MCP server and the chat loop read this one)."""
    return _PROCESS


def knowledge_cache(name: str) -> Callable[[F], F]:
    """``functools.cache`` for a function whose answer reads the catalog (directly or through a table built from
    it): the answers are kept on ``knowledge()`` under ``name``, so ``reload()`` forgets them with the catalog.

    Arguments must be hashable; the answer is the same for the same arguments until the next reload.
    """
    def wrap(fn: F) -> F:
        @functools.wraps(fn)
        def cached(*args: Any, **kwargs: Any) -> Any:
            key = (name, args, tuple(kwargs.items())) if kwargs else (name, args)
            facts = _PROCESS._facts
            if key not in facts:
                facts[key] = fn(*args, **kwargs)
            return facts[key]

        def cache_clear() -> None:
            """Forget this function's answers only (``functools`` spelling, for tests that patch its inputs)."""
            facts = _PROCESS._facts
            for key in [k for k in facts if isinstance(k, tuple) and k and k[0] == name]:
                del facts[key]

        cached.cache_clear = cache_clear  # type: ignore[attr-defined]
        return cached  # type: ignore[return-value]

    return wrap


__all__ = ["Knowledge", "knowledge", "knowledge_cache"]
