#!/usr/bin/env python3
"""Find a Chromium for the end-to-end tests, installing one if there is none.

Order: $CHROMIUM_PATH → a system Chromium/Chrome → (as root with apt-get) Debian's `chromium` package →
Playwright's own browser (`playwright install chromium`, for machines that can download it).
Prints the path of the executable, or "playwright" when Playwright's bundled browser is to be used.

It also makes sure of Java, which the Nu Html Checker (npm `vnu-jar`, tests/course/test_html_validity.py) runs on:
none on PATH → (as root with apt-get) Debian's `default-jre-headless`; elsewhere a note on stderr (the checker's test
then fails naming what is missing).
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


def can_apt_get() -> bool:
    return bool(shutil.which("apt-get")) and hasattr(os, "geteuid") and os.geteuid() == 0


def apt_get_install(*packages: str) -> None:
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    subprocess.run(["apt-get", "update", "-qq"], check=False, env=env)
    subprocess.run(["apt-get", "install", "-y", "-qq", *packages], check=False, env=env, stdout=subprocess.DEVNULL)


def ensure_java() -> None:
    """Java for the Nu Html Checker: the system's, else Debian's default-jre-headless (as root with apt-get)."""
    if shutil.which("java"):
        return
    if can_apt_get():
        print(
            "installing Debian's Java for the HTML checker (apt-get install -y default-jre-headless)…", file=sys.stderr
        )
        apt_get_install("default-jre-headless")
    if not shutil.which("java"):
        print(
            "warning: no Java: the Nu Html Checker's test will fail (install a JRE, e.g. default-jre-headless)",
            file=sys.stderr,
        )


def ensure() -> str:
    path = find_system_chromium()
    if path:
        return path
    if can_apt_get():
        print("installing Debian's chromium (apt-get install -y chromium)…", file=sys.stderr)
        apt_get_install("chromium", "fonts-noto-cjk")
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
    ensure_java()
    print(ensure())
