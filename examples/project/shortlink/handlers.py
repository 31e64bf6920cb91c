"""HTTP request handlers: the JSON API and the redirects."""

import json
import logging
from http import HTTPStatus
from urllib.parse import urlsplit

from shortlink import slugs
from shortlink.store import SlugTaken

access_log = logging.getLogger("shortlink.access")

MAX_URL_LENGTH = 2048


def is_acceptable_url(url):
    parts = urlsplit(url)
    return parts.scheme in ("http", "https") and bool(parts.netloc) and len(url) <= MAX_URL_LENGTH


def create_link(store, settings, body):
    """POST /api/links {"url": ..., "slug"?: ...} -> (status, payload)."""
    try:
        request = json.loads(body or b"{}")
    except json.JSONDecodeError as error:
        return HTTPStatus.BAD_REQUEST, {"error": f"body is not JSON: {error.msg}"}
    url = request.get("url", "")
    if not is_acceptable_url(url):
        return HTTPStatus.BAD_REQUEST, {"error": "url must be an http(s) URL of at most 2048 characters"}

    custom = request.get("slug")
    try:
        if custom is not None:
            slug = slugs.validate_custom(custom, reserved=settings["slugs"]["reserved"])
            store.add(slug, url)
        else:
            slug = _add_with_random_slug(store, settings, url)
    except slugs.SlugError as error:
        return HTTPStatus.BAD_REQUEST, {"error": str(error)}
    except SlugTaken:
        return HTTPStatus.CONFLICT, {"error": f"slug {custom!r} is already taken"}

    base = settings["server"]["public_base_url"].rstrip("/")
    return HTTPStatus.CREATED, {"slug": slug, "short_url": f"{base}/{slug}", "url": url}


def _add_with_random_slug(store, settings, url, attempts=5):
    # Collisions are rare (56^5 slugs) but possible; retry a few times.
    for _ in range(attempts):
        slug = slugs.generate(settings["slugs"]["length"])
        try:
            store.add(slug, url)
            return slug
        except SlugTaken:
            continue
    raise RuntimeError("could not find a free slug; increase slugs.length")


def redirect(store, slug):
    """GET /<slug> -> (status, location or None)."""
    url = store.resolve(slug)
    if url is None:
        return HTTPStatus.NOT_FOUND, None
    return HTTPStatus.FOUND, url


def log_access(client, method, path, status, duration_ms):
    # One line per request; tools/logstat parses this exact format.
    access_log.info("%s %s %s %d %.1f", client, method, path, status, duration_ms)
