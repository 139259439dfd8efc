#!/usr/bin/env python3
"""Find a Chromium for the end-to-end tests, installing one if there is none.

Order: $CHROMIUM_PATH → a system Chromium/Chrome → (as root with apt-get) Debian's `chromium` package →
Playwright's own browser (`playwright install chromium`, for machines that can download it).
Prints the path of the executable, or "playwright" when Playwright's bundled browser is to be used.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

CANDIDATES = ["chromium", "chromium-browser", "google-chrome", "google-chrome-stable"]


def find_system_chromium() -> str | None:
    env = os.environ.get("CHROMIUM_PATH")
    if env and os.path.exists(env):
        return env
    for name in CANDIDATES:
        path = shutil.which(name)
        if path:
            return path
    return None


def playwright_browser_installed() -> bool:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return False
    try:
        with sync_playwright() as p:
            return os.path.exists(p.chromium.executable_path)
    except Exception:
        return False


def ensure() -> str:
    path = find_system_chromium()
    if path:
        return path
    if shutil.which("apt-get") and hasattr(os, "geteuid") and os.geteuid() == 0:
        print("installing Debian's chromium (apt-get install -y chromium)…", file=sys.stderr)
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        subprocess.run(["apt-get", "update", "-qq"], check=False, env=env)
        subprocess.run(
            ["apt-get", "install", "-y", "-qq", "chromium", "fonts-noto-cjk"],
            check=False,
            env=env,
            stdout=subprocess.DEVNULL,
        )
        path = find_system_chromium()
        if path:
            return path
    if playwright_browser_installed():
        return "playwright"
    print("no Chromium found: trying `playwright install chromium`…", file=sys.stderr)
    subprocess.run([sys.executable, "-m", "playwright", "install", "chromium"], check=False)
    if playwright_browser_installed():
        return "playwright"
    sys.exit("error: no Chromium available. Install one (e.g. `apt-get install chromium`) or set CHROMIUM_PATH.")


if __name__ == "__main__":
    print(ensure())
