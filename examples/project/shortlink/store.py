"""Link storage on SQLite.

One table, `links`, keyed by slug. Every visit bumps a counter and the
last-visit time, which the compaction job uses to expire old links.
"""

import logging
import sqlite3
import time

log = logging.getLogger(__name__)

SCHEMA = """
CREATE TABLE IF NOT EXISTS links (
    slug        TEXT PRIMARY KEY,
    url         TEXT NOT NULL,
    created_at  INTEGER NOT NULL,
    visited_at  INTEGER,
    visits      INTEGER NOT NULL DEFAULT 0
);
"""


class SlugTaken(Exception):
    """The slug already names another link."""


class LinkStore:
    def __init__(self, path):
        self._db = sqlite3.connect(path, check_same_thread=False)
        self._db.executescript(SCHEMA)

    def add(self, slug, url):
        """Stores `url` under `slug`; raises SlugTaken if the slug is in use."""
        try:
            with self._db:
                self._db.execute(
                    "INSERT INTO links (slug, url, created_at) VALUES (?, ?, ?)",
                    (slug, url, int(time.time())),
                )
        except sqlite3.IntegrityError as error:
            raise SlugTaken(slug) from error

    def resolve(self, slug):
        """Returns the URL for `slug` and records the visit, or None."""
        with self._db:
            row = self._db.execute("SELECT url FROM links WHERE slug = ?", (slug,)).fetchone()
            if row is None:
                return None
            self._db.execute(
                "UPDATE links SET visits = visits + 1, visited_at = ? WHERE slug = ?",
                (int(time.time()), slug),
            )
        return row[0]

    def stats(self, slug):
        row = self._db.execute(
            "SELECT url, created_at, visited_at, visits FROM links WHERE slug = ?", (slug,)
        ).fetchone()
        if row is None:
            return None
        url, created_at, visited_at, visits = row
        return {"url": url, "created_at": created_at, "visited_at": visited_at, "visits": visits}

    def compact(self, expire_after_days):
        """Removes links nobody visited for `expire_after_days` days."""
        cutoff = int(time.time()) - expire_after_days * 86400
        with self._db:
            removed = self._db.execute(
                "DELETE FROM links WHERE COALESCE(visited_at, created_at) < ?", (cutoff,)
            ).rowcount
        # TODO: VACUUM after large deletions; the file never shrinks today.
        log.info("compaction removed %d expired links", removed)
        return removed
