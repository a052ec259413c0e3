"""Opens a page of `inspect view` in headless Chromium (Playwright) and prints its text.

Usage: view_log.py URL SCREENSHOT CHROMIUM [CLICK_TEXT ...]. Chromium is Debian's, launched
so that it contacts nothing but loopback. Each CLICK_TEXT, when present on the page, is
clicked in turn (to open a sample's transcript); the text printed is the page's after each.
"""

import sys

from playwright.sync_api import sync_playwright


def main(url: str, screenshot: str, chromium: str, clicks: list[str]) -> None:
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=chromium,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
            ],
        )
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(url)
        # The viewer loads the log after the load event.
        page.wait_for_timeout(4000)
        texts = [page.inner_text("body")]
        for text in clicks:
            target = page.get_by_text(text, exact=False).first
            if target.count() > 0:
                target.click()
                page.wait_for_timeout(2500)
                texts.append(page.inner_text("body"))
        page.screenshot(path=screenshot, full_page=True)
        browser.close()
    print("\n=====\n".join(texts))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:])
