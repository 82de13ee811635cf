"""Open every page of the built docs site in headless Chromium; fail on console errors.

    python tools/docs_browser_check.py site/            # after `mkdocs build --strict -d site`
    python tools/docs_browser_check.py site/ --browser chromium --limit 5
    python tools/docs_browser_check.py site/ --translated docs   # ko/ pages: only translated ones

Serves the folder with a local http.server, starts one headless Chromium (Debian's
``chromium`` package) with a fresh profile and the DevTools protocol on a local port,
then loads each page in turn and collects what the browser reports as errors:
uncaught exceptions, ``console.error`` calls, and log entries of level "error"
(a script, stylesheet or image that failed to load). Prints one line per page with
errors and exits 1 if any. Standard library only: the DevTools websocket is spoken
by the small client below.

Example:
    >>> frame = _frame(b"hi")          # a masked text frame, as a client sends it
    >>> frame[0] == 0x81 and frame[1] == 0x80 | 2 and len(frame) == 2 + 4 + 2
    True
"""
import argparse
import base64
import functools
import http.server
import json
import os
import pathlib
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage", "--remote-debugging-port=0", "--remote-allow-origins=*"]


def _frame(payload):
    """A client-to-server websocket text frame (FIN, opcode 1, masked)."""
    mask = os.urandom(4)
    n = len(payload)
    head = bytes([0x81])
    if n < 126:
        head += bytes([0x80 | n])
    elif n < 1 << 16:
        head += bytes([0x80 | 126]) + n.to_bytes(2, "big")
    else:
        head += bytes([0x80 | 127]) + n.to_bytes(8, "big")
    return head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


class DevTools:
    """A minimal DevTools-protocol client over one websocket (text frames only)."""

    def __init__(self, ws_url, timeout=30):
        host_port, path = ws_url[len("ws://"):].split("/", 1)
        host, port = host_port.split(":")
        self.sock = socket.create_connection((host, int(port)), timeout=timeout)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall((f"GET /{path} HTTP/1.1\r\nHost: {host_port}\r\nUpgrade: websocket\r\n"
                           f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
                           "Sec-WebSocket-Version: 13\r\n\r\n").encode())
        self.buf = b""
        while b"\r\n\r\n" not in self.buf:
            self.buf += self._recv()
        status, self.buf = self.buf.split(b"\r\n\r\n", 1)
        if b" 101 " not in status.split(b"\r\n")[0]:
            raise RuntimeError(f"DevTools websocket refused: {status[:200]!r}")
        self.next_id = 0

    def _recv(self):
        chunk = self.sock.recv(1 << 16)
        if not chunk:
            raise RuntimeError("DevTools websocket closed")
        return chunk

    def _read(self, n):
        while len(self.buf) < n:
            self.buf += self._recv()
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def receive(self):
        """The next message (a dict); fragments are joined, control frames skipped."""
        data = b""
        while True:
            b0, b1 = self._read(2)
            n = b1 & 0x7F
            if n == 126:
                n = int.from_bytes(self._read(2), "big")
            elif n == 127:
                n = int.from_bytes(self._read(8), "big")
            payload = self._read(n)
            opcode = b0 & 0x0F
            if opcode == 8:
                raise RuntimeError("DevTools websocket closed by the browser")
            if opcode in (0, 1, 2):
                data += payload
                if b0 & 0x80:
                    return json.loads(data)

    def send(self, method, **params):
        self.next_id += 1
        self.sock.sendall(_frame(json.dumps({"id": self.next_id, "method": method,
                                             "params": params}).encode()))
        return self.next_id


def _error_of(msg):
    """A one-line description if DevTools message ``msg`` reports an error, else None."""
    method, p = msg.get("method"), msg.get("params", {})
    if method == "Runtime.exceptionThrown":
        d = p["exceptionDetails"]
        return "exception: " + d.get("exception", {}).get("description", d.get("text", "?"))[:300]
    if method == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
        args = " ".join(str(a.get("value", a.get("description", ""))) for a in p.get("args", []))
        return f"console.{p['type']}: {args[:300]}"
    if method == "Log.entryAdded" and p["entry"].get("level") == "error":
        e = p["entry"]
        return f"{e.get('source', 'log')}: {e.get('text', '')[:200]} {e.get('url', '')}"
    return None


