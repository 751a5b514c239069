"""A mapping of bounded size that forgets its least recently used entries first (:class:`LruCache`).

For the per-chat caches of a worker (what each slot shows, the newest view queued for it): at its bound it
drops one entry at a time, the one no chat has touched for longest — an idle chat's — never everything at
once, which would cost every active chat a redundant call at the same moment.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable
from typing import Generic, TypeVar

_K = TypeVar("_K", bound=Hashable)
_V = TypeVar("_V")


class LruCache(Generic[_K, _V]):
    """At most ``capacity`` entries; reading or writing one makes it the most recently used."""

    def __init__(self, capacity: int) -> None:
        """An empty cache that keeps at most ``capacity`` entries (at least one)."""
        self.capacity = max(1, capacity)
        self._entries: OrderedDict[_K, _V] = OrderedDict()

    def get(self, key: _K) -> _V | None:
        """The entry of ``key`` (now the most recently used), or ``None``."""
        value = self._entries.get(key)
        if value is not None:
            self._entries.move_to_end(key)
        return value

    def put(self, key: _K, value: _V) -> None:
        """Keep ``value`` for ``key``, now the most recently used; past the bound, forget the least recent."""
        self._entries[key] = value
        self._entries.move_to_end(key)
        if len(self._entries) > self.capacity:
            self._entries.popitem(last=False)

    def pop(self, key: _K) -> _V | None:
        """Forget ``key``: its entry, or ``None`` if it had none."""
        return self._entries.pop(key, None)

    def __len__(self) -> int:
        """How many entries it holds."""
        return len(self._entries)

    def __contains__(self, key: object) -> bool:
        """Whether ``key`` has an entry (without making it recently used)."""
        return key in self._entries
