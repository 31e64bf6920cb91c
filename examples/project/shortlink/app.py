"""The shortlink HTTP server (standard library only)."""

import argparse
import json
import logging.config
import time
import tomllib
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from shortlink import handlers
from shortlink.store import LinkStore

log = logging.getLogger("shortlink")


def load_settings(path):
    with open(path, "rb") as file:
        return tomllib.load(file)


def make_handler(store, settings):
    class Handler(BaseHTTPRequestHandler):
        server_version = "shortlink/0.3"

        def do_POST(self):
            started = time.monotonic()
            if self.path != "/api/links":
                status, payload = HTTPStatus.NOT_FOUND, {"error": "no such endpoint"}
            else:
                length = int(self.headers.get("Content-Length", 0))
                status, payload = handlers.create_link(store, settings, self.rfile.read(length))
            self._send_json(status, payload)
            self._log(status, started)

        def do_GET(self):
            started = time.monotonic()
            if self.path == "/health":
                self._send_json(HTTPStatus.OK, {"ok": True})
            else:
                status, location = handlers.redirect(store, self.path.lstrip("/"))
                self.send_response(status)
                if location:
                    self.send_header("Location", location)
                self.end_headers()
            self._log(HTTPStatus.OK if self.path == "/health" else status, started)

        def _send_json(self, status, payload):
            body = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _log(self, status, started):
            elapsed_ms = (time.monotonic() - started) * 1000
            handlers.log_access(self.client_address[0], self.command, self.path, status, elapsed_ms)

        def log_message(self, format, *args):
            pass  # the access log replaces BaseHTTPRequestHandler's stderr lines

    return Handler


def main(argv=None):
    parser = argparse.ArgumentParser(description="Run the shortlink server.")
    parser.add_argument("--config", default="config/settings.toml")
    parser.add_argument("--logging", default="config/logging.ini")
    args = parser.parse_args(argv)

    logging.config.fileConfig(args.logging, disable_existing_loggers=False)
    settings = load_settings(args.config)
    store = LinkStore(settings["storage"]["database"])
    # TODO: run store.compact() from a timer instead of only at start-up.
    store.compact(settings["storage"]["expire_after_days"])

    address = (settings["server"]["host"], settings["server"]["port"])
    server = ThreadingHTTPServer(address, make_handler(store, settings))
    log.info("listening on http://%s:%d", *address)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        log.info("shutting down")


if __name__ == "__main__":
    main()
