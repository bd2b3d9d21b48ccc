#!/usr/bin/env python3
"""gtap flame's SVG and HTML in a real browser: headless Chromium loads each
file from disk (no network), and this script drives it through the DevTools
protocol over a pipe. SVG: it checks the labels drawn, hovers a frame and
reads the details line, clicks a frame and checks the zoom, clicks reset,
types a search into the page's own box and checks the share it reports.
HTML: the same graph under a heatmap of a run that spans seconds; it drags
across the first second's cells and checks the graph is that of the launches
in that second (as `gtap flame --to=1` counts them), then zooms and searches.
Screenshots of each step are kept in OUT_DIR.

usage: flame_in_browser.py CHROMIUM GTAP WORKLOAD OUT_DIR
"""
import base64
import json
import os
import subprocess
import sys
import tempfile


class Browser:
    """Chromium with --remote-debugging-pipe: commands on its fd 3, answers on
    its fd 4, each message JSON ended by a NUL byte."""

    def __init__(self, chromium, profile):
        to_child_r, self.to_child = os.pipe()
        self.from_child, from_child_w = os.pipe()

        # The pipes are made close-on-exec; their copies at 3 and 4 are not,
        # and nothing else is closed (close_fds would close those too).
        def fds():
            read, write = os.dup(to_child_r), os.dup(from_child_w)  # neither is 3 or 4 now
            os.dup2(read, 3)
            os.dup2(write, 4)

        self.proc = subprocess.Popen(
            [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--remote-debugging-pipe",
             "--no-first-run", "--user-data-dir=" + profile, "--window-size=1300,900", "about:blank"],
            preexec_fn=fds, close_fds=False, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL)
        os.close(to_child_r)
        os.close(from_child_w)
        self.next_id = 0
        self.buffer = b""
        self.session = None

    def send(self, method, params=None, session=True):
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params or {}}
        if session and self.session:
            message["sessionId"] = self.session
        os.write(self.to_child, json.dumps(message).encode() + b"\0")
        while True:
            reply = self.receive()
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(method + ": " + json.dumps(reply["error"]))
                return reply.get("result", {})

    def receive(self):
        while b"\0" not in self.buffer:
            chunk = os.read(self.from_child, 65536)
            if not chunk:
                raise RuntimeError("chromium closed its pipe")
            self.buffer += chunk
        message, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(message)

    def open(self, url, ready=None):
        ready = ready or ("document.readyState === 'complete' && "
                          "document.querySelectorAll('g.f text').length > 0 && "
                          "Array.prototype.some.call(document.querySelectorAll('g.f text'), "
                          "function (t) { return t.textContent !== ''; })")
        target = self.send("Target.createTarget", {"url": "about:blank"}, session=False)["targetId"]
        self.session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True},
                                 session=False)["sessionId"]
        self.send("Page.enable")
        self.send("Runtime.enable")
        self.send("Page.navigate", {"url": url})
        # Loaded once the script has laid the frames out (labels drawn).
        for _ in range(200):
            if self.evaluate(ready):
                return
            self.send("Runtime.evaluate", {"expression": "new Promise(r => setTimeout(r, 50))",
                                           "awaitPromise": True})
        raise RuntimeError(url + " never laid its frames out")

    def evaluate(self, expression):
        result = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True})
        if "exceptionDetails" in result:
            raise RuntimeError(expression + ": " + json.dumps(result["exceptionDetails"]))
        return result["result"].get("value")

    def centre(self, selector):
        box = self.evaluate("(function () { var r = document.querySelector(%s).getBoundingClientRect();"
                            " return [r.left + r.width / 2, r.top + r.height / 2]; })()" % json.dumps(selector))
        return box

    def mouse(self, kind, x, y):
        params = {"type": kind, "x": x, "y": y}
        if kind in ("mousePressed", "mouseReleased"):
            params.update({"button": "left", "clickCount": 1})
        self.send("Input.dispatchMouseEvent", params)

    def click(self, selector):
        x, y = self.centre(selector)
        self.mouse("mouseMoved", x, y)
        self.mouse("mousePressed", x, y)
        self.mouse("mouseReleased", x, y)

    def screenshot(self, path):
        data = self.send("Page.captureScreenshot", {"format": "png"})["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))

    def close(self):
        try:
            self.send("Browser.close", session=False)
        except RuntimeError:
            pass
        self.proc.wait(timeout=30)


failures = []


def check(condition, what):
    if not condition:
        failures.append(what)
        print("FAILED: " + what)


def main():
    chromium, gtap, workload, out_dir = sys.argv[1:5]
    os.makedirs(out_dir, exist_ok=True)
    work = tempfile.mkdtemp(prefix="gtap-flame-browser-")
    capture = os.path.join(work, "cap.gtap")
    subprocess.run([gtap, "run", "--sim", "-q", "-m", "api,kernels,stacks", "-o", capture, "--", workload, "3"],
                   check=True, stdout=subprocess.DEVNULL)
    svg = os.path.join(work, "flame.svg")
    subprocess.run([gtap, "flame", capture, "-o", svg, "--weight=count"], check=True)
    folded = subprocess.run([gtap, "flame", capture, "-o", "-", "--weight=count"], check=True,
                            capture_output=True, text=True).stdout
    lines = {}
    for line in folded.splitlines():
        path, value = line.rsplit(" ", 1)
        lines[path] = int(value)
    total = sum(lines.values())

    browser = Browser(chromium, os.path.join(work, "profile"))
    try:
        browser.open("file://" + svg)
        browser.screenshot(os.path.join(out_dir, "flame-loaded.png"))
        # Drawn: every frame, the wide ones labelled with their names.
        drawn = browser.evaluate("document.querySelectorAll('g.f').length")
        check(drawn > 0, "frames drawn")
        root = browser.evaluate("document.querySelector('g.f[data-name=\"main\"] text').textContent")
        check(root == "main", "the main frame is labelled main (got %r)" % root)

        # Hover: the details line names the frame, its kind and its share.
        selector = 'g.f[data-name^="fromPathB"]'
        x, y = browser.centre(selector + " rect")
        browser.mouse("mouseMoved", x, y)
        details = browser.evaluate("document.getElementById('details').textContent")
        path_b = [p for p in lines if ";fromPathB(" in p][0]
        share = 100.0 * lines[path_b] / total
        check(details.startswith("fromPathB(") and "program" in details and ("%.2f%%" % share) in details,
              "hover shows fromPathB's details with its share %.2f%% (got %r)" % (share, details))

        # Click: fromPathB fills the width, what is not under it hides, main
        # (its parent) stays as a full-width bar, reset appears.
        browser.click(selector + " rect")
        browser.screenshot(os.path.join(out_dir, "flame-zoomed.png"))
        width = browser.evaluate("+document.querySelector('%s rect').getAttribute('width')" % selector)
        check(abs(width - 1200) < 0.01, "the zoomed frame is 1200 px wide (got %s)" % width)
        hidden = browser.evaluate("document.querySelector('g.f[data-name^=\"fromPathA\"]').style.display")
        check(hidden == "none", "a frame beside the zoomed one is hidden (got %r)" % hidden)
        parent = browser.evaluate("document.querySelector('g.f[data-name=\"main\"]').classList.contains('parent')")
        check(parent is True, "main is shown as the zoomed frame's parent")
        reset_shown = browser.evaluate("document.getElementById('reset').style.display")
        check(reset_shown == "", "reset zoom is offered")
        browser.click("#reset")
        width = browser.evaluate("+document.querySelector('g.f[data-name=\"main\"] rect').getAttribute('width')")
        expected_main = 1200.0 * sum(v for p, v in lines.items() if p.startswith("main;")) / total
        check(abs(width - expected_main) < 0.02, "reset: main is %.2f px again (got %s)" % (expected_main, width))

        # Search, typed into the page's box: the launches from recurse, and
        # the share they hold (each counted once, though recurse nests).
        browser.click("#search")
        browser.send("Input.insertText", {"text": "recurse"})
        browser.screenshot(os.path.join(out_dir, "flame-search.png"))
        matched = browser.evaluate("document.getElementById('matched').textContent")
        recursion = sum(v for p, v in lines.items() if ";recurse(" in p)
        want = "Matched: %.2f%% (4 frames)" % (100.0 * recursion / total)
        check(matched == want, "search reports %r (got %r)" % (want, matched))
        highlighted = browser.evaluate("document.querySelectorAll('g.f.match').length")
        check(highlighted == 4, "four recurse frames highlighted (got %s)" % highlighted)
        html_checks(browser, gtap, workload, work, out_dir)
    finally:
        browser.close()
    if failures:
        print("%d check(s) failed" % len(failures))
        return 1
    print("all checks passed; screenshots in " + out_dir)
    return 0


def counted(gtap, capture, *options):
    text = subprocess.run([gtap, "flame", capture, "-o", "-", "--weight=count"] + list(options), check=True,
                          capture_output=True, text=True).stdout
    return {line.rsplit(" ", 1)[0]: int(line.rsplit(" ", 1)[1]) for line in text.splitlines()}


def html_checks(browser, gtap, workload, work, out_dir):
    # Five rounds 400 ms apart: launches in the first, second and third second.
    capture = os.path.join(work, "spread.gtap")
    subprocess.run([gtap, "run", "--sim", "-q", "-m", "api,kernels,stacks", "-o", capture, "--", workload, "5", "3",
                    "400"], check=True, stdout=subprocess.DEVNULL)
    page = os.path.join(work, "flame.html")
    subprocess.run([gtap, "flame", capture, "-o", page, "--weight=count"], check=True)
    everything = counted(gtap, capture)
    first_second = counted(gtap, capture, "--to=1")
    total, early = sum(everything.values()), sum(first_second.values())
    check(0 < early < total, "the run spans more than its first second (%d of %d launches in it)" % (early, total))
    browser.open("file://" + page, "document.body && document.body.getAttribute('data-ready') === '1'")
    browser.screenshot(os.path.join(out_dir, "flame-html-loaded.png"))
    selected = browser.evaluate("+document.getElementById('selection').getAttribute('data-total')")
    check(selected == total, "the whole run is selected at first: %d (got %s)" % (total, selected))
    # Drag down the first column: the first second.
    box = browser.evaluate("(function () { var r = document.getElementById('heat').getBoundingClientRect();"
                           " return [r.left, r.top, r.height]; })()")
    left, top, height = box
    browser.mouse("mouseMoved", left + 2, top + 1)
    browser.mouse("mousePressed", left + 2, top + 1)
    browser.mouse("mouseMoved", left + 2, top + height / 2)
    browser.mouse("mouseMoved", left + 2, top + height - 1)
    browser.mouse("mouseReleased", left + 2, top + height - 1)
    browser.screenshot(os.path.join(out_dir, "flame-html-first-second.png"))
    text = browser.evaluate("document.getElementById('selection').textContent")
    selected = browser.evaluate("+document.getElementById('selection').getAttribute('data-total')")
    check(selected == early and text.startswith("Selection: 0.00 s to 1.00 s"),
          "the first second holds %d launches (got %s, %r)" % (early, selected, text))
    main_value = browser.evaluate("+document.querySelector('.f[data-name=\"main\"]').getAttribute('data-value')")
    want_main = sum(v for p, v in first_second.items() if p.startswith("main;"))
    check(main_value == want_main, "main holds %d of them (got %s)" % (want_main, main_value))
    # Zoom into fromPathA within the selection; then search.
    browser.click('.f[data-name^="fromPathA"]')
    width = browser.evaluate("document.querySelector('.f[data-name^=\"fromPathA\"]').getBoundingClientRect().width")
    check(abs(width - 1200) < 0.5, "the zoomed frame fills the width (got %s)" % width)
    browser.click("#reset")
    browser.click("#search")
    browser.send("Input.insertText", {"text": "workerThread"})
    matched = browser.evaluate("document.getElementById('matched').textContent")
    worker = sum(v for p, v in first_second.items() if "workerThread" in p)
    want = "Matched: %.2f%% (1 frame)" % (100.0 * worker / early)
    check(matched == want, "search in the selection reports %r (got %r)" % (want, matched))
    browser.screenshot(os.path.join(out_dir, "flame-html-search.png"))

    # A long run keeps a thousand columns or fewer: the same page with one
    # more leaf weight 2,500 s in has a column per 3 seconds, and a cell
    # covers three slices.
    with open(page) as f:
        text = f.read()
    at = text.index('"slices":[') + len('"slices":[')
    leaf = text[at:].split("]", 1)[0].split(",")[0].lstrip("[")
    long_page = os.path.join(work, "long.html")
    with open(long_page, "w") as f:
        f.write(text[:at] + "[" + leaf + ",125000,1]," + text[at:])
    browser.open("file://" + long_page, "document.body && document.body.getAttribute('data-ready') === '1'")
    unit = browser.evaluate("document.getElementById('heatunit').textContent")
    check(unit.startswith("a column per 3 seconds of the run"), "a long run's heatmap unit (got %r)" % unit)
    width = browser.evaluate("document.getElementById('heat').width")
    check(width <= 1000 * 4, "a long run's heatmap is %s px wide" % width)
    total_long = browser.evaluate("+document.getElementById('selection').getAttribute('data-total')")
    check(total_long == total + 1, "the far leaf counts in the whole run (got %s)" % total_long)


if __name__ == "__main__":
    sys.exit(main())
