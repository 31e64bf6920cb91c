import time

import pytest

from shortlink.store import SlugTaken


def test_add_and_resolve_counts_visits(store):
    store.add("k3Xq9", "https://example.com/a")
    assert store.resolve("k3Xq9") == "https://example.com/a"
    assert store.resolve("k3Xq9") == "https://example.com/a"
    assert store.stats("k3Xq9")["visits"] == 2
    assert store.resolve("nope") is None


def test_slug_collision_is_reported(store):
    store.add("taken", "https://example.com/1")
    with pytest.raises(SlugTaken):
        store.add("taken", "https://example.com/2")


def test_compact_removes_links_not_visited(store, monkeypatch):
    store.add("old", "https://example.com/old")
    later = time.time() + 400 * 86400
    monkeypatch.setattr(time, "time", lambda: later)
    store.add("new", "https://example.com/new")
    assert store.compact(expire_after_days=365) == 1
    assert store.resolve("old") is None
    assert store.resolve("new") == "https://example.com/new"
