"""What the web tests share: a free loopback port, waiting for a condition, and a headless
Debian chromium driven by selenium (a failure in CI when it is missing, else a skip)."""
from __future__ import annotations

import shutil
import socket
import time
from typing import Any

from tests.prerequisites import guard, missing_prerequisite


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_until(condition: Any, seconds: float = 10.0, what: str = "in the browser") -> Any:
    """The first truthy value of ``condition()``, polled until ``seconds`` have passed."""
    deadline = time.monotonic() + guard(seconds)
    while not (value := condition()):
        assert time.monotonic() < deadline, f"timed out waiting {what}"
        time.sleep(0.05)
    return value


def chromium(width: int = 1280, height: int = 900) -> Any:
    """A headless chromium session (quit it when done)."""
    browser, driver = shutil.which("chromium"), shutil.which("chromedriver")
    if browser is None or driver is None:
        missing_prerequisite("chromium and chromium-driver are not installed (scripts/test installs "
                             "them as root)", "the browser tests")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage",
                     f"--window-size={width},{height}", "--lang=en"):
        options.add_argument(argument)
    options.binary_location = browser
    return webdriver.Chrome(service=Service(driver), options=options)
