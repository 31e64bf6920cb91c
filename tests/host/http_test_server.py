"""A local HTTP server for http_methods_test.cc.

Listens on two ports of 127.0.0.1 (two origins, for redirects that change
origin), prints "PORT1 PORT2\\n" once both accept connections, and serves
until it is killed. Endpoints (GET and POST alike):

  /hello                 200 "hello", header X-Test: yes
  /echo-headers          the request headers as a JSON object (lower-case names)
  /echo-header-back      200 with header X-Echo: the request's Authorization
  /header-named?form=F&prefix=P
                         200 with a header named "X-" + F(P + the request's
                         Authorization) + "-End", value "named"; F is plain,
                         base64, base64url, percent or percent-lower
  /echo                  the request's method and body: "METHOD\\n" + body
  /redirect?to=U&code=C  C (default 302) with Location: U
  /chain/N               302 to /chain/N-1 ... /chain/0 answers "done"
  /sleep?ms=N            waits N ms, then 200 "slept"
  /bytes?n=N             N bytes of "a"
  /binary                the 256 byte values 0..255
"""

import base64
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format, *args):  # quiet: the test output is the tool's
        pass

    def answer(self, status, body=b"", headers=()):
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def request_body(self):
        length = int(self.headers.get("Content-Length", "0"))
        return self.rfile.read(length) if length else b""

    def serve(self):
        url = urlsplit(self.path)
        query = {name: values[0] for name, values in parse_qs(url.query).items()}
        body = self.request_body()
        path = url.path
        if path == "/hello":
            self.answer(200, b"hello", [("X-Test", "yes")])
        elif path == "/echo-headers":
            headers = {name.lower(): value for name, value in self.headers.items()}
            self.answer(200, json.dumps(headers, sort_keys=True).encode())
        elif path == "/echo-header-back":
            self.answer(200, b"ok", [("X-Echo", self.headers.get("Authorization", ""))])
        elif path == "/header-named":
            secret = (query.get("prefix", "") + self.headers.get("Authorization", "")).encode()
            form = query.get("form", "plain")
            if form == "plain":
                encoded = secret.decode()
            elif form == "base64":
                encoded = base64.b64encode(secret).decode()
            elif form == "base64url":
                encoded = base64.urlsafe_b64encode(secret).decode()
            elif form == "percent":
                encoded = "".join("%%%02X" % byte for byte in secret)
            else:
                encoded = "".join("%%%02x" % byte for byte in secret)
            self.answer(200, b"ok", [("X-" + encoded + "-End", "named")])
        elif path == "/echo":
            self.answer(200, self.command.encode() + b"\n" + body)
        elif path == "/redirect":
            self.answer(int(query.get("code", "302")), b"moved", [("Location", query["to"])])
        elif path.startswith("/chain/"):
            left = int(path[len("/chain/"):])
            if left == 0:
                self.answer(200, b"done")
            else:
                self.answer(302, b"", [("Location", "/chain/%d" % (left - 1))])
        elif path == "/sleep":
            time.sleep(int(query["ms"]) / 1000)
            self.answer(200, b"slept")
        elif path == "/bytes":
            self.answer(200, b"a" * int(query["n"]))
        elif path == "/binary":
            self.answer(200, bytes(range(256)))
        else:
            self.answer(404, b"no such endpoint")

    do_GET = serve
    do_POST = serve


def main():
    servers = [ThreadingHTTPServer(("127.0.0.1", 0), Handler) for _ in range(2)]
    for server in servers:
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, daemon=True).start()
    print(" ".join(str(server.server_address[1]) for server in servers), flush=True)
    threading.Event().wait()


if __name__ == "__main__":
    sys.exit(main())
