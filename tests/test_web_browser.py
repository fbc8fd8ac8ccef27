"""The web panel in a real headless browser (Debian's chromium through selenium), against ``moderator play --web``:
a room page's clock counts down; the host page pauses the game and both room pages show it; a command the rules
refuse shows its reason. Screenshots of both pages go to ``$MODERATOR_SCREENSHOTS`` when set (docs/ has them).

In CI (``CI`` set) a missing chromium fails these tests; elsewhere they are skipped, saying what to install."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from web_support import WebGame

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CHROMIUM, DRIVER = Path("/usr/bin/chromium"), Path("/usr/bin/chromedriver")
#: How long a page may take to show a change: generous for a loaded 2-core machine (the API tests hold the
#: server to 250 ms).
WAIT = 10.0


def _need(what: str) -> None:
    message = f"the browser tests need {what}: bash scripts/setup.sh installs it"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        _need("selenium (pip install -e '.[test]')")
    if not CHROMIUM.exists() or not DRIVER.exists():
        _need("Debian's chromium and chromium-driver")
    os.environ["SE_OFFLINE"] = "true"  # selenium must not look for a browser or driver online
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-default-apps", "--disable-extensions", "--window-size=1100,900",
                 f"--user-data-dir={tmp_path_factory.mktemp('chromium')}"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})  # script errors, blocked loads (the CSP)
    driver = webdriver.Chrome(options=options, service=Service(executable_path=str(DRIVER)))
    driver.set_page_load_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()


def _seconds(clock: str) -> int:
    minutes, seconds = clock.split(":")
    return int(minutes) * 60 + int(seconds)


def _text(driver: Any, selector: str) -> str:
    from selenium.webdriver.common.by import By

    return str(driver.find_element(By.CSS_SELECTOR, selector).text)


def _until(driver: Any, check: Any, what: str) -> Any:
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, WAIT, poll_frequency=0.05).until(check, message=what)


def _screenshot(driver: Any, name: str, tmp_path: Path) -> None:
    path = tmp_path / name
    assert driver.save_screenshot(str(path)), f"no screenshot {name}"
    assert path.stat().st_size > 10_000
    if os.environ.get("MODERATOR_SCREENSHOTS"):
        shutil.copy(path, Path(os.environ["MODERATOR_SCREENSHOTS"]) / name)


def test_room_pages_follow_the_host_page_in_a_real_browser(browser: Any, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    game = WebGame(tmp_path, "--web", "127.0.0.1:0")
    try:
        game.send("start the game")
        game.wait_for(lambda line: line.startswith("[both] Round 1."))
        # Room A: the clock counts down (it is drawn locally between the server's views).
        browser.get(f"{game.base}/room/A")
        room_a = browser.current_window_handle
        first = _until(browser, lambda d: (t := _text(d, "#clock")) != "--:--" and t, "the clock shows a time")
        later = _until(browser, lambda d: (t := _text(d, "#clock")) != first and t, "the clock moves")
        assert _seconds(later) < _seconds(first) <= 180
        assert _text(browser, "#status") == "RUNNING"
        assert _text(browser, "#room-name") == "Room A"
        assert "Round 1." in _text(browser, "#said")
        browser.switch_to.new_window("tab")
        browser.get(f"{game.base}/room/B")
        room_b = browser.current_window_handle
        _until(browser, lambda d: _text(d, "#status") == "RUNNING", "room B runs")

        # The host page, with the token: appoint Alice in room A with the picker.
        browser.switch_to.new_window("tab")
        browser.get(f"{game.base}/host?token={game.token}")
        host = browser.current_window_handle
        appoint = _until(browser, lambda d: d.find_element(
            By.CSS_SELECTOR, '.room-panel[data-room="A"] .command[data-intent="appoint"]'), "the appoint button")
        Select(appoint.find_element(By.CSS_SELECTOR, 'select[data-slot="player"]')).select_by_visible_text("Alice")
        appoint.find_element(By.TAG_NAME, "button").click()
        _until(browser, lambda d: "Alice is the leader of room A" in _text(d, "#answer"), "the appointment")
        _until(browser, lambda d: _text(d, '.room-panel[data-room="A"] .leader') == "Alice", "the host's view")

        # Pause: both room pages show it.
        browser.find_element(By.CSS_SELECTOR, '#game-commands button[data-command="pause"]').click()
        _until(browser, lambda d: "paused" in _text(d, "#answer").lower(), "the pause's answer")
        assert game.state()["paused"] is True
        for handle, room in ((room_a, "A"), (room_b, "B")):
            browser.switch_to.window(handle)
            _until(browser, lambda d: _text(d, "#status") == "PAUSED", f"room {room} shows the pause")
            paused_at = _text(browser, "#clock")
            assert "paused" in _text(browser, "#said").lower()
        assert _text(browser, "#clock") == paused_at, "a paused clock stands still"
        browser.switch_to.window(room_a)
        assert _text(browser, "#leader") == "Alice"
        _screenshot(browser, "web-room.png", tmp_path)

        # Resume, then an illegal command: one vote for Frank is not more than half of room A.
        browser.switch_to.window(host)
        _until(browser, lambda d: d.find_element(By.CSS_SELECTOR, '#game-commands button[data-command="resume"]'),
               "the resume button").click()
        _until(browser, lambda d: _text(d, "#status") == "RUNNING", "the game runs again")
        usurp = _until(browser, lambda d: d.find_element(
            By.CSS_SELECTOR, '.room-panel[data-room="A"] .command[data-intent="usurp"]'), "the usurp button")
        Select(usurp.find_element(By.CSS_SELECTOR, 'select[data-slot="votes"]')).select_by_visible_text("1")
        Select(usurp.find_element(By.CSS_SELECTOR, 'select[data-slot="player"]')).select_by_visible_text("Frank")
        usurp.find_element(By.TAG_NAME, "button").click()
        answer = _until(browser, lambda d: (a := d.find_element(By.ID, "answer")).get_attribute("class") ==
                        "answer refused" and a, "the refusal")
        reason = game.state()["refusals"][0]["reason"]
        assert reason and answer.text == f"\u2717 1 votes for Frank: {reason}"
        _until(browser, lambda d: reason in _text(d, "#refusals"), "the refusal listed with its reason")
        assert game.state()["rooms"]["A"]["leader"] == "Alice", "a refused command changes nothing"
        loaded = browser.execute_script("return performance.getEntriesByType('resource').map(e => e.name)")
        assert loaded and all(url.startswith(game.base + "/") for url in loaded), loaded  # nothing from elsewhere
        assert "Shuffle the 8 cards" in _text(browser, "#deck-note")
        assert "President" in _text(browser, "#deck")
        browser.set_window_size(1100, 1700)  # the whole host page: rooms, refusals and the deck
        _screenshot(browser, "web-host.png", tmp_path)
        errors = [entry for entry in browser.get_log("browser") if entry["level"] == "SEVERE"]
        assert not [e for e in errors if "/api/command" not in e["message"]], errors  # (a 409 is logged)
    finally:
        code = game.quit()
    assert code == 0, game.err
    assert sum(line.count(game.token) for line in game.lines + game.err) == 1, "the token is printed once only"
