#!/usr/bin/env python3
"""A picture of a report page's skeleton replay, for the documentation.

Opens REPORT.html from disk in headless Chromium (through selenium and chromedriver, as the
test cooker.report_in_browser does), stops the replay at a switch of character 0 so that its
candidates show, and writes the skeleton replay section as a PNG.

  report-screenshot.py REPORT.html OUT.png [--width 1100] [--switch 20]

Needs chromium, chromium-driver and python3-selenium (bash scripts/install-deps.sh).
"""
import argparse
import os
import shutil
import sys
import tempfile


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report", help="a page written by mmcook report")
    parser.add_argument("png", help="the picture to write")
    parser.add_argument("--width", type=int, default=1100, help="window width in CSS pixels")
    parser.add_argument("--switch", type=int, default=20,
                        help="which switch mark of character 0 to stop at (from 0)")
    args = parser.parse_args()

    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        sys.exit(f"{sys.executable} cannot import selenium: install python3-selenium")
    browser = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome")
                    if shutil.which(n)), None)
    driver_path = shutil.which("chromedriver")
    if not browser or not driver_path:
        sys.exit("no chromium or chromedriver on PATH: install chromium and chromium-driver")

    options = webdriver.ChromeOptions()
    options.binary_location = browser
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 f"--window-size={args.width},1000", "--force-device-scale-factor=1",
                 "--hide-scrollbars"):
        options.add_argument(flag)
    profile = tempfile.mkdtemp(prefix="mmdb_report_screenshot_")
    options.add_argument(f"--user-data-dir={profile}")
    driver = webdriver.Chrome(service=Service(driver_path), options=options)
    try:
        driver.get("file://" + os.path.abspath(args.report))
        driver.execute_script("window.mmReplay && window.mmReplay.pause();")
        marks = driver.find_elements("css selector", ".rp-side[data-db='A'] .rp-switch")
        if not marks:
            sys.exit(f"{args.report}: no switch marks in the skeleton replay")
        mark = marks[min(args.switch, len(marks) - 1)]
        driver.execute_script("arguments[0].click();", mark)
        section = driver.find_element("id", "skeleton")
        height = driver.execute_script("return arguments[0].scrollHeight;", section)
        driver.set_window_size(args.width, max(1000, int(height) + 200))
        driver.execute_script("arguments[0].scrollIntoView();", section)
        section.screenshot(args.png)
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)
    print(f"wrote {args.png} ({os.path.getsize(args.png)} bytes)")


if __name__ == "__main__":
    main()
