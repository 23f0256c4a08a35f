#!/usr/bin/env python3
"""Drives the web page of `s2s serve` in headless Chromium through chromedriver.

    browser.py URL SENTENCE LIVE_SENTENCE

Starts /usr/bin/chromedriver on a free port and speaks the W3C WebDriver protocol to
it over HTTP (standard library only). Two checks, each on a freshly loaded page:

1. the button: unticks "translate as I type" (#live), types SENTENCE into #source,
   checks that nothing is translated before the click, clicks #go and waits for
   #translation's data-done;
2. translation as one types: checks that #live is ticked, types LIVE_SENTENCE and
   waits, without clicking, for a translation that no later one replaces.

Prints one JSON line: {"translation": TEXT, "alternatives": N, "heatmap": BOOL,
"heatmap_width": W, "live_translation": TEXT, "live_alternatives": N}, where TEXT is
#translation's text, N the number of items of #alternatives, BOOL whether #heatmap
holds an img whose src starts with data:image/svg+xml and W that image's width once
decoded. On a failure it prints one line "browser.py: MESSAGE" on stderr and exits 1.
Every wait is bounded; the whole run ends after --timeout seconds (default 50) at
most, and the browser session and chromedriver are always ended.
"""

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
ELEMENT = "element-6066-11e4-a52e-4f735466cecf"  # the key of an element reference


class Failure(Exception):
    pass


def on_alarm(signum, frame):
    raise Failure("timed out")


