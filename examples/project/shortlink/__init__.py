"""shortlink: a small URL shortener service."""

__version__ = "0.3.1"
