"""Authoring server: `python build.py --serve [--port N]`.

Builds, serves the output folder on 127.0.0.1, watches content/, theme/ and the course's code (watchfiles),
rebuilds on every change — only what changed is re-done, thanks to the build caches, which this long-lived
process also keeps in memory — and tells open pages over Server-Sent Events:

* `event: reload` after a successful rebuild → the page reloads;
* `event: problems` (data: JSON list of `path:line: message`) after a failed one → the page shows them in an
  overlay; the previous site keeps being served, and the next successful build clears the overlay.

The live-reload client is injected by this server into the HTML it serves (before `</body>`); the files in
the output folder never contain it, so a normal build is unaffected.
"""

from __future__ import annotations

import functools
import http.server
import json
import socketserver
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

from .course import CourseError, load_course
from .errors import BuildFailed
from .model import BuildOptions
from .pipeline import build_site

EVENTS_PATH = "/__live/events"
CLIENT_PATH = "/__live/client.js"
CLIENT_TAG = f'<script src="{CLIENT_PATH}"></script>'

CLIENT_JS = r"""
(() => {
  const OVERLAY_ID = "live-build-problems";
  function removeOverlay() { const old = document.getElementById(OVERLAY_ID); if (old) old.remove(); }
  function showOverlay(problems) {
    removeOverlay();
    const box = document.createElement("section");
    box.id = OVERLAY_ID;
    box.setAttribute("role", "alertdialog");
    box.setAttribute("aria-labelledby", OVERLAY_ID + "-title");
    box.style.cssText = "position:fixed;inset:auto 1rem 1rem 1rem;max-height:60vh;overflow:auto;z-index:2147483647;" +
      "background:var(--surface,#fff);color:var(--fg,#111);border:2px solid var(--danger,#c00);" +
      "border-radius:var(--radius,8px);box-shadow:var(--shadow,0 4px 24px rgba(0,0,0,.3));padding:1rem 1.25rem;" +
      "font:14px/1.5 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;";
    const title = document.createElement("h2");
    title.id = OVERLAY_ID + "-title";
    title.style.cssText = "margin:0 0 .5rem;font-size:1rem;color:var(--danger,#c00);";
    title.textContent = "构建失败：修改下列问题后页面会自动刷新（正在显示上一次成功构建的页面）";
    const list = document.createElement("ul");
    list.style.cssText = "margin:0;padding-left:1.25rem;white-space:pre-wrap;word-break:break-word;";
    for (const text of problems) {
      const item = document.createElement("li");
      item.textContent = text;  // problems quote author input: always text, never HTML
      list.append(item);
    }
    const close = document.createElement("button");
    close.type = "button";
    close.textContent = "关闭";
    close.style.cssText = "margin-top:.75rem;font:inherit;padding:.25rem .75rem;cursor:pointer;" +
      "background:var(--surface-2,#eee);color:var(--fg,#111);border:1px solid var(--border,#999);border-radius:6px;";
    close.addEventListener("click", removeOverlay);
    box.append(title, list, close);
    document.body.append(box);
    close.focus();
  }
  let version = null;
  const source = new EventSource("__EVENTS__");
  source.addEventListener("hello", (e) => {
    const data = JSON.parse(e.data);
    if (version !== null && data.version !== version) location.reload();  // rebuilt while disconnected
    version = data.version;
    document.documentElement.dataset.liveReload = "connected";
  });
  source.addEventListener("reload", () => location.reload());
  source.addEventListener("problems", (e) => showOverlay(JSON.parse(e.data)));
})();
""".replace("__EVENTS__", EVENTS_PATH)


class LiveState:
    """What open pages need to know: the build number, and the problems of the last build (if it failed)."""

    def __init__(self) -> None:
        self.version = 0
        self.problems: list[str] = []
        self.changed = threading.Condition()

    def publish(self, problems: list[str]) -> None:
        with self.changed:
            if not problems:
                self.version += 1
            self.problems = problems
            self.changed.notify_all()

    def snapshot(self) -> tuple[int, list[str]]:
        with self.changed:
            return self.version, list(self.problems)


def inject_client(html: bytes) -> bytes:
    marker = b"</body>"
    at = html.rfind(marker)
    tag = CLIENT_TAG.encode()
    return html[:at] + tag + html[at:] if at >= 0 else html + tag


LOOPBACK_NAMES = {"localhost", "127.0.0.1", "::1"}


