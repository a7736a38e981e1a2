"""The web table in a real browser: Chromium (headless, from the system packages) plays a
whole 2-player game by clicks against a cheap AI (with the end-of-round summaries and the
"why" panel), then reviews it; a hot-seat game; a 4-player table at phone size (390x844)
and desktop size (1280x800), checked for overflow and overlapping seats; the AI pace
control and "Next trick".

The server is the real app (`csl_ai.web.app.create_app`) under uvicorn on a free local
port, with its records in a temporary folder. Screenshots go to $CSL_SCREENSHOTS (default:
pytest's temporary folder) at the new-game form, the allocation, a trick in progress, the
end of the game and the review with its graph.
"""

from __future__ import annotations

import contextlib
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
from typing import Any

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


@contextlib.contextmanager
def serving(app: Any, name: str) -> Iterator[str]:
    """app under uvicorn in a background thread for the block: its base URL."""
    port = _free_port()
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", access_log=False)
    uv = uvicorn.Server(config)
    thread = threading.Thread(target=uv.run, name=name, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not uv.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the test server did not start")
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        uv.should_exit = True
        thread.join(timeout=10)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """The app under uvicorn in a background thread: (base URL, records folder)."""
    records = tmp_path_factory.mktemp("records")
    with serving(create_app(records, test_ai=TEST_AI, max_searches=2), "csl-serve-test") as base:
        yield base, records


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


def _check_round_summary(page: Page, round_: int, bet: bool) -> None:
    """The end-of-round summary: one row per seat with the bet, the sky cards won, the
    round's points and the total; the round where seat 0 bet says how the bet went."""
    summary = page.locator("#round-summary")
    assert summary.locator("h2").inner_text().startswith(f"Round {round_ + 1} of 4 is over")
    rows = summary.locator("table.summary-table tbody tr")
    assert rows.count() == 2
    you = rows.nth(0).inner_text()
    if bet:
        assert "held: +7" in you or "face down" in you, you
    else:
        assert "no bet" in you
    for k in range(2):
        points = rows.nth(k).locator("td.points").inner_text().replace("−", "-")
        assert re.fullmatch(r"[+-]?\d+", points), points
    totals = [int(t) for t in summary.locator("td.total").all_inner_texts()]
    scores = [int(t) for t in page.locator("#view-table .side table.scores td.total").all_inner_texts()]
    assert totals == scores


def _allocate_by_clicks(page: Page) -> None:
    """Put every hand card into a pile by clicking it (each pile fills in turn), then confirm."""
    hand = page.locator("#view-table .hand button.card")
    cards = hand.count()
    assert cards in (6, 9)  # 6 in 3 piles of 3 with 3 players; 9 in 3 piles of 3 otherwise
    confirm = page.locator("#confirm-piles")
    assert confirm.is_disabled()
    for _ in range(cards):
        hand.first.click()
    assert hand.count() == 0
    assert all(text.split("/")[0] == text.split("/")[1] for text in _pile_counts(page))
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
            # The "why" panel is hidden until asked for.
            assert page.locator("#why-panel").count() == 0
            page.click("#why-toggle")
            assert "After an AI seat's move" in page.locator("#why-panel").inner_text()

            # --- the game, by clicks -----------------------------------------------------
            allocations = bets = plays = summaries = 0
            ai_cards_seen: set[str] = set()
            took_hint = undone = shot_alloc = shot_trick = saw_bet_why = False
            for _ in range(200):
                ready, phase = _ready(page)
                if ready == "over":
                    break
                if ready == "summary":
                    _check_round_summary(page, summaries, bet=summaries == 1)
                    summaries += 1
                    if summaries == 1:
                        # Once the round is over, the AI's cards' candidates are public.
                        items = page.locator("#why-panel .why-list .why-item")
                        items.filter(has_text="r1 t").first.wait_for()
                        assert items.filter(has_text="r1 t").count() >= 3
                        _screenshot(page, shots / "3b-round-summary.png")
                    page.click("#summary-close")
                    assert page.locator("#round-summary").count() == 0
                    continue
                if phase == "play" and not saw_bet_why:
                    # The AI bets after seat 0: all bets are public then, with its candidates.
                    bet = page.locator("#why-panel .why-item", has_text="weather")
                    bet.first.wait_for()
                    assert bet.count() == 1
                    bet.locator("summary").click()
                    assert bet.locator("table.cands tbody tr").count() == 2
                    assert bet.locator("table.cands tr.chosen").count() == 1
                    saw_bet_why = True
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

            assert (allocations, bets, summaries) == (4, 4, 3)
            assert saw_bet_why
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
            # The last round's summary is in the end box; its totals are the final scores.
            last = end.locator(".round-summary table.summary-table td.total").all_inner_texts()
            assert [int(t) for t in last] == shown_totals
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
            # Nobody is still splitting in a resigned game; the status line says when it ended.
            assert "splitting" not in page.locator("#view-table .seats").inner_text()
            assert page.locator("#view-table .turn-text").inner_text() == (
                "Seat 2 (you) resigned in round 1: the game is over"
            )
            assert "resigned" in page.locator("#view-table .round-text").inner_text()
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


# --- layout, pace -------------------------------------------------------------------------------
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 800}


