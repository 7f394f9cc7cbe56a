"""The web page in a real headless Chromium (Debian's ``chromium`` + ``chromium-driver``,
installed by ``.ci/run``), driven by Selenium with the keyboard where a person would.

Every request the browser makes is read from its own network log and must go to the
test server on 127.0.0.1. With ``TROVE_SCREENSHOTS=DIR`` the screenshots for the README
are written to DIR (``docs/``); otherwise to the test's temporary folder.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

pytest.importorskip("fastapi", reason="needs the server extra")
pytest.importorskip("selenium", reason="needs selenium (the dev extra)")

from selenium import webdriver
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions as expected
from selenium.webdriver.support.ui import WebDriverWait

import trove
from trove.interfaces.config import ServerConfig
from trove.interfaces.http import create_app

CHROMIUM = shutil.which("chromium")
CHROMEDRIVER = shutil.which("chromedriver")
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not (CHROMIUM and CHROMEDRIVER),
        reason="needs Debian's chromium and chromium-driver (.ci/run installs them)",
    ),
]
TOKEN = "browser-token-0123456789"
Serve = Callable[[Any], AbstractContextManager[str]]
FLAGS = (
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--window-size=1100,800",
)
RUNBOOK = """# Deploy runbook

Deploys go out on **tuesdays**, after the checks pass:

1. run `make check`
2. tag the release
3. watch the dashboards for ten minutes

![tracker](http://example.com/pixel.png) If anything breaks, see the rollback note.
"""


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory, serve: Serve) -> Iterator[str]:
    path = tmp_path_factory.mktemp("browser") / "kb.db"
    with trove.open(path, embedder="hash:64") as kb:
        ws = kb.workspace("team")
        runbook = ws.add(
            RUNBOOK, title="Deploy runbook", source="wiki", author="ana", tags=["ops", "deploy"]
        )
        rollback = ws.add(
            "Rollback: `trove restore` the config, redeploy the previous tag.",
            title="Rollback",
            source="wiki",
            author="bo",
            tags=["ops"],
        )
        ws.add("We moved the deploy to wednesday this week.", title="Deploy moved", source="chat")
        ws.link(runbook, rollback, "relates_to")
        config = ServerConfig.from_dict({"namespace": "team", "tokens": [{"token": TOKEN}]})
        with serve(create_app(kb, config)) as base:
            yield base


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[webdriver.Chrome]:
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in FLAGS:
        options.add_argument(flag)
    profile = tmp_path_factory.mktemp("chromium-profile")
    options.add_argument(f"--user-data-dir={profile}")
    options.set_capability("goog:loggingPrefs", {"performance": "ALL"})
    service = webdriver.ChromeService(executable_path=str(CHROMEDRIVER))
    driver = webdriver.Chrome(options=options, service=service)
    driver.set_page_load_timeout(60)
    try:
        yield driver
    finally:
        driver.quit()


def shots(tmp_path: Path) -> Path:
    folder = Path(os.environ.get("TROVE_SCREENSHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def requested_urls(browser: webdriver.Chrome) -> list[str]:
    urls = []
    for entry in browser.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message["method"] == "Network.requestWillBeSent":
            urls.append(message["params"]["request"]["url"])
    return urls


def test_search_read_and_follow_a_link_in_chromium(
    url: str, browser: webdriver.Chrome, tmp_path: Path
) -> None:
    folder = shots(tmp_path)
    browser.get(url + "/")
    assert browser.current_url == url + "/login"
    # The token field has focus: type it and press Enter, as a person would.
    browser.switch_to.active_element.send_keys(TOKEN + Keys.ENTER)
    WebDriverWait(browser, 30).until(expected.url_to_be(url + "/"))
    assert TOKEN not in browser.current_url
    assert browser.get_cookie("trove_token")["httpOnly"] is True  # type: ignore[index]
    assert "Most recent" in browser.page_source

    search = browser.switch_to.active_element  # autofocus: the search box
    assert search.get_attribute("id") == "q"
    search.send_keys("deploy tuesdays" + Keys.ENTER)
    WebDriverWait(browser, 30).until(expected.url_contains("q=deploy"))
    titles = [a.text for a in browser.find_elements(By.CSS_SELECTOR, ".results .title")]
    assert titles and titles[0] == "Deploy runbook"
    assert browser.find_element(By.CSS_SELECTOR, ".count").text.startswith(f"{len(titles)} result")
    assert browser.find_elements(By.CSS_SELECTOR, ".snippet mark")
    browser.save_screenshot(str(folder / "web-search.png"))

    browser.find_element(By.LINK_TEXT, "Deploy runbook").click()
    WebDriverWait(browser, 30).until(expected.url_contains("/doc/"))
    assert browser.find_element(By.CSS_SELECTOR, ".rendered h1").text == "Deploy runbook"
    assert browser.find_element(By.CSS_SELECTOR, ".rendered ol li code").text == "make check"
    browser.save_screenshot(str(folder / "web-document.png"))

    browser.find_element(By.LINK_TEXT, "Rollback").click()
    WebDriverWait(browser, 30).until(expected.title_contains("Rollback"))
    assert browser.find_element(By.TAG_NAME, "h1").text == "Rollback"
    assert "Deploy runbook" in browser.find_element(By.CSS_SELECTOR, ".links").text

    browser.get(url + "/browse")
    assert browser.find_element(By.LINK_TEXT, "wiki")
    browser.save_screenshot(str(folder / "web-browse.png"))

    requested = requested_urls(browser)
    assert any(u.startswith(url) for u in requested)
    # chrome:// and data: are the browser's own pages; anything on the network counts.
    network = [u for u in requested if urlsplit(u).scheme in ("http", "https", "ws", "wss")]
    elsewhere = [u for u in network if urlsplit(u).hostname != "127.0.0.1"]
    assert elsewhere == []  # the tracker image in the note is never fetched (CSP)
