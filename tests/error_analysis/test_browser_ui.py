"""The error-case browser in a real JupyterLab, driven by headless Chromium through Playwright.

Starts JupyterLab on 127.0.0.1 (free port, no token) with its root in a temporary copy holding
notebooks/30_error_analysis.ipynb (the demo run, with the tag folder and outputs pointed into the
temporary folder), runs all cells, waits for the widget (the demo: SmolLM2's wrong answers on the MMMU
demo set), tags the first case and saves, then checks ``annotations/<analysed run>.csv``; then drives the
keyboard with the focus on the browser itself, not in its keys box (a click on the case header, then
``n`` next, ``3`` tags "reasoning error" and moves on, ``p`` back, without clicking again) and checks that
the tag reaches the CSV, the distribution under the browser updates, and JupyterLab's own shortcuts did
not take the keys (the cell stays a code cell: ``3`` in command mode would make it a heading). On success a screenshot goes to the test's temporary folder, or to
docs/screenshots/error_browser.png when MMBENCH_UPDATE_SCREENSHOTS=1 (so a test run leaves the
committed picture alone); on failure a full-page screenshot goes to the temporary folder. Needs Debian's chromium (``apt-get install -y chromium``)
and the ``playwright`` Python package (its browser download is not used).
"""
import csv
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run"]
SCREENSHOT = ROOT / "docs" / "screenshots" / "error_browser.png"
NOTEBOOK = "30_error_analysis.ipynb"
RUN_ID = "ui_test_run"  # the analysis's own run folder
TAGGED_RUN = "error_analysis_demo_smollm2"  # the analysed run: its tag file

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def _require():
    if not Path(CHROMIUM).is_file():
        pytest.skip(f"{CHROMIUM} is missing: apt-get install -y chromium")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        pytest.skip("the playwright package is missing: pip install playwright (no 'playwright install' needed)")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _prepare(tmp: Path) -> Path:
    """A root folder with the notebook; its parameters point the tags and outputs into ``tmp``."""
    root = tmp / "lab"
    root.mkdir()
    nb = nbformat.read(ROOT / "notebooks" / NOTEBOOK, as_version=4)
    params = next(c for c in nb.cells if "parameters" in c.metadata.get("tags", []))
    lines = []
    for line in params.source.splitlines():
        name = line.split("=", 1)[0].strip()
        if name == "annotations_dir":
            line = f"annotations_dir = {str(tmp / 'annotations')!r}"
        elif name == "run_id":
            line = f"run_id = {RUN_ID!r}"
        elif name == "n_sample":
            line = "n_sample = 6"
        elif name == "data_dir":
            line = f"data_dir = {str(ROOT / 'data' / 'demo')!r}"
        lines.append(line)
    params.source = "\n".join(lines)
    nbformat.write(nb, root / NOTEBOOK)
    settings = tmp / "settings" / "@jupyterlab" / "apputils-extension"
    settings.mkdir(parents=True)
    (settings / "notification.jupyterlab-settings").write_text(json.dumps({"fetchNews": "false", "checkForUpdates": False}))
    return root


@pytest.fixture
def lab(tmp_path):
    _require()
    root = _prepare(tmp_path)
    port = _free_port()
    env = {**os.environ, "MMBENCH_OUTPUTS": str(tmp_path / "outputs"), "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"),
           "JUPYTER_CONFIG_DIR": str(tmp_path / "config"), "HF_HUB_OFFLINE": "1"}
    log = open(tmp_path / "jupyterlab.log", "w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "jupyter", "lab", "--no-browser", "--IdentityProvider.token=", "--allow-root",
         "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}", "--ServerApp.port_retries=0",
         f"--ServerApp.root_dir={root}", "--LabApp.expose_app_in_browser=True",
         f"--LabApp.user_settings_dir={tmp_path / 'settings'}", f"--LabApp.workspaces_dir={tmp_path / 'workspaces'}"],
        cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(120):
            if proc.poll() is not None:
                raise RuntimeError(f"JupyterLab exited; see {tmp_path / 'jupyterlab.log'}")
            try:
                urllib.request.urlopen(f"{url}/api/status", timeout=2)
                break
            except OSError:
                time.sleep(0.5)
        else:
            raise RuntimeError("JupyterLab did not start within 60 s")
        yield url, tmp_path
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


def _csv_rows(path: Path) -> list[dict]:
    if not path.is_file():
        return []
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def _press(page, keys, key: str, header: str) -> str:
    """Press ``key`` with the focus wherever the last click or key left it in the browser (not in the keys box)
    and wait until the kernel took it (the box is emptied) and, for a move or a tag, the case changed; returns
    the header then shown."""
    assert page.evaluate("document.activeElement.closest('.mmb-error-browser') !== null"
                         " && !document.activeElement.closest('.mmb-keys')"), "the browser does not have the focus"
    page.keyboard.press(key)
    page.wait_for_function("document.querySelector('.mmb-keys input').value === ''", timeout=10_000)
    if key != "p":
        page.wait_for_function("(t) => document.querySelector('.mmb-header').innerText !== t", arg=header,
                               timeout=10_000)
    return page.locator(".mmb-header").inner_text()


