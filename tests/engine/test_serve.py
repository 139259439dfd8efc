"""The authoring server: serves the site with a live-reload client, rebuilds on change, pushes `reload`
over Server-Sent Events, reports a broken build as `problems` (path:line) while still serving the last good
site, and recovers when the file is fixed."""

from __future__ import annotations

import http.client
import json
import queue
import threading
import time
import urllib.request

import pytest

from builder.model import BuildOptions
from builder.serve import CLIENT_TAG, EVENTS_PATH, DevServer
from tests.conftest import ROOT


class EventStream:
    """Reads an SSE endpoint in a thread; `next(name)` waits for the next event of that name."""

    def __init__(self, port: int):
        self.events: queue.Queue = queue.Queue()
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        self.conn.request("GET", EVENTS_PATH)
        self.response = self.conn.getresponse()
        assert self.response.getheader("Content-Type").startswith("text/event-stream")
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        name, data = None, []
        try:
            for raw in self.response:
                line = raw.decode("utf-8").rstrip("\n")
                if line.startswith("event: "):
                    name = line[len("event: ") :]
                elif line.startswith("data: "):
                    data.append(line[len("data: ") :])
                elif line == "" and name:
                    self.events.put((name, json.loads("\n".join(data))))
                    name, data = None, []
        except (OSError, ValueError):
            pass

    def next(self, name: str, timeout: float = 30):
        deadline = time.monotonic() + timeout
        while True:
            got, data = self.events.get(timeout=max(0.01, deadline - time.monotonic()))
            if got == name:
                return data

    def close(self) -> None:
        self.conn.close()


@pytest.fixture
def server(make_content, tmp_path):
    make_content("a.md", "---\ntitle: 页面 A\n---\n## 第一节\n\n原来的文字 $QK^\\top$。\n")
    options = BuildOptions(
        root=ROOT,
        content_dir=make_content.dir,
        theme_dir=ROOT / "theme",
        out_dir=tmp_path / "site",
        cache_dir=tmp_path / "cache",
        python_runtime=False,
        jobs=1,
    )
    logs: list[str] = []
    dev = DevServer(options, port=0, log=logs.append, watch_paths=[make_content.dir]).start()
    dev.write = make_content  # type: ignore[attr-defined]
    dev.logs = logs  # type: ignore[attr-defined]
    yield dev
    dev.stop()


def get(server: DevServer, path: str) -> str:
    with urllib.request.urlopen(server.url + path, timeout=10) as response:
        return response.read().decode("utf-8")


def test_edit_reloads_break_reports_problems_and_keeps_serving_fix_recovers(server):
    html = get(server, "a.html")
    assert "原来的文字" in html and CLIENT_TAG in html
    assert CLIENT_TAG not in (server.options.out_dir / "a.html").read_text(encoding="utf-8")  # injected, not built
    stream = EventStream(server.port)
    try:
        first = stream.next("hello")["version"]

        server.write("a.md", "---\ntitle: 页面 A\n---\n## 第一节\n\n新的文字 $QK^\\top$。\n")
        assert stream.next("reload")["version"] > first
        assert "新的文字" in get(server, "a.html")

        server.write("a.md", "---\ntitle: 页面 A\n---\n## 第一节\n\n坏了 $\\frac{a$ <b>\n")
        problems = stream.next("problems")
        assert any("a.md:6:" in p and "\\frac{a" in p for p in problems), problems
        assert "新的文字" in get(server, "a.html")  # the last good site is still served
        assert any("a.md:6:" in line for line in server.logs)  # …and the problem is printed in the terminal

        late = EventStream(server.port)  # a page opened while the build is broken sees the problems at once
        try:
            assert late.next("problems") == problems
        finally:
            late.close()

        server.write("a.md", "---\ntitle: 页面 A\n---\n## 第一节\n\n修好了 $QK^\\top$。\n")
        stream.next("reload")
        assert "修好了" in get(server, "a.html")
    finally:
        stream.close()


def test_client_script_is_served(server):
    js = get(server, "__live/client.js")
    assert "EventSource" in js and "textContent" in js


def raw_get(server: DevServer, path: str, host: str) -> int:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    try:
        conn.request("GET", path, headers={"Host": host})
        return conn.getresponse().status
    finally:
        conn.close()


def test_only_loopback_host_names_are_answered(server):
    port = server.port
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", "localhost", f"[::1]:{port}"):
        assert raw_get(server, "a.html", host) == 200, host
    for host in (f"evil.example:{port}", "evil.example", f"127.0.0.1.evil.example:{port}", ""):
        assert raw_get(server, "a.html", host) == 403, host
        assert raw_get(server, EVENTS_PATH, host) == 403, host  # nor the problem list


def test_dropped_clients_are_quiet(server, capfd):
    import socket
    import struct

    big = max(
        (p for p in (server.options.out_dir / "assets").rglob("*") if p.is_file()), key=lambda p: p.stat().st_size
    )
    path = str(big.relative_to(server.options.out_dir))
    for _ in range(20):
        sock = socket.create_connection(("127.0.0.1", server.port))
        sock.sendall(f"GET /{path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
        sock.recv(1)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # reset, not a clean close
        sock.close()
    time.sleep(0.5)
    assert "Traceback" not in capfd.readouterr().err
    assert "原来的文字" in get(server, "a.html")  # still serving


def test_a_folder_named_like_a_page_is_reported_by_the_server_as_by_the_build(server):
    (server.options.content_dir / "dir.md").mkdir()
    assert server.rebuild() is False
    assert any(
        line.endswith("dir.md: cannot read the page: it is a folder, not a page file [front-matter]")
        for line in server.logs
    ), server.logs
