"""A headless Chromium driven through chromedriver's W3C WebDriver HTTP API (plain urllib, no client library): open a
page, run a script, find elements, send keys, take a screenshot. For the web view's browser test."""

from __future__ import annotations

import base64
import contextlib
import io
import json
import shutil
import socket
import urllib.error
import urllib.request
from typing import Any

from ros_harness import NodeProcess, wait_for

ELEMENT = "element-6066-11e4-a52e-4f735466cecf"
KEYS = {"end": "\ue010", "home": "\ue011", "right": "\ue014", "left": "\ue012"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def chromium_problem() -> str | None:
    """Why no browser test can run here (None: chromium and chromedriver are installed)."""
    missing = [name for name in ("chromium", "chromedriver") if shutil.which(name) is None]
    if missing:
        return (f"{' and '.join(missing)} not installed (Debian packages chromium, chromium-driver; `make setup` "
                "installs them when it runs as root)")
    return None


class Browser:
    """One chromedriver process and one headless session; ``close`` ends both."""

    def __init__(self, width: int = 800, height: int = 600) -> None:
        self.port = free_port()
        self.driver = NodeProcess([shutil.which("chromedriver") or "chromedriver", f"--port={self.port}"],
                                  name="chromedriver")
        self.base = f"http://127.0.0.1:{self.port}"
        self.session = ""
        # A renderer busy with software WebGL on a loaded machine answers late: scripts and page loads get minutes
        # (chromedriver's defaults: 30 s, 300 s), and each call's own HTTP timeout is longer still.
        caps = {"capabilities": {"alwaysMatch": {"browserName": "chrome", "timeouts": {
            "script": 150_000, "pageLoad": 150_000, "implicit": 0}, "goog:chromeOptions": {
            "binary": shutil.which("chromium"),
            "args": ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--enable-unsafe-swiftshader",
                     "--use-angle=swiftshader", "--ignore-gpu-blocklist", f"--window-size={width},{height}"]}}}}
        try:
            wait_for(self._ready, 60, "chromedriver to answer")
            self.session = self._call("POST", "/session", caps)["sessionId"]
        except BaseException:
            self.driver.stop()  # no chromedriver (nor a Chromium it started) outlives a failed start
            raise

    def _ready(self) -> bool:
        try:
            return bool(self._call("GET", "/status").get("ready"))
        except (OSError, urllib.error.URLError):
            return False

    def _call(self, method: str, path: str, body: Any = None, timeout: float = 180.0) -> Any:
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.base + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=timeout) as resp:
                return json.loads(resp.read() or b"{}").get("value", {})
        except urllib.error.HTTPError as exc:
            raise RuntimeError(f"WebDriver {method} {path}: {exc.code} {exc.read()[:500]!r}") from None

    def _s(self, path: str) -> str:
        return f"/session/{self.session}{path}"

    def open(self, url: str) -> None:
        self._call("POST", self._s("/url"), {"url": url})

    def script(self, source: str, *args: Any) -> Any:
        return self._call("POST", self._s("/execute/sync"), {"script": source, "args": list(args)})

    def elements(self, css: str) -> list[str]:
        found = self._call("POST", self._s("/elements"), {"using": "css selector", "value": css})
        return [e[ELEMENT] for e in found]

    def send_keys(self, element: str, text: str) -> None:
        self._call("POST", self._s(f"/element/{element}/value"), {"text": text})

    def click(self, element: str) -> None:
        self._call("POST", self._s(f"/element/{element}/click"), {})

    @staticmethod
    def ref(element: str) -> dict[str, str]:
        """An element as a script argument."""
        return {ELEMENT: element}

    def screenshot(self, timeout: float = 120.0) -> Any:
        """The viewport as an H x W x 3 uint8 array.

        chromedriver gives the renderer a fixed 10 s to paint a screenshot (no session timeout changes it); under a
        CPU hog the software-WebGL renderer missed that once ("Timed out receiving message from renderer: 10.000").
        Such a refusal says the renderer is busy, not that the page is wrong: ask again until ``timeout``."""
        import time

        import numpy as np
        from PIL import Image

        deadline = time.monotonic() + timeout
        while True:
            try:
                png = base64.b64decode(self._call("GET", self._s("/screenshot")))
                return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))
            except RuntimeError as exc:
                if "Timed out receiving message from renderer" not in str(exc) or time.monotonic() > deadline:
                    raise

    def close(self) -> None:
        """End the session (Chromium quits), then chromedriver; its process group goes with it, so a Chromium
        that did not quit is killed too."""
        if self.session:
            with contextlib.suppress(OSError, RuntimeError, urllib.error.URLError):
                self._call("DELETE", self._s(""), timeout=20)
        self.driver.stop()