class LiveHandler(http.server.SimpleHTTPRequestHandler):
    extensions_map = {
        **http.server.SimpleHTTPRequestHandler.extensions_map,
        ".wasm": "application/wasm",
        ".js": "text/javascript",
        ".mjs": "text/javascript",
    }
    state: LiveState
    stopping: threading.Event

    def log_message(self, *args) -> None:  # the terminal is for build results
        pass

    def end_headers(self) -> None:
        self.send_header("Cache-Control", "no-store")
        super().end_headers()

    def host_allowed(self) -> bool:
        """Only loopback names: a page of another site that rebinds its DNS name to 127.0.0.1 sends its own
        name as Host, and must not read the site or the problem list."""
        host = (self.headers.get("Host") or "").strip().lower()
        name = host[1 : host.index("]")] if host.startswith("[") and "]" in host else host.rsplit(":", 1)[0]
        if name in LOOPBACK_NAMES:
            return True
        self.send_error(403, "Forbidden: the authoring server answers only to localhost / 127.0.0.1")
        return False

    def do_HEAD(self) -> None:
        if self.host_allowed():
            super().do_HEAD()

    def do_GET(self) -> None:
        if not self.host_allowed():
            return
        path = self.path.split("?", 1)[0]
        if path == EVENTS_PATH:
            return self.events()
        if path == CLIENT_PATH:
            return self.send_bytes(CLIENT_JS.encode(), "text/javascript; charset=utf-8")
        local = Path(self.translate_path(self.path))
        if local.is_dir():
            local = local / "index.html"
        if local.suffix == ".html" and local.is_file():
            return self.send_bytes(inject_client(local.read_bytes()), "text/html; charset=utf-8")
        return super().do_GET()

    def send_bytes(self, data: bytes, content_type: str) -> None:
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def events(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.end_headers()
        version, problems = self.state.snapshot()
        try:
            self.send_event("hello", {"version": version})
            if problems:
                self.send_event("problems", problems)
            while not self.stopping.is_set():
                with self.state.changed:
                    self.state.changed.wait(timeout=15)
                new_version, new_problems = self.state.snapshot()
                if new_problems and new_problems != problems:
                    self.send_event("problems", new_problems)
                elif new_version != version:
                    self.send_event("reload", {"version": new_version})
                else:
                    self.wfile.write(b": keep-alive\n\n")
                    self.wfile.flush()
                version, problems = new_version, new_problems
        except (BrokenPipeError, ConnectionResetError):
            pass

    def send_event(self, name: str, data: object) -> None:
        self.wfile.write(f"event: {name}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode())
        self.wfile.flush()


class _Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def handle_error(self, request, client_address) -> None:  # type: ignore[no-untyped-def]
        """A reader closing a tab mid-response is not an error: only real failures get a traceback."""
        if isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError, ConnectionAbortedError)):
            return
        super().handle_error(request, client_address)


def course_paths(options: BuildOptions) -> list[Path]:
    """The course's code, watched like the content (none if it cannot be loaded: the build reports why)."""
    try:
        return load_course(options.content_dir, options.root).code_paths()
    except CourseError:
        return []


class DevServer:
    """Build + serve + watch. `start()` runs in background threads (tests); `serve_forever()` blocks (CLI)."""

    def __init__(
        self,
        options: BuildOptions,
        port: int = 8000,
        *,
        log: Callable[[str], None] | None = None,
        watch_paths: list[Path] | None = None,
    ):
        self.options = options
        self.log = log or (lambda text: print(text, file=sys.stderr, flush=True))
        self.state = LiveState()
        self.stopping = threading.Event()
        self.watch_paths = watch_paths or [
            p for p in (options.content_dir, options.theme_dir, *course_paths(options)) if p.exists()
        ]
        handler = type("Handler", (LiveHandler,), {"state": self.state, "stopping": self.stopping})
        self.httpd = _Server(("127.0.0.1", port), functools.partial(handler, directory=str(options.out_dir)))
        self.port = self.httpd.server_address[1]
        self.threads: list[threading.Thread] = []
        self.build_lock = threading.Lock()  # one build at a time: they share the output and temp folders

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    def rebuild(self) -> bool:
        with self.build_lock:
            return self._rebuild()

    def _rebuild(self) -> bool:
        started = time.perf_counter()
        try:
            result = build_site(self.options)
        except BuildFailed as failed:
            lines = [str(p) for p in failed.problems.sorted()]
            for line in lines:
                self.log(line)
            self.log(f"build failed: {len(lines)} problem(s); still serving the previous site")
            self.state.publish(lines)
            return False
        except Exception as exc:  # a crash in the build must not stop the server
            self.log(f"build crashed: {exc!r}")
            self.state.publish([f"build crashed: {exc!r}"])
            return False
        self.log(f"{result.summary()} ({(time.perf_counter() - started) * 1000:.0f} ms)")
        self.state.publish([])
        return True

    def watch(self) -> None:
        from watchfiles import watch

        for changes in watch(
            *self.watch_paths,
            stop_event=self.stopping,
            debounce=60,
            step=15,
            rust_timeout=500,
            yield_on_timeout=False,
            raise_interrupt=False,
        ):
            names = sorted({Path(p).name for _, p in changes})
            self.log(f"changed: {', '.join(names[:5])}{' …' if len(names) > 5 else ''}")
            self.rebuild()

    def start(self) -> DevServer:
        self.options.out_dir.mkdir(parents=True, exist_ok=True)
        # the watcher starts first, so an edit made during (or right after) the first build is not missed
        for target in (self.watch, self.httpd.serve_forever):
            thread = threading.Thread(target=target, daemon=True)
            thread.start()
            self.threads.append(thread)
        self.rebuild()
        return self

    def stop(self) -> None:
        self.stopping.set()
        with self.state.changed:
            self.state.changed.notify_all()
        self.httpd.shutdown()
        self.httpd.server_close()
        for thread in self.threads:
            thread.join(timeout=5)

    def serve_forever(self) -> None:
        self.start()
        self.log(
            f"serving {self.options.out_dir} at {self.url} — watching "
            f"{', '.join(str(p) for p in self.watch_paths)} (Ctrl+C to stop)"
        )
        try:
            while not self.stopping.wait(1):
                pass
        except KeyboardInterrupt:
            pass
        finally:
            self.stop()
