"""Slug generation and validation.

A slug is the short code at the end of a short URL. Slugs use an alphabet
without look-alike characters (no 0/O, 1/l/I) so people can type them from
a printout.
"""

import secrets

DEFAULT_ALPHABET = "23456789abcdefghijkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ"


class SlugError(ValueError):
    """A custom slug was rejected."""


def generate(length=5, alphabet=DEFAULT_ALPHABET):
    """Returns a random slug of `length` characters from `alphabet`."""
    return "".join(secrets.choice(alphabet) for _ in range(length))


def validate_custom(slug, reserved=(), alphabet=DEFAULT_ALPHABET):
    """Checks a slug chosen by a user; raises SlugError saying why not."""
    if not 3 <= len(slug) <= 32:
        raise SlugError(f"slug {slug!r} must be 3 to 32 characters long")
    bad = sorted(set(slug) - set(alphabet) - set("-_"))
    if bad:
        raise SlugError(f"slug {slug!r} contains characters not allowed: {''.join(bad)}")
    if slug.lower() in reserved:
        raise SlugError(f"slug {slug!r} is reserved")
    return slug


# TODO: add a profanity filter for generated slugs; a 5-character random
# slug spells a rude word about once in 40,000 links.