@pytest.mark.timeout(600)
def test_tag_a_case_in_jupyterlab(lab):
    from playwright.sync_api import sync_playwright

    url, tmp = lab
    tags = tmp / "annotations" / f"{TAGGED_RUN}.csv"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)  # fresh temporary profile
        page = browser.new_page(viewport={"width": 1400, "height": 1900})
        try:
            page.goto(f"{url}/lab/tree/{NOTEBOOK}", timeout=60_000)
            page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=60_000)
            page.wait_for_function("window.jupyterapp && window.jupyterapp.shell.currentWidget"
                                   " && window.jupyterapp.shell.currentWidget.sessionContext"
                                   " && window.jupyterapp.shell.currentWidget.sessionContext.session"
                                   " && window.jupyterapp.shell.currentWidget.sessionContext.session.kernel",
                                   timeout=60_000)
            page.evaluate("window.jupyterapp.commands.execute('notebook:run-all-cells')")
            widget = page.locator(".mmb-error-browser")
            widget.wait_for(state="visible", timeout=420_000)  # the demo generates with SmolLM2 first
            first = page.locator(".mmb-header").inner_text()  # header of the first case
            markdown_cells = page.locator(".jp-MarkdownCell").count()

            page.locator(".mmb-category select").select_option(label="perceptual error")
            page.locator(".mmb-note textarea").fill("misreads the chart axis")
            page.locator(".mmb-note textarea").press("Tab")  # the note is sent on blur
            page.locator(".mmb-save-next").click()
            deadline = time.time() + 30
            while time.time() < deadline and not any(r["note"] for r in _csv_rows(tags)):
                time.sleep(0.3)
            rows = _csv_rows(tags)
            assert [(r["category"], r["note"]) for r in rows] == [("perceptual error", "misreads the chart axis")], rows
            assert rows[0]["run_id"] == TAGGED_RUN and rows[0]["benchmark"] == "mmmu"
            page.wait_for_function("(t) => document.querySelector('.mmb-header').innerText !== t", arg=first, timeout=10_000)  # moved to the next case
            page.wait_for_function("document.querySelector('.mmb-category select').value === '(untagged)'",
                                   timeout=10_000)  # the next case is untagged

            page.locator(".mmb-prev").click()  # back to the tagged case, enlarge its first image
            page.wait_for_function("(t) => document.querySelector('.mmb-header').innerText === t", arg=first, timeout=10_000)
            page.locator(".mmb-error-browser button", has_text="enlarge").first.click()
            page.locator(".mmb-large").wait_for(state="visible", timeout=10_000)
            page.wait_for_function("document.querySelector('.mmb-category select').value === 'perceptual error'",
                                   timeout=10_000)  # and shows its stored tag
            # keyboard, the focus on the browser (a click on the case header, not in the keys box): n to the next
            # (untagged) case, 3 tags it "reasoning error" and moves on, p comes back -- no click in between
            keys = page.locator(".mmb-keys input")
            page.locator(".mmb-header").click()
            second_header = _press(page, keys, "n", first)
            assert second_header != first
            before = page.locator(".mmb-distribution").inner_text()
            _press(page, keys, "3", second_header)
            deadline = time.time() + 30
            while time.time() < deadline and len(_csv_rows(tags)) < 2:
                time.sleep(0.3)
            rows = _csv_rows(tags)
            assert sorted(r["category"] for r in rows) == ["perceptual error", "reasoning error"], rows  # in the CSV
            page.wait_for_function(  # the distribution under the browser followed the key at once
                "document.querySelector(\".mmb-distribution tr[data-category='reasoning error'] .mmb-count\")"
                ".innerText.includes('1 by hand')", timeout=10_000)
            assert page.locator(".mmb-distribution").inner_text() != before
            _press(page, keys, "p", page.locator(".mmb-header").inner_text())
            page.wait_for_function("(t) => document.querySelector('.mmb-header').innerText === t", arg=second_header,
                                   timeout=10_000)
            page.wait_for_function("document.querySelector('.mmb-category select').value === 'reasoning error'",
                                   timeout=10_000)
            assert not page.locator(".mmb-error-browser .jp-OutputArea-output[data-mime-type*='error']").count()
            assert page.locator(".jp-MarkdownCell").count() == markdown_cells  # JupyterLab's "3" (heading) not fired
            assert page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']").filter(
                has_text="Traceback").count() == 0
            widget.scroll_into_view_if_needed()
            shot = SCREENSHOT if os.environ.get("MMBENCH_UPDATE_SCREENSHOTS") == "1" else tmp / "error_browser.png"
            shot.parent.mkdir(parents=True, exist_ok=True)
            widget.screenshot(path=str(shot))
            assert shot.stat().st_size > 10_000
        except BaseException:
            page.screenshot(path=str(tmp / "failure.png"), full_page=True)
            print(f"screenshot: {tmp / 'failure.png'}; server log: {tmp / 'jupyterlab.log'}")
            raise
        finally:
            browser.close()