def _boxes(page: Page, selector: str) -> list[dict[str, float]]:
    return page.eval_on_selector_all(
        selector,
        "nodes => nodes.filter(n => n.offsetParent !== null).map(n => { const r = n.getBoundingClientRect();"
        " return {x: r.left, y: r.top, right: r.right, bottom: r.bottom, w: r.width, h: r.height}; })",
    )


def _check_layout(page: Page, where: str) -> None:
    """No horizontal overflow; seat boxes apart, each holding its own cards; the status
    line in a few lines, not a word a line."""
    width = page.evaluate("window.innerWidth")
    scroll = page.evaluate("document.documentElement.scrollWidth")
    assert scroll <= width, f"{where}: the page is {scroll} px wide in a {width} px window"
    seats = _boxes(page, "#view-table .seats .seat")
    for i, a in enumerate(seats):
        for b in seats[i + 1 :]:
            apart = a["right"] <= b["x"] + 0.5 or b["right"] <= a["x"] + 0.5 or a["bottom"] <= b["y"] + 0.5 or b["bottom"] <= a["y"] + 0.5
            assert apart, f"{where}: seat boxes overlap: {a} {b}"
    sticking_out = page.eval_on_selector_all(
        "#view-table .seats .seat",
        """seats => seats.flatMap((seat) => {
            const box = seat.getBoundingClientRect();
            return [...seat.querySelectorAll(".card, .badge")]
                .filter((n) => n.offsetParent !== null)
                .map((n) => [n.className, n.getBoundingClientRect()])
                .filter(([, r]) => r.left < box.left - 0.5 || r.right > box.right + 0.5 || r.bottom > box.bottom + 0.5)
                .map(([name]) => `${seat.dataset.seat}: ${name}`);
        })""",
    )
    assert not sticking_out, f"{where}: cards or badges stick out of their seat box: {sticking_out}"
    for selector in ("#view-table .felt > *", "#view-table .side > *"):
        for part in _boxes(page, selector):
            assert part["right"] <= width + 0.5, f"{where}: {selector} reaches {part['right']} px"
    status = page.locator("#view-table .turn-text")
    lines = page.evaluate(
        "() => { const range = document.createRange();"
        " range.selectNodeContents(document.querySelector('#view-table .turn-text'));"
        " return new Set([...range.getClientRects()].map((r) => Math.round(r.bottom))).size; }"
    )
    assert 1 <= lines <= 3, f"{where}: the status text takes {lines} lines: {status.inner_text()!r}"
    bar = page.locator("#view-table .status-bar").bounding_box()
    text = status.bounding_box()
    assert bar and text and text["width"] >= 0.5 * bar["width"], f"{where}: the status text is squeezed"


