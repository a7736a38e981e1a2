"""The web table in a real browser: Chromium (headless, from the system packages) plays a
whole 2-player game by clicks against a cheap AI, then reviews it.

The server is the real app (`csl_ai.web.app.create_app`) under uvicorn on a free local
port, with its records in a temporary folder. Screenshots go to $CSL_SCREENSHOTS (default:
pytest's temporary folder) at the new-game form, the allocation, a trick in progress, the
end of the game and the review with its graph.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
import uvicorn
from playwright.sync_api import ConsoleMessage, Page, sync_playwright

from csl_ai.position import position_from_dict
from csl_ai.web.app import create_app

CHROMIUM = shutil.which("chromium") or ("/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None)
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="no chromium executable (CI installs it: apt-get install chromium)"
)
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
TEST_AI = "ismcts:iters=60"
"""The AI seats' spec, offered by the server as level ``test``: a real search, cheaply."""
STEP_DELAY_MS = 20
"""The page's pause between two AI decisions (``?delay=``; 400 ms for a person)."""
SEED = 11


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """The app under uvicorn in a background thread: (base URL, records folder)."""
    records = tmp_path_factory.mktemp("records")
    app = create_app(records, test_ai=TEST_AI, max_searches=2)
    port = _free_port()
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", access_log=False)
    uv = uvicorn.Server(config)
    thread = threading.Thread(target=uv.run, name="csl-serve-test", daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not uv.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the test server did not start")
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}", records
    uv.should_exit = True
    thread.join(timeout=10)


@pytest.fixture()
def shots(tmp_path: Path) -> Path:
    folder = Path(os.environ.get("CSL_SCREENSHOTS") or tmp_path / "screenshots")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _get_json(url: str) -> object:
    with urllib.request.urlopen(url, timeout=10) as response:
        return json.loads(response.read())


def _ready(page: Page, timeout: float = 20_000) -> tuple[str, str]:
    """Wait until the table waits for the human or the game is over: (ready, phase)."""
    page.wait_for_selector("#view-table[data-ready]", state="attached", timeout=timeout)
    table = page.locator("#view-table")
    return table.get_attribute("data-ready") or "", table.get_attribute("data-phase") or ""


def _screenshot(page: Page, path: Path) -> None:
    """The window from the top of the page, as a player sees it."""
    page.evaluate("window.scrollTo(0, 0)")
    page.screenshot(path=str(path), animations="disabled")


def _pile_counts(page: Page) -> list[str]:
    return page.locator("#view-table .pile .pile-count").all_inner_texts()


def _try_allocation_controls(page: Page) -> None:
    """Drag a card onto pile 3 and take it back by a click; choose pile 1 and put a card in
    it by keyboard."""
    hand = page.locator("#view-table .hand button.card")
    hand.first.drag_to(page.locator('#view-table .pile[data-pile="2"]'))
    assert _pile_counts(page) == ["0/3", "0/3", "1/3"]
    page.locator('#view-table .pile[data-pile="2"] button.card').click()
    assert _pile_counts(page) == ["0/3", "0/3", "0/3"]
    page.locator('#view-table .pile[data-pile="0"]').focus()
    page.keyboard.press("Enter")
    hand.first.focus()
    page.keyboard.press("Enter")
    assert _pile_counts(page) == ["1/3", "0/3", "0/3"]
    page.locator("#view-table .pile button.card").first.click()
    assert hand.count() == 9


def _check_scoring_panel(page: Page, view: str) -> None:
    """The scoring panel shows the cards of the rules in play (all A here), the leopard's
    count/points table as the server computed it."""
    panel = page.locator(f"{view} .rules-list")
    assert panel.locator(".rule").count() == 5
    assert panel.locator(".rule .side-badge").all_text_contents() == ["side A"] * 4
    leopard = panel.locator(".rule.leopard table.mini tr")
    assert leopard.nth(0).locator("td").all_text_contents() == [*map(str, range(7)), "7+"]
    assert leopard.nth(1).locator("td").all_text_contents() == ["0", "0", "10", "0", "20", "0", "30", "0"]
    assert "trump" in panel.locator(".rule-note").text_content()


def _allocate_by_clicks(page: Page) -> None:
    """Put every hand card into a pile by clicking it (each pile fills in turn), then confirm."""
    hand = page.locator("#view-table .hand button.card")
    assert hand.count() == 9
    confirm = page.locator("#confirm-piles")
    assert confirm.is_disabled()
    for _ in range(9):
        hand.first.click()
    assert hand.count() == 0
    assert _pile_counts(page) == ["3/3", "3/3", "3/3"]
    confirm.click()