# Requests to chromedriver never go through a proxy named in the environment.
OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def free_port():
    """A port that nothing listens on now (the kernel's choice for port 0)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Driver:
    """A chromedriver process and, once started, one browser session of it."""

    def __init__(self, workdir):
        self.port = free_port()
        self.base = "http://127.0.0.1:%d" % self.port
        self.session = None
        self.log_path = os.path.join(workdir, "chromedriver.log")
        self.log = open(self.log_path, "wb")
        # A process group of its own, so that the browser it starts is ended with it.
        self.proc = subprocess.Popen(
            [CHROMEDRIVER, "--port=%d" % self.port],
            stdin=subprocess.DEVNULL, stdout=self.log, stderr=subprocess.STDOUT,
            start_new_session=True)

    def call(self, method, path, body=None, timeout=30):
        """One WebDriver command: the "value" of its answer; raises Failure on an error."""
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.base + path, data=data, method=method,
                                     headers={"Content-Type": "application/json; charset=utf-8"})
        try:
            with OPENER.open(req, timeout=timeout) as res:
                answer = json.loads(res.read().decode())
        except urllib.error.HTTPError as e:
            try:
                value = json.loads(e.read().decode()).get("value", {})
                message = "%s: %s" % (value.get("error"), value.get("message", "").splitlines()[0])
            except (ValueError, AttributeError, IndexError):
                message = "HTTP %d" % e.code
            raise Failure("%s %s: %s" % (method, path, message))
        except (urllib.error.URLError, OSError) as e:
            raise Failure("%s %s: %s" % (method, path, e))
        return answer.get("value")

    def wait_ready(self, seconds):
        """Waits until chromedriver answers /status with ready."""
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            if self.proc.poll() is not None:
                raise Failure("chromedriver exited (status %d)" % self.proc.returncode)
            try:
                if self.call("GET", "/status", timeout=2).get("ready"):
                    return
            except Failure:
                pass
            time.sleep(0.1)
        raise Failure("chromedriver did not become ready within %d s" % seconds)

    def start_session(self, profile):
        caps = {
            "browserName": "chrome",
            "goog:chromeOptions": {
                "binary": CHROMIUM,
                "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                         "--no-proxy-server", "--no-first-run", "--user-data-dir=" + profile,
                         "--window-size=1200,900"],
            },
        }
        value = self.call("POST", "/session", {"capabilities": {"alwaysMatch": caps}}, timeout=40)
        self.session = value["sessionId"]
        # Finding an element waits for it at most 5 s; a page load at most 20 s.
        self.cmd("POST", "/timeouts", {"implicit": 5000, "pageLoad": 20000, "script": 10000})

    def cmd(self, method, path, body=None, timeout=30):
        return self.call(method, "/session/%s%s" % (self.session, path), body, timeout)

    def find(self, css):
        return self.cmd("POST", "/element", {"using": "css selector", "value": css})[ELEMENT]

    def count(self, css):
        return len(self.cmd("POST", "/elements", {"using": "css selector", "value": css}))

    def script(self, js, *args):
        return self.cmd("POST", "/execute/sync", {"script": js, "args": list(args)})

    def text(self, element):
        return self.cmd("GET", "/element/%s/text" % element)

    def attribute(self, element, name):
        return self.cmd("GET", "/element/%s/attribute/%s" % (element, name))

    def close(self):
        """Ends the session (which closes the browser), then chromedriver and its group."""
        if self.session:
            try:
                self.cmd("DELETE", "", timeout=10)
            except Failure:
                pass
            self.session = None
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
                self.proc.wait(timeout=5)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                pass
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        if self.proc.poll() is None:
            self.proc.wait(timeout=5)
        self.log.close()


def wait_for(what, seconds, probe):
    """Calls probe every 100 ms until it returns something other than None or False."""
    end = time.monotonic() + seconds
    while True:
        value = probe()
        if value is not None and value is not False:
            return value
        if time.monotonic() >= end:
            raise Failure("%s: not within %d s" % (what, seconds))
        time.sleep(0.1)


def open_page(d, url):
    """Loads the page and waits until it has read /languages (body's data-ready)."""
    d.cmd("POST", "/url", {"url": url})
    if not d.script("return document.getElementById('source') !== null"):
        raise Failure("%s is not the page of s2s serve (title %r)" % (url, d.cmd("GET", "/title")))

    def ready():
        mark, status = d.script("return [document.body.dataset.ready || null,"
                                " document.getElementById('status').textContent]")
        if status:
            raise Failure("the page says: " + status)
        return mark == "1"

    wait_for("the page's data-ready", 20, ready)


def done_mark(d):
    """#translation's data-done (None when unset); raises Failure when #status shows an error."""
    mark, status = d.script("return [document.getElementById('translation').dataset.done || null,"
                            " document.getElementById('status').textContent]")
    if status:
        raise Failure("the page says: " + status)
    return mark


def page_state(d):
    """What the page shows: the translation, the alternatives, the heatmap."""
    src = d.script("const i = document.querySelector('#heatmap img');"
                   "return i ? (i.getAttribute('src') || '').slice(0, 64) : null;")
    heatmap = src is not None and src.startswith("data:image/svg+xml")
    width = 0
    if heatmap:
        # The image is decoded after it is added to the page; wait for that (a src
        # that does not decode ends complete with a width of 0).
        width = wait_for("the heatmap image's decoding", 10,
                         lambda: d.script("const i = document.querySelector('#heatmap img');"
                                          "return i.complete ? i.naturalWidth : null;"))
    return d.text(d.find("#translation")), d.count("#alternatives li"), heatmap, width


def check_button(d, url, sentence):
    """Check 1: with #live unticked, nothing happens on typing; the button translates."""
    open_page(d, url)
    live = d.find("#live")
    if d.cmd("GET", "/element/%s/selected" % live):
        d.cmd("POST", "/element/%s/click" % live, {})
    if d.cmd("GET", "/element/%s/selected" % live):
        raise Failure("#live is still ticked after a click")
    source = d.find("#source")
    d.cmd("POST", "/element/%s/value" % source, {"text": sentence})
    time.sleep(0.8)  # longer than the page's 300 ms pause before translating as one types
    if done_mark(d) is not None or d.text(d.find("#translation")):
        raise Failure("the page translated on typing with #live unticked")
    d.cmd("POST", "/element/%s/click" % d.find("#go"), {})
    wait_for("#translation's data-done after the click", 30, lambda: done_mark(d))
    return page_state(d)


def check_live(d, url, sentence):
    """Check 2: with #live ticked (the default), typing alone translates.

    The page translates 300 ms after the last keystroke; a pause between keystrokes
    could translate a part of the sentence first. So the answer is taken once
    data-done has been set and then kept its value for 1.5 s, at least 1 s after
    the typing ended (a translation that a later one replaces changes data-done)."""
    open_page(d, url)
    if not d.cmd("GET", "/element/%s/selected" % d.find("#live")):
        raise Failure("#live is not ticked on a fresh page")
    d.cmd("POST", "/element/%s/value" % d.find("#source"), {"text": sentence})
    typed = time.monotonic()
    seen = [None, 0.0]  # the last data-done value and when it was first seen

    def settled():
        mark = done_mark(d)
        now = time.monotonic()
        if mark != seen[0]:
            seen[0], seen[1] = mark, now
            return None
        return mark is not None and now - seen[1] >= 1.5 and now - typed >= 1.0

    wait_for("a translation while typing (#translation's data-done)", 30, settled)
    return page_state(d)


def main():
    ap = argparse.ArgumentParser(description="Checks the web page of s2s serve in headless Chromium.")
    ap.add_argument("url", help="the server's address, e.g. http://127.0.0.1:5000/")
    ap.add_argument("sentence", help="the text to translate with the button")
    ap.add_argument("live_sentence", help="the text to translate as one types")
    ap.add_argument("--timeout", type=int, default=50, help="seconds for the whole run (default 50)")
    args = ap.parse_args()
    for prog in (CHROMIUM, CHROMEDRIVER):
        if not os.access(prog, os.X_OK):
            print("browser.py: %s is not installed (apt-get install chromium chromium-driver)" % prog,
                  file=sys.stderr)
            return 1
    signal.signal(signal.SIGALRM, on_alarm)
    with tempfile.TemporaryDirectory(prefix="s2s-browser-", ignore_cleanup_errors=True) as workdir:
        d = Driver(workdir)
        try:
            signal.alarm(args.timeout)
            d.wait_ready(20)
            d.start_session(os.path.join(workdir, "profile"))
            text, alts, heatmap, width = check_button(d, args.url, args.sentence)
            live_text, live_alts, _, _ = check_live(d, args.url, args.live_sentence)
            signal.alarm(0)
        except (Failure, KeyError, TypeError, ValueError) as e:
            signal.alarm(0)
            print("browser.py: %s" % " ".join(str(e).split()), file=sys.stderr)
            return 1
        finally:
            signal.alarm(0)
            d.close()
    print(json.dumps({"translation": text, "alternatives": alts, "heatmap": heatmap, "heatmap_width": width,
                      "live_translation": live_text, "live_alternatives": live_alts}, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
