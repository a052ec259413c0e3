"""Opens a page of Arize Phoenix's web UI in headless Chromium (Playwright), waits until it
shows every expected text, saves a screenshot and prints the page's text.

Usage: phoenix_view.py [--click TEXT ...] URL SCREENSHOT CHROMIUM SECONDS [EXPECTED ...].
Chromium is Debian's, launched so that it contacts nothing by itself, and every request of the
page to anywhere but loopback is refused: nothing leaves the machine. The page is given SECONDS
in all to show the EXPECTED texts (Phoenix renders after fetching over GraphQL); then each
--click TEXT in turn, the first element showing exactly TEXT (a span in a trace's tree, a tab
of its details) is clicked, so that those details are in the picture. On a trace's page the screenshot is of the trace's panel. The
screenshot and the text are taken either way; the caller judges the text.
"""

import argparse
import sys
import time
from urllib.parse import urlparse

from playwright.sync_api import sync_playwright

LOOPBACK = {"127.0.0.1", "localhost", "::1"}


def only_loopback(route) -> None:
    url = urlparse(route.request.url)
    if url.scheme in ("data", "blob") or url.hostname in LOOPBACK:
        route.continue_()
    else:
        print(f"refused: {route.request.url}", file=sys.stderr)
        route.abort()


def main(args: argparse.Namespace) -> None:
    deadline = time.monotonic() + args.seconds
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=args.chromium,
            timeout=args.seconds * 1000,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
            ],
        )
        page = browser.new_page(viewport={"width": 1400, "height": 1040})
        page.set_default_timeout(args.seconds * 1000)
        page.route("**/*", only_loopback)
        page.goto(args.url)
        while time.monotonic() < deadline:
            text = page.inner_text("body")
            if all(e in text for e in args.expected):
                break
            page.wait_for_timeout(250)
        for text in args.click:
            page.get_by_text(text, exact=True).first.click()
            page.wait_for_timeout(500)
        # Let the layout settle (the details pane, the tree's widths) before the picture.
        page.wait_for_timeout(1500)
        panel = page.get_by_role("dialog")
        if panel.count() == 1:
            panel.screenshot(path=args.screenshot)
        else:
            page.screenshot(path=args.screenshot)
        text = page.inner_text("body")
        browser.close()
    print(text)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--click", action="append", default=[])
    parser.add_argument("url")
    parser.add_argument("screenshot")
    parser.add_argument("chromium")
    parser.add_argument("seconds", type=float)
    parser.add_argument("expected", nargs="*")
    main(parser.parse_args())