def test_play_a_whole_game_then_review_it(server: tuple[str, Path], shots: Path) -> None:
    base, records = server
    problems: list[str] = []

    def on_console(message: ConsoleMessage) -> None:
        if message.type == "error":
            problems.append(f"console: {message.text}")

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        # Reduced motion turns the page's transitions off: Playwright's waits for a still
        # element then end at once.
        page = browser.new_page(
            viewport={"width": 1340, "height": 940}, accept_downloads=True, reduced_motion="reduce"
        )
        try:
            page.on("console", on_console)
            page.on("pageerror", lambda error: problems.append(f"page error: {error.stack or error}"))
            page.set_default_timeout(20_000)
            page.goto(f"{base}/?delay={STEP_DELAY_MS}")

            # --- the new-game form -------------------------------------------------------
            page.locator("#players-seg label", has_text="2").click()
            page.wait_for_selector("#seat-rows .seat-row >> nth=1")
            assert page.locator("#seat-rows .seat-row").count() == 2
            assert page.locator("#human-0").is_checked()
            assert not page.locator("#human-1").is_checked()
            page.select_option("#level-1", "test")
            page.fill("#seed", str(SEED))
            page.screenshot(path=str(shots / "1-new-game.png"))
            page.click("#start-game")
            _ready(page)
            _check_scoring_panel(page, "#view-table")

            # --- the game, by clicks -----------------------------------------------------
            allocations = bets = plays = 0
            ai_cards_seen: set[str] = set()
            took_hint = undone = shot_alloc = shot_trick = False
            for _ in range(200):
                ready, phase = _ready(page)
                if ready == "over":
                    break
                if phase == "allocate":
                    if not shot_alloc:
                        _try_allocation_controls(page)
                        page.locator("#view-table .hand button.card").first.click()
                        _screenshot(page, shots / "2-allocation.png")
                        page.locator("#view-table .pile button.card").first.click()
                        shot_alloc = True
                    assert page.locator("#view-table .sky-line .sky-slot").count() == 9
                    _allocate_by_clicks(page)
                    allocations += 1
                elif phase == "weather":
                    page.locator("#bet-yes" if bets == 1 else "#bet-no").click()
                    bets += 1
                    if not undone:
                        _ready(page)
                        undo = page.locator("#undo-button")
                        assert undo.is_enabled()
                        undo.click()
                        ready, phase = _ready(page)
                        assert (ready, phase) == ("human", "weather")
                        undone = True
                        page.locator("#bet-no").click()
                elif phase == "play":
                    for slot in page.locator('#view-table .trick-slot[data-seat="1"] .card').all():
                        ai_cards_seen.add(slot.get_attribute("data-card") or "")
                    if not took_hint:
                        with page.expect_download() as download_info:
                            page.get_by_role("button", name="Position JSON").click()
                        live = json.loads(Path(download_info.value.path()).read_text())
                        assert position_from_dict(live).seat == 0
                        page.click("#hint-button")
                        page.wait_for_selector("#view-table .hint-box strong")
                        assert "to win" in page.locator("#view-table .hint-box").inner_text()
                        took_hint = True
                    legal = page.locator("#view-table .pile.active button.card.legal:enabled")
                    assert legal.count() >= 1
                    played_on = page.locator("#view-table .trick-area .trick-slot .card").count()
                    if not shot_trick and played_on == 1 and plays > 4:
                        title = page.locator("#view-table .trick-title").inner_text()
                        assert re.match(r"Trick \d+ for the (double )?\w+", title), title
                        _screenshot(page, shots / "3-mid-trick.png")
                        shot_trick = True
                    legal.first.click()
                    plays += 1
                else:
                    pytest.fail(f"the table is ready in phase {phase!r}")
            else:
                pytest.fail("the game did not end")

            assert (allocations, bets) == (4, 4)
            assert plays >= 12  # the others were forced: played for the human by /step
            assert ai_cards_seen - {""}, "the AI's cards never showed on the table"
            assert took_hint and undone and shot_alloc and shot_trick

            # --- the end of the game -----------------------------------------------------
            estimate = page.locator("#view-table .est-line")
            assert "rates its chance" in estimate.inner_text()
            page.click("#estimate-toggle")
            assert estimate.inner_text() == "AI win estimate hidden"
            page.click("#estimate-toggle")
            end = page.locator("#end-box")
            assert "win" in end.locator(".winner-line").inner_text().lower()
            rows = end.locator("table.scores tbody tr")
            assert rows.count() == 2
            assert end.locator("table.scores tr.winner").count() >= 1
            shown_totals = [int(t) for t in end.locator("table.scores td.total").all_inner_texts()]
            page.screenshot(path=str(shots / "4-end.png"), full_page=True, animations="disabled")
            record_href = page.locator("#record-link").get_attribute("href") or ""
            record = _get_json(base + record_href)
            assert isinstance(record, dict)
            assert [line["total"] for line in record["result"]["scores"]] == shown_totals
            saved_as = page.locator("#record-link").get_attribute("download") or ""
            assert json.loads((records / saved_as).read_text())["result"] == record["result"]

            # --- the review --------------------------------------------------------------
            page.click("#review-game")
            page.wait_for_selector('#view-review[data-step="0"]')
            for _ in range(5):
                page.keyboard.press("ArrowRight")
            page.wait_for_selector('#view-review[data-step="5"]')
            page.keyboard.press("ArrowLeft")
            page.wait_for_selector('#view-review[data-step="4"]')
            _check_scoring_panel(page, "#view-review")
            # Both piled, both bet, nobody played: a review shows every hand.
            assert page.locator("#view-review .seat .card.rain").count() == 18
            page.select_option("#analysis-level", "test")
            page.click("#run-analysis")
            page.wait_for_selector('#view-review[data-analysed="yes"]', timeout=45_000)
            graph = page.locator("#graph-wrap svg.win-graph")
            assert graph.count() == 1
            assert graph.locator("circle.dot").count() >= 20
            page.locator("#graph-wrap svg circle.dot").nth(10).click()
            step = int(page.locator("#view-review").get_attribute("data-step") or "-1")
            assert step > 4
            page.screenshot(path=str(shots / "5-review.png"), full_page=True, animations="disabled")

            with page.expect_download() as download_info:
                page.click("#export-position")
            exported = Path(download_info.value.path())
            position = json.loads(exported.read_text())
            observation = position_from_dict(position)
            assert observation.seat == 0
        except Exception:
            page.screenshot(path=str(shots / "failure.png"), full_page=True, animations="disabled")
            if problems:
                raise AssertionError("\n".join(problems)) from None
            raise
        finally:
            browser.close()
    assert not problems, "\n".join(problems)


