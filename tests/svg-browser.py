#!/usr/bin/env python3
"""svg-browser.py XPCORR FIXTURE_DIR - the flame graphs of a real run open in
a browser: the CPU and the GPU SVG of the H100 PyTorch fixture, each
screenshotted by headless Chromium within 10 s more than an empty drawing
takes just before (the browser's own start, slow on a loaded machine, is
not the graph's), the picture not blank (a
drawn flame graph has many colours, an empty page a few), the GPU graph's
kernels in the GPU colour; then, on a localhost page
(tests/browser/check-svg-zoom.html), the GPU graph is clicked where a person
would click a narrow frame: that frame must fill the drawing's width, and a
click on "Reset zoom" must put every frame back where it was drawn. The
screenshots stay in $XP_SVG_SHOTS when set.
Without Chromium it skips (exit 77, saying why), unless XP_REQUIRE_BROWSER=1."""
import http.server
import json
import lzma
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import threading
import time
import zlib

LIMIT_S = 10.0
ZOOM_TIMEOUT_S = 40
HERE = os.path.dirname(os.path.abspath(__file__))


def find_browser():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def png_colours(path):
    """Distinct byte values in the PNG's pixel data (a blank page has a few)."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat = 8, b""
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        if kind == b"IDAT":
            idat += data[pos + 8:pos + 8 + n]
        pos += 12 + n
    return len(set(zlib.decompress(idat)))


def shoot(browser, svg, png, profile):
    t0 = time.monotonic()
    proc = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                           "--disable-background-networking", "--disable-component-update",
                           "--no-first-run", "--user-data-dir=" + profile, "--window-size=1200,900",
                           "--screenshot=" + png, "file://" + svg],
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=60)
    return time.monotonic() - t0, proc


def serve(root, results):
    """A localhost server of root that keeps what the page POSTs."""
    done = threading.Event()

    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *a, **kw):
            super().__init__(*a, directory=root, **kw)

        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            self.send_response(204)
            self.end_headers()
            results.append(json.loads(body))
            done.set()

        def log_message(self, *a):
            pass
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd, done


def zoom_check(browser, svg, tmp):
    """Click a frame of svg and "Reset zoom" in the browser: the failures, one line each."""
    www = os.path.join(tmp, "www")
    os.mkdir(www)
    shutil.copy(svg, os.path.join(www, "graph.svg"))
    shutil.copy(os.path.join(HERE, "browser", "check-svg-zoom.html"), www)
    results = []
    httpd, done = serve(www, results)
    url = "http://127.0.0.1:%d/check-svg-zoom.html" % httpd.server_address[1]
    proc = subprocess.Popen([browser, "--headless", "--no-sandbox", "--disable-gpu",
                             "--disable-background-networking", "--disable-component-update",
                             "--disable-sync", "--no-first-run", "--window-size=1400,1000",
                             "--user-data-dir=" + os.path.join(tmp, "profile-zoom"), url],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    done.wait(ZOOM_TIMEOUT_S)
    proc.terminate()
    try:
        _, err = proc.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        _, err = proc.communicate()
    httpd.shutdown()
    if not results:
        return ["zoom: the page posted no result in %d s; chromium said:\n%s"
                % (ZOOM_TIMEOUT_S, err.decode(errors="replace")[-1500:])]
    r = results[0]
    print("zoom: %s" % json.dumps(r.get("got"), sort_keys=True))
    if not r.get("ok") and not r.get("bad"):
        return ["zoom: the page failed without saying why"]
    return ["zoom: " + b for b in r.get("bad", [])]


def main():
    xpcorr, fixture = sys.argv[1:3]
    browser = find_browser()
    if not browser:
        if os.environ.get("XP_REQUIRE_BROWSER") == "1":
            print("FAIL chromium not found and XP_REQUIRE_BROWSER=1 (apt-get install chromium)")
            return 1
        print("SKIP chromium not found (apt-get install chromium; XP_REQUIRE_BROWSER=1 makes this fail)")
        return 77
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        db = os.path.join(tmp, "run.db")
        with lzma.open(os.path.join(fixture, "device.db.xz")) as src, open(db, "wb") as dst:
            shutil.copyfileobj(src, dst)
        for weight in ("cpu", "gpu"):
            svg = os.path.join(tmp, weight + ".svg")
            png = os.path.join(tmp, weight + ".png")
            subprocess.run([xpcorr, "export", "--format", "svg", "--weight", weight, "-o", svg, db],
                           check=True, stderr=subprocess.DEVNULL)
            text = open(svg).read()
            frames = text.count('<g class="f"')
            empty = os.path.join(tmp, "empty.svg")
            with open(empty, "w") as f:
                f.write('<svg xmlns="http://www.w3.org/2000/svg" width="1200" height="900"/>\n')
            base, _ = shoot(browser, empty, os.path.join(tmp, "empty.png"),
                            os.path.join(tmp, "profile-empty-" + weight))
            secs, proc = shoot(browser, svg, png, os.path.join(tmp, "profile-" + weight))
            colours = png_colours(png) if os.path.exists(png) else 0
            size = os.path.getsize(svg)
            print("%s: %.2f MB, %d frames, screenshot in %.1f s (an empty drawing's %.1f s),"
                  " %d distinct pixel bytes" % (weight, size / 1e6, frames, secs, base, colours))
            if not os.path.exists(png):
                print("FAIL %s: no screenshot; chromium said:\n%s" % (weight, proc.stderr.decode(errors="replace")[-1500:]))
                bad += 1
                continue
            if secs - base > LIMIT_S:
                print("FAIL %s: the browser took %.1f s, %.1f s more than for an empty drawing"
                      " (at most %.0f more)" % (weight, secs, secs - base, LIMIT_S))
                bad += 1
            if colours < 40:
                print("FAIL %s: the screenshot is blank (%d distinct pixel bytes)" % (weight, colours))
                bad += 1
            if weight == "gpu":
                fills = re.findall(r'fill="rgb\((\d+),(\d+),(\d+)\)"', text)
                blue = sum(1 for r, g, b in fills if int(b) >= 200 and int(r) < 100)
                if not blue:
                    print("FAIL gpu: no frame in the GPU colour")
                    bad += 1
            shots = os.environ.get("XP_SVG_SHOTS")
            if shots:
                os.makedirs(shots, exist_ok=True)
                shutil.copy(png, os.path.join(shots, weight + ".png"))
        for failure in zoom_check(browser, os.path.join(tmp, "gpu.svg"), tmp):
            print("FAIL " + failure)
            bad += 1
    if not bad:
        print("ok   the CPU and GPU flame graphs render in the browser within %.0f s each;"
              " a clicked frame fills the drawing and \"Reset zoom\" restores it" % LIMIT_S)
    return 1 if bad else 0


sys.exit(main())
