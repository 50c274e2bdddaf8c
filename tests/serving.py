"""Helpers of the serving tests: a copied release root, a real uvicorn server in a thread, and
headless Chromium driven over the DevTools protocol (Debian's `chromium`, no downloaded browser)."""

from __future__ import annotations

import base64
import http.client
import json
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from pathlib import Path

from mathindex.store.integrity import write_json
from mathindex.store.layout import MANIFEST, PUBLISHED


def copy_root(src: Path, dst: Path) -> Path:
    """A copy of a release root's releases, models and published.json (not its caches)."""
    dst.mkdir(parents=True, exist_ok=True)
    for name in ("releases", "models"):
        if (src / name).is_dir():
            shutil.copytree(src / name, dst / name)
    shutil.copy2(src / PUBLISHED, dst / PUBLISHED)
    return dst


def clone_release(root: Path, release_id: str, new_id: str, corrupt: str | None = None,
                  without: str | None = None) -> Path:
    """releases/<new_id>: a copy of <release_id> under a new id (its manifest says so); `corrupt`
    names a file whose first byte is flipped afterwards (the manifest's sha256 then disagrees);
    `without` names a top-level directory left out, and out of the manifest (a release built before
    that stage: `premises`)."""
    src, dst = root / "releases" / release_id, root / "releases" / new_id
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns(MANIFEST, *([without] if without else [])))
    manifest = json.loads((src / MANIFEST).read_text(encoding="utf-8"))
    manifest["release_id"], manifest["previous_release"] = new_id, release_id
    if without:
        for key in ("files", "sizes"):
            manifest[key] = {f: v for f, v in (manifest.get(key) or {}).items() if not f.startswith(without + "/")}
        manifest.pop(without, None)
    if corrupt:
        path = dst / corrupt
        data = bytearray(path.read_bytes())
        data[0] ^= 0xFF
        path.write_bytes(bytes(data))
    write_json(dst / MANIFEST, manifest)
    return dst


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ServerThread:
    """uvicorn serving `app` on 127.0.0.1 in a daemon thread, for as long as the `with` block."""

    def __init__(self, app):
        import uvicorn

        from mathindex.serve.app import http_stack

        self.port = free_port()
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning",
                                                    access_log=False, **http_stack()))  # as `mathindex serve` runs
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> ServerThread:  # noqa: PYI034
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.05)
        return self

    def __exit__(self, *exc) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=15)


def get_json(port: int, path: str, timeout_s: float = 30) -> tuple[int, dict]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout_s)
    try:
        conn.request("GET", path)
        r = conn.getresponse()
        return r.status, json.loads(r.read())
    finally:
        conn.close()


def chromium_binary() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")


class Chromium:
    """A headless Chromium page driven over the DevTools protocol (websockets, no other driver)."""

    def __init__(self, binary: str, width: int = 1200, height: int = 900):
        self.profile = tempfile.mkdtemp(prefix="mathindex-chromium-")
        self.proc = subprocess.Popen(
            [binary, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
             "--no-default-browser-check", "--disable-extensions", "--remote-debugging-port=0",
             f"--user-data-dir={self.profile}", f"--window-size={width},{height}", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.port = self._devtools_port()
        page = next(t for t in self._targets() if t["type"] == "page")
        from websockets.sync.client import connect

        self.ws = connect(page["webSocketDebuggerUrl"], max_size=None, open_timeout=30)
        self._id = 0

    def _devtools_port(self, timeout_s: float = 30) -> int:
        marker = Path(self.profile) / "DevToolsActivePort"
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"chromium exited with {self.proc.returncode}")
            if marker.is_file() and marker.read_text().strip():
                return int(marker.read_text().split()[0])
            time.sleep(0.1)
        raise RuntimeError("chromium did not open its DevTools port")

    def _targets(self) -> list[dict]:
        deadline = time.monotonic() + 15
        while True:
            try:
                conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
                conn.request("GET", "/json/list")
                targets = json.loads(conn.getresponse().read())
                if any(t["type"] == "page" for t in targets):
                    return targets
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("chromium has no page target")
            time.sleep(0.1)

    def call(self, method: str, **params) -> dict:
        self._id += 1
        self.ws.send(json.dumps({"id": self._id, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv(timeout=30))
            if msg.get("id") == self._id:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})

    def evaluate(self, expression: str):
        r = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in r:
            raise RuntimeError(f"{expression}: {r['exceptionDetails']}")
        return r["result"].get("value")

    def wait_for(self, expression: str, timeout_s: float = 30):
        deadline = time.monotonic() + timeout_s
        while True:
            value = self.evaluate(expression)
            if value:
                return value
            if time.monotonic() > deadline:
                raise TimeoutError(f"waited {timeout_s:g} s for {expression}")
            time.sleep(0.1)

    def open(self, url: str) -> None:
        self.call("Page.enable")
        self.call("Page.navigate", url=url)
        self.wait_for("document.readyState === 'complete'")

    def type(self, text: str) -> None:
        """Key presses into the focused element, one character at a time, as a user types."""
        for ch in text:
            self.call("Input.dispatchKeyEvent", type="char", text=ch)

    def press_enter(self) -> None:
        for kind in ("rawKeyDown", "char", "keyUp"):
            self.call("Input.dispatchKeyEvent", type=kind, key="Enter", code="Enter", windowsVirtualKeyCode=13,
                      nativeVirtualKeyCode=13, **({"text": "\r"} if kind == "char" else {}))

    def screenshot(self, path: Path) -> Path:
        data = self.call("Page.captureScreenshot", format="png", captureBeyondViewport=True)["data"]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(data))
        return path

    def close(self) -> None:
        try:
            self.ws.close()
        finally:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
            shutil.rmtree(self.profile, ignore_errors=True)