def test_hot_seat_resume_and_errors(server: tuple[str, Path], shots: Path, tmp_path: Path) -> None:
    """Two people at one screen hand over between their turns; the saved game is listed
    and reopened; a refused request shows the server's message in the page."""
    base, records = server
    problems: list[str] = []
    expected_4xx = "Failed to load resource: the server responded with a status of 400"

    def on_console(message: ConsoleMessage) -> None:
        if message.type == "error" and not message.text.startswith(expected_4xx):
            problems.append(f"console: {message.text}")

    bad_deck = tmp_path / "bad-deck.toml"
    bad_deck.write_text('name = "broken"\n[cards.candy]\nsingle = 99\n')
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1100, "height": 900}, reduced_motion="reduce")
        try:
            page.on("console", on_console)
            page.on("pageerror", lambda error: problems.append(f"page error: {error.stack or error}"))
            page.set_default_timeout(20_000)
            page.goto(f"{base}/?delay={STEP_DELAY_MS}")

            # A deck the rules refuse: the server's one-line message, in the page.
            page.locator("#players-seg label", has_text="4").click()
            page.set_input_files("#deck-file", str(bad_deck))
            page.click("#start-game")
            banner = page.locator("#error-banner")
            banner.wait_for(state="visible")
            message = page.locator("#error-text").inner_text()
            assert "deck" in message.lower() and "Traceback" not in message
            page.click("#error-close")
            assert banner.is_hidden()
            page.set_input_files("#deck-file", [])

            # Seats 0 and 2 are people at this screen, 1 and 3 the cheap AI.
            page.check("#human-2")
            for seat in (1, 3):
                page.select_option(f"#level-{seat}", "test")
            page.fill("#seed", "5")
            page.click("#start-game")
            ready, phase = _ready(page)
            assert (ready, phase) == ("human", "allocate")
            assert "Seat 0" in page.locator("#view-table .you-title").inner_text()
            _allocate_by_clicks(page)
            handover = page.locator("#view-table .overlay .handover")
            handover.wait_for(state="visible")
            assert "Seat 2" in handover.inner_text()
            assert page.locator("#view-table").get_attribute("data-ready") is None
            _screenshot(page, shots / "6-hot-seat.png")
            handover.get_by_role("button", name="Show my cards").click()
            ready, phase = _ready(page)
            assert (ready, phase) == ("human", "allocate")
            assert "Seat 2" in page.locator("#view-table .you-title").inner_text()
            assert page.locator("#view-table .hand button.card").count() == 9

            # The game is saved after the first move: listed, and reopened from the list.
            game_url = page.url
            page.click("#nav-home")
            item = page.locator("#records-list li", has=page.locator("button", has_text="Open"))
            item.first.wait_for()
            item.first.get_by_role("button", name="Open").click()
            ready, phase = _ready(page)
            assert page.url == game_url
            assert (ready, phase) == ("human", "allocate")
            assert "Seat 2" in page.locator("#view-table .you-title").inner_text()

            # Resigning takes two clicks; the record is then saved, and can be uploaded.
            page.click("#resign-button")
            assert page.locator("#resign-button").inner_text() == "Really resign?"
            page.click("#resign-button")
            ready, _ = _ready(page)
            assert ready == "over"
            assert page.locator("#end-box .winner-line").inner_text().startswith("Seat 2 (you) resigned")
            saved_as = page.locator("#record-link").get_attribute("download") or ""
            assert json.loads((records / saved_as).read_text())["meta"]["resigned"] == 2
            page.click("#nav-home")
            page.set_input_files("#record-file", str(records / saved_as))
            page.wait_for_selector('#view-review[data-step="0"]')
            assert page.locator("#view-review .review-nav").is_visible()
        except Exception:
            page.screenshot(path=str(shots / "failure-hot-seat.png"), full_page=True)
            if problems:
                raise AssertionError("\n".join(problems)) from None
            raise
        finally:
            browser.close()
    assert not problems, "\n".join(problems)
