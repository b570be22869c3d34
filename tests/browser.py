"""Open an HTML file in headless Chromium (Debian's ``chromium``) through the DevTools protocol and
report what happened: the plot divs and whether each rendered (holds a ``.main-svg``), console
errors and exceptions, every network request, and a screenshot of the whole page."""

from __future__ import annotations

import base64
import json
import re
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import websocket  # websocket-client

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--enable-unsafe-swiftshader",
    "--remote-debugging-port=0",
    "--window-size=1200,900",
]


@dataclass
class PageReport:
    plots: int = 0
    rendered: int = 0
    errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)
    screenshot: bytes = b""


class _Session:
    def __init__(self, url: str) -> None:
        self.ws = websocket.create_connection(url, timeout=60, suppress_origin=True)
        self.next_id = 0
        self.events: list[dict] = []

    def call(self, method: str, **params: object) -> dict:
        self.next_id += 1
        my_id = self.next_id
        self.ws.send(json.dumps({"id": my_id, "method": method, "params": params}))
        while True:
            message = json.loads(self.ws.recv())
            if message.get("id") == my_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})
            self.events.append(message)

    def drain(self, seconds: float) -> None:
        self.ws.settimeout(seconds)
        try:
            while True:
                self.events.append(json.loads(self.ws.recv()))
        except websocket.WebSocketTimeoutException:
            pass
        finally:
            self.ws.settimeout(60)


def open_page(path: Path, timeout_s: float = 60.0) -> PageReport:
    """Load ``path`` (a local HTML file) and wait until every plot div rendered or ``timeout_s``."""
    profile = tempfile.mkdtemp(prefix="tcplab-chromium-")
    proc = subprocess.Popen([CHROMIUM, *FLAGS, f"--user-data-dir={profile}", "about:blank"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        browser_url = None
        deadline = time.monotonic() + 30
        while browser_url is None and time.monotonic() < deadline:
            line = proc.stderr.readline() if proc.stderr else ""
            m = re.search(r"DevTools listening on (ws://\S+)", line)
            if m:
                browser_url = m.group(1)
            elif not line and proc.poll() is not None:
                break
        if browser_url is None:
            raise RuntimeError("chromium did not start its DevTools endpoint")
        browser = _Session(browser_url)
        target = browser.call("Target.createTarget", url="about:blank")["targetId"]
        page_url = browser_url.split("/devtools/")[0] + f"/devtools/page/{target}"
        page = _Session(page_url)
        for domain in ("Page", "Runtime", "Log", "Network"):
            page.call(f"{domain}.enable")
        page.call("Emulation.setDeviceMetricsOverride", width=1200, height=900, deviceScaleFactor=1, mobile=False)
        page.call("Page.navigate", url=path.resolve().as_uri())
        report = PageReport()
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            page.drain(0.5)
            state = page.call(
                "Runtime.evaluate",
                expression="JSON.stringify([document.readyState, document.querySelectorAll('.plotly-graph-div').length,"
                " Array.from(document.querySelectorAll('.plotly-graph-div')).filter(d => d.querySelector('.main-svg')).length])",
                returnByValue=True,
            )
            ready, report.plots, report.rendered = json.loads(state["result"]["value"])
            if ready == "complete" and report.plots and report.rendered == report.plots:
                break
        page.drain(1.0)
        height = page.call("Runtime.evaluate", expression="document.documentElement.scrollHeight", returnByValue=True)["result"]["value"]
        page.call("Emulation.setDeviceMetricsOverride", width=1200, height=int(height), deviceScaleFactor=1, mobile=False)
        page.drain(1.0)
        report.screenshot = base64.b64decode(page.call("Page.captureScreenshot", format="png")["data"])
        for event in page.events:
            method, params = event.get("method"), event.get("params", {})
            if method == "Runtime.exceptionThrown":
                report.errors.append(str(params.get("exceptionDetails", {}).get("exception", {}).get("description") or params))
            elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
                report.errors.append(" ".join(str(a.get("value", a.get("description", ""))) for a in params.get("args", [])))
            elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
                report.errors.append(str(params["entry"].get("text")))
            elif method == "Network.requestWillBeSent":
                url = params.get("request", {}).get("url", "")
                if not url.startswith(("file:", "data:", "about:")):
                    report.requests.append(url)
        page.ws.close()
        browser.ws.close()
        return report
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        shutil.rmtree(profile, ignore_errors=True)


def page_markup(text: str) -> str:
    """An HTML report without its inlined plotly.js (the one script holding ``plotly.js v``): the
    report's own markup, styles and figure data. The library's code names URLs it never loads for
    these figures (map tiles, links in its messages); Chromium's request log checks that."""
    start = text.find("plotly.js v")
    if start < 0:
        return text
    opening = text.rfind("<script", 0, start)
    closing = text.find("</script>", start)
    return text[:opening] + text[closing + len("</script>") :]


def assert_self_contained(text: str) -> None:
    """An HTML report that fetches nothing: plotly.js inlined, no http(s) reference in its own
    markup, no external script, style sheet, image or frame."""
    assert "Plotly.newPlot" in text and text.count("plotly.js v") >= 1
    own = page_markup(text)
    assert len(own) < len(text) // 2  # the library was the bulk of the file
    assert not re.search(r"https?:", own, re.I), re.search(r".{60}https?:.{60}", own, re.I | re.S)
    assert not re.search(r"<(script|link|img|iframe)[^>]+(src|href)\s*=", own, re.I)
