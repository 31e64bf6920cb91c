import pytest

from shortlink.store import LinkStore


@pytest.fixture
def store(tmp_path):
    return LinkStore(str(tmp_path / "links.sqlite3"))


@pytest.fixture
def settings():
    return {
        "server": {"public_base_url": "https://sho.rt/"},
        "slugs": {"length": 5, "reserved": ["api", "admin", "static", "health"]},
    }