@pytest.mark.parametrize("viewport", [PHONE, DESKTOP], ids=["phone", "desktop"])
def test_the_table_fits_a_phone_and_a_desktop(server: tuple[str, Path], shots: Path, viewport: dict[str, int]) -> None:
    """A 4-player game at 390x844 (a phone) and 1280x800: nothing wider than the window,
    seats apart, the end-of-round summary, the secret bets rewritten in the Moves log once
    shown, and the "why" panel listing the AI's candidates."""
    base, _ = server
    name = "phone" if viewport["width"] < 600 else "desktop"
    problems: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport=viewport, reduced_motion="reduce")
        try:
            page.on("console", lambda m: problems.append(f"console: {m.text}") if m.type == "error" else None)
            page.on("pageerror", lambda error: problems.append(f"page error: {error.stack or error}"))
            page.set_default_timeout(20_000)
            page.goto(f"{base}/?delay=0")
            page.locator("#players-seg label", has_text="4").click()
            for seat in (1, 2, 3):
                page.select_option(f"#level-{seat}", "test")
            page.fill("#seed", "5")
            assert page.evaluate("document.documentElement.scrollWidth") <= viewport["width"]
            page.click("#start-game")
            ready, phase = _ready(page)
            assert (ready, phase) == ("human", "allocate")
            page.click("#why-toggle")
            _check_layout(page, f"{name} allocation")
            # Rain cards carry their colour letter, for players who cannot tell the colours.
            for card in page.locator("#view-table .hand button.card").all():
                assert card.locator(".corner.top .cl").inner_text() == (card.get_attribute("data-card") or "?")[0]
            _allocate_by_clicks(page)
            ready, phase = _ready(page)
            assert phase == "weather"
            page.click("#bet-no")
            summary = False
            for _ in range(40):
                ready, phase = _ready(page)
                if ready == "summary":
                    _check_layout(page, f"{name} summary")
                    assert page.locator("#round-summary tbody tr").count() == 4
                    _screenshot(page, shots / f"8-{name}-summary.png")
                    page.click("#summary-close")
                    summary = True
                    break
                assert phase == "play", phase
                if page.locator("#view-table .trick-area .trick-slot .card").count() == 2:
                    _check_layout(page, f"{name} trick")
                    log = page.locator("#view-table .log").inner_text()
                    assert "secret bet" not in log and "(shown once every seat had bet)" in log
                    _screenshot(page, shots / f"7-{name}-trick.png")
                page.locator("#view-table .pile.active button.card.legal:enabled").first.click()
            assert summary, "the round did not end"
            items = page.locator("#why-panel .why-list .why-item")
            items.first.wait_for()
            assert items.count() >= 10
            item = items.first
            item.locator("summary").click()
            rows = item.locator("table.cands tbody tr")
            assert 1 <= rows.count() <= 5 and item.locator("tr.chosen").count() == 1
            assert re.search(r"\d+%", rows.first.inner_text())
            _ready(page)
            _check_layout(page, f"{name} second round")
        except Exception:
            page.screenshot(path=str(shots / f"failure-{name}.png"), full_page=True)
            if problems:
                raise AssertionError("\n".join(problems)) from None
            raise
        finally:
            browser.close()
    assert not problems, "\n".join(problems)


def test_the_pace_is_remembered_and_a_click_advances_a_trick(server: tuple[str, Path], shots: Path) -> None:
    """The AI pace and "wait for my click after each trick" are kept in the browser; with the
    latter, a complete trick stays until "Next trick" is clicked."""
    base, _ = server
    problems: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport=DESKTOP, reduced_motion="reduce")
        try:
            page.on("console", lambda m: problems.append(f"console: {m.text}") if m.type == "error" else None)
            page.on("pageerror", lambda error: problems.append(f"page error: {error.stack or error}"))
            page.set_default_timeout(20_000)
            page.goto(base)
            page.locator("#players-seg label", has_text="3").click()
            for seat in (1, 2):
                page.select_option(f"#level-{seat}", "test")
            page.fill("#seed", "2")
            page.click("#start-game")
            _ready(page)
            assert page.locator("#pace-select").input_value() == "quick"
            page.select_option("#pace-select", "instant")
            page.check("#trick-click")
            assert page.evaluate("localStorage.getItem('csl.pace')") == "instant"
            assert page.evaluate("localStorage.getItem('csl.trickClick')") == "on"
            page.reload()
            _ready(page)
            assert page.locator("#pace-select").input_value() == "instant"
            assert page.locator("#trick-click").is_checked()
            _allocate_by_clicks(page)
            _ready(page)
            page.click("#bet-no")
            waited = 0
            table = page.locator("#view-table")
            for _ in range(60):
                page.wait_for_selector("#view-table[data-ready], #view-table[data-waiting]", state="attached")
                if table.get_attribute("data-waiting") == "trick":
                    # The trick stays on the table, complete, until the click.
                    assert table.get_attribute("data-ready") is None
                    assert page.locator("#view-table .trick-area .trick-slot.winner").count() == 1
                    page.wait_for_timeout(300)
                    assert table.get_attribute("data-waiting") == "trick"
                    page.click("#next-trick")
                    waited += 1
                    continue
                ready = table.get_attribute("data-ready")
                if ready != "human" or waited >= 2:
                    break
                page.locator("#view-table .pile.active button.card.legal:enabled").first.click()
            assert waited >= 2
        except Exception:
            page.screenshot(path=str(shots / "failure-pace.png"), full_page=True)
            if problems:
                raise AssertionError("\n".join(problems)) from None
            raise
        finally:
            browser.close()
    assert not problems, "\n".join(problems)