def check_page(dt, url, timeout=30):
    """Load ``url``; return the errors reported until its load event, plus a short settle time."""
    nav = dt.send("Page.navigate", url=url)
    errors, loaded, deadline, settle = [], False, time.time() + timeout, None
    while time.time() < deadline:
        if loaded and time.time() > settle:
            break
        dt.sock.settimeout(max(0.05, min(deadline, settle or deadline) - time.time()))
        try:
            msg = dt.receive()
        except socket.timeout:
            continue
        if msg.get("id") == nav and "error" in msg:
            return [f"navigation failed: {msg['error']}"]
        if msg.get("id") == nav and msg.get("result", {}).get("errorText"):
            return [f"navigation failed: {msg['result']['errorText']}"]
        if msg.get("method") == "Page.loadEventFired":
            loaded, settle = True, time.time() + 0.25
        err = _error_of(msg)
        if err:
            errors.append(err)
    if not loaded:
        errors.append(f"no load event within {timeout} s")
    return errors


def serve(folder):
    """Serve ``folder`` on a free local port in a daemon thread; returns the server."""
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    handler = functools.partial(Quiet, directory=str(folder))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd


def start_browser(browser, profile):
    """Start headless Chromium; returns (process, DevTools port)."""
    proc = subprocess.Popen([browser, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    port_file = pathlib.Path(profile) / "DevToolsActivePort"
    for _ in range(600):
        if port_file.is_file() and port_file.read_text().strip():
            return proc, int(port_file.read_text().split()[0])
        if proc.poll() is not None:
            raise RuntimeError(f"{browser} exited with {proc.returncode} before opening DevTools")
        time.sleep(0.1)
    proc.kill()
    raise RuntimeError(f"{browser} did not open its DevTools port within 60 s")


def pages_of(site, translated=None):
    """Every page's URL path as a reader opens it (``api/nn/``, not ``api/nn/index.html``).

    With ``translated`` (the docs folder), a page of a language folder (``ko/quickstart/``) is
    kept only if it has its own source (``docs/quickstart.ko.md``): the others are the English
    page again in the same theme, already loaded once.
    """
    out = []
    langs = {p.parent.name for p in site.glob("*/sitemap.xml")}
    for p in site.rglob("*.html"):
        rel = p.relative_to(site).as_posix()
        if p.name == "404.html":
            continue
        url = rel[: -len("index.html")] if p.name == "index.html" else rel
        lang, _, rest = url.partition("/")
        if translated is not None and lang in langs:
            name = rest.rstrip("/") or "index"
            if not (pathlib.Path(translated) / f"{name}.{lang}.md").is_file():
                continue
        out.append(url)
    return sorted(out)


def main(argv=None):
    ap = argparse.ArgumentParser(description="load the built docs pages in headless Chromium")
    ap.add_argument("site", type=pathlib.Path)
    ap.add_argument("--browser", default=shutil.which("chromium") or shutil.which("chromium-browser")
                    or "chromium")
    ap.add_argument("--limit", type=int, default=0, help="check only the first N pages")
    ap.add_argument("--translated", metavar="DOCS", type=pathlib.Path,
                    help="in language folders, load only pages with their own DOCS/NAME.LANG.md")
    args = ap.parse_args(argv)
    pages = pages_of(args.site, args.translated)[: args.limit or None]
    if not pages:
        sys.exit(f"docs_browser_check: no HTML pages under {args.site}")
    httpd = serve(args.site)
    profile = tempfile.mkdtemp(prefix="newch-chromium-")
    proc, port = start_browser(args.browser, profile)
    bad, t0 = 0, time.time()
    try:
        targets = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10))
        ws = next(t["webSocketDebuggerUrl"] for t in targets if t.get("type") == "page")
        dt = DevTools(ws)
        for method in ("Page.enable", "Runtime.enable", "Log.enable"):
            dt.send(method)
        base = f"http://127.0.0.1:{httpd.server_address[1]}/"
        for page in pages:
            errors = check_page(dt, base + page)
            for e in errors:
                print(f"{page}: {e}")
            bad += bool(errors)
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
        httpd.shutdown()
        shutil.rmtree(profile, ignore_errors=True)
    print(f"docs_browser_check: {len(pages)} pages loaded in {time.time() - t0:.1f} s, "
          f"{bad} with console errors")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
