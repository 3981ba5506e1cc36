"""The HTML report in a real browser (issue 29): the system's Chromium, headless, driven by
Playwright (the `browser` extra: `pip install -e ".[browser]"`; Playwright's own browser
download is never used, so nothing but the Python package is fetched).

Skipped, with the reason, where the browser or Playwright is missing; with
LAYERCHECK_REQUIRE_BROWSER=1 (CI's room 1) that is a failure instead, so that CI cannot pass
without running these. LAYERCHECK_CHROMIUM names another Chromium than /usr/bin/chromium.

Screenshots (phone and desktop widths, light and dark) are kept in each test's tmp_path, the
folder pytest prints for a failure (and keeps for its last three runs): look at them.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from html_reports import sample_report

from layercheck.reporters.html import write_html

CHROMIUM = os.environ.get("LAYERCHECK_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
REQUIRED = os.environ.get("LAYERCHECK_REQUIRE_BROWSER") == "1"
PHONE, DESKTOP = 360, 1920


def _unavailable(reason: str):
    if REQUIRED:
        pytest.fail(f"LAYERCHECK_REQUIRE_BROWSER=1 but {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def browser():
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable('Playwright is not installed (pip install -e ".[browser]")')
    if not os.access(CHROMIUM, os.X_OK):
        _unavailable(f"no Chromium at {CHROMIUM} (apt-get install chromium)")
    with sync_playwright() as playwright:
        # --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start.
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield chromium
        chromium.close()


@pytest.fixture(scope="module")
def page_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("html") / "report.html"
    write_html(sample_report(), path)
    return path


@pytest.fixture
def open_page(browser, page_file, tmp_path):
    """open_page(width, scheme="light", script=True) -> (page, problems): the console errors
    and uncaught exceptions of the page, and the requests it tried, in `problems`."""
    contexts = []

    def open_(width: int, scheme: str = "light", script: bool = True):
        context = browser.new_context(
            viewport={"width": width, "height": 900}, color_scheme=scheme, java_script_enabled=script
        )
        contexts.append(context)
        page = context.new_page()
        problems: list[str] = []
        page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}") if m.type == "error" else None)
        page.on("pageerror", lambda exc: problems.append(f"uncaught: {exc}"))
        page.on("request", lambda r: None if r.url.startswith(("file:", "data:")) else problems.append(r.url))
        page.goto(page_file.as_uri())
        return page, problems

    yield open_
    for context in contexts:
        context.close()
    print(f"screenshots in {tmp_path}")


def _visible(page, selector: str) -> list:
    return [element for element in page.locator(selector).all() if element.is_visible()]


@pytest.mark.parametrize("width", [PHONE, DESKTOP])
def test_renders_at_phone_and_desktop_width_without_errors_or_overflow(open_page, tmp_path, width):
    page, problems = open_page(width)
    page.screenshot(path=tmp_path / f"report-{width}.png", full_page=True)
    assert problems == []
    assert page.evaluate("document.documentElement.scrollWidth") <= width, "the page scrolls sideways"
    assert page.locator("#controls").is_visible() and len(_visible(page, "section.target")) == 5
    summary = page.locator("header .summary").inner_text()
    assert summary.startswith("Test Summary:")


def test_filtering_by_status_from_the_keyboard(open_page, tmp_path):
    page, problems = open_page(DESKTOP)
    page.focus("#only-failures")
    page.keyboard.press("Enter")
    checks = _visible(page, "li.check")
    assert checks and {c.get_attribute("data-status") for c in checks} == {"failed"}
    targets = {t.get_attribute("data-status") for t in _visible(page, "section.target")}
    assert targets == {"failed", "error"}, "the passed target is hidden, the one not checked shown"
    assert page.locator("#shown").inner_text() == "Showing 4 of 5 targets"
    page.screenshot(path=tmp_path / "failures-only.png", full_page=True)
    # a status box, toggled with the space bar, shows its checks again
    page.focus("input[name=status][value=passed]")
    page.keyboard.press(" ")
    assert {c.get_attribute("data-status") for c in _visible(page, "li.check") if c} >= {"failed"}
    shown = {t.get_attribute("data-status") for t in _visible(page, "section.target")}
    assert "passed" in shown
    page.click("#show-all")
    assert page.locator("#shown").inner_text() == "Showing 5 of 5 targets"
    assert problems == []


def test_search_by_name_finds_targets_and_checks(open_page):
    page, _ = open_page(DESKTOP)
    page.fill("#search", "PReLU")
    (target,) = _visible(page, "section.target")
    assert "prelu.py" in target.get_attribute("data-name")
    assert len(_visible(page, "li.check")) > 5, "a closed target that matches is opened, all its checks shown"
    page.fill("#search", "gradients_are_numerically")
    names = {c.get_attribute("data-name") for c in _visible(page, "li.check")}
    assert names == {"gradients_are_numerically_correct"}
    page.fill("#search", "no such name")
    assert _visible(page, "section.target") == [] and page.locator("#shown").inner_text() == "Showing 0 of 5 targets"


def test_a_per_channel_bug_is_drawn_and_its_numbers_show_on_hover(open_page, tmp_path):
    page, _ = open_page(PHONE)
    picture = page.locator("section.target", has_text="channel_scale_bias_one_channel").locator("svg.picture")
    assert picture.count() == 1 and picture.is_visible()
    box = picture.bounding_box()
    assert box["width"] > 0 and box["height"] > 0
    # Channel 1 wrong, in whichever band its relative error along the probe's direction falls.
    wrong = picture.locator("rect[class^='c-s']")
    assert wrong.count() == 1 and wrong.locator("title").text_content().startswith("channel 1: wrong")
    picture.scroll_into_view_if_needed()
    page.screenshot(path=tmp_path / "picture-phone.png")
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE


def test_a_layers_script_is_text_and_never_runs(open_page):
    page, problems = open_page(DESKTOP)
    assert page.evaluate("window.__pwned") is None
    message = page.locator("li.check", has_text="predict raised ValueError").locator(".message").first
    assert "<script>window.__pwned = 1</script>" in message.inner_text()
    assert page.locator("img").count() == 0 and page.locator("script").count() == 1
    assert problems == []


def test_dark_scheme_renders_dark(open_page, tmp_path):
    colours = {}
    for scheme in ("light", "dark"):
        page, problems = open_page(PHONE, scheme)
        page.screenshot(path=tmp_path / f"report-{PHONE}-{scheme}.png")
        rgb = page.evaluate("getComputedStyle(document.body).backgroundColor")
        colours[scheme] = [int(n) for n in rgb[rgb.index("(") + 1 : rgb.index(")")].split(",")[:3]]
        assert problems == []
    assert sum(colours["light"]) > 600 and sum(colours["dark"]) < 150, colours


def test_without_script_everything_is_shown_and_the_controls_are_not(open_page):
    page, problems = open_page(PHONE, script=False)
    assert len(_visible(page, "section.target")) == 5
    assert not page.locator("#controls").is_visible(), "controls that could not work are hidden"
    assert problems == []
