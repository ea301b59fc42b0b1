#!/usr/bin/env python3
"""svg-browser.py XPCORR FIXTURE_DIR - the flame graphs of a real run open in
a browser: the CPU and the GPU SVG of the H100 PyTorch fixture, each
screenshotted by headless Chromium within 10 s, the picture not blank (a
drawn flame graph has many colours, an empty page a few), the GPU graph's
kernels in the GPU colour. The screenshots stay in $XP_SVG_SHOTS when set.
Without Chromium it skips (exit 77, saying why), unless XP_REQUIRE_BROWSER=1."""
import lzma
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import zlib

LIMIT_S = 10.0


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
            secs, proc = shoot(browser, svg, png, os.path.join(tmp, "profile-" + weight))
            colours = png_colours(png) if os.path.exists(png) else 0
            size = os.path.getsize(svg)
            print("%s: %.2f MB, %d frames, screenshot in %.1f s, %d distinct pixel bytes"
                  % (weight, size / 1e6, frames, secs, colours))
            if not os.path.exists(png):
                print("FAIL %s: no screenshot; chromium said:\n%s" % (weight, proc.stderr.decode(errors="replace")[-1500:]))
                bad += 1
                continue
            if secs > LIMIT_S:
                print("FAIL %s: the browser took %.1f s (at most %.0f)" % (weight, secs, LIMIT_S))
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
    if not bad:
        print("ok   the CPU and GPU flame graphs render in the browser within %.0f s each" % LIMIT_S)
    return 1 if bad else 0


sys.exit(main())
