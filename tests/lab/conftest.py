"""A real JupyterLab on loopback with the agent-tools extension, and Debian's chromium to drive it.

The server is the project's `JupyterServerProcess` (jupyter_server with the JupyterLab
extension, which serves `/lab`); JupyterLab's settings and workspaces live in a temporary
directory so a test never reads or writes the user's. Chromium is Debian's (`/usr/bin/chromium`,
installed by scripts/setup.sh), started by Playwright with a fresh profile; nothing is downloaded.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import pytest

from jupyter_agent_tools.testing.agents import SERVER_ARGS
from jupyter_agent_tools.testing.server import JupyterServerProcess

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--no-first-run", "--disable-sync",
]
ARTIFACTS = Path(__file__).parent / "artifacts"
#: How long the browser waits for something to show (generous: 2 shared cores).
UI_TIMEOUT_MS = 60_000

sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is in the test extra")


@pytest.fixture(autouse=True)
def jp_asyncio_loop() -> Iterator[asyncio.AbstractEventLoop]:
    """pytest-jupyter's per-test loop, without making it this thread's loop.

    Playwright's sync API runs its own loop on this thread; the autouse original would pick that
    one up and fail to close it.
    """
    loop = asyncio.new_event_loop()
    yield loop
    loop.close()


def lab_server_process(root: Path, lab_state: Path, *extra_args: str) -> JupyterServerProcess:
    """A JupyterLab server (not started) rooted at `root`, its settings and workspaces kept in
    `lab_state`."""
    # No "get notified about Jupyter news?" toast over the panel (and no request for news).
    notification = lab_state / "settings" / "@jupyterlab" / "apputils-extension"
    notification.mkdir(parents=True)
    (notification / "notification.jupyterlab-settings").write_text('{"fetchNews": "false"}')
    return JupyterServerProcess(root, extra_args=[
        f"--LabApp.user_settings_dir={lab_state / 'settings'}",
        f"--LabApp.workspaces_dir={lab_state / 'workspaces'}",
        "--LabApp.news_url=None",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        "--LabApp.expose_app_in_browser=True",
        # Real-time collaboration's store, else `.jupyter_ystore.db` in the current directory.
        f"--SQLiteYStore.db_path={lab_state / 'ystore.db'}",
        *extra_args,
    ])


@pytest.fixture(scope="module")
def lab_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[JupyterServerProcess]:
    # Workers run the scripted agent (no model), as on Binder.
    server = lab_server_process(tmp_path_factory.mktemp("lab-root"),
                                tmp_path_factory.mktemp("lab-state"), *SERVER_ARGS)
    with server:
        yield server


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is absent: run scripts/setup.sh as root (apt-get install chromium)")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS,
                                             headless=True)
        yield browser
        browser.close()


class Lab:
    """A JupyterLab page: run commands, find the panel, wait for the lab's human to join."""

    def __init__(self, page: Any, server: JupyterServerProcess) -> None:
        self.page = page
        self.server = server

    def execute(self, command: str, args: dict[str, Any] | None = None) -> None:
        # What the command returns (a widget, say) stays in the page.
        self.page.evaluate(
            "async ([id, args]) => { await window.jupyterapp.commands.execute(id, args); }",
            [command, args or {}])

    def start(self, command: str, args: dict[str, Any] | None = None) -> None:
        """Start a command without waiting for it to finish (`notebook:run-all-cells` ends only
        when every cell has run, and the test has cells to answer meanwhile)."""
        self.page.evaluate(
            "([id, args]) => { void window.jupyterapp.commands.execute(id, args); }",
            [command, args or {}])

    @property
    def panel(self) -> Any:
        return self.page.locator("#agent-tools-panel")

    def call_in_background(self, run_id: str, tool: str, args: dict[str, Any]) -> Background:
        """Call a tool over HTTP on a thread of its own, as an agent waiting on a card would."""
        client = self.server.client()
        return Background(lambda: client.request("POST", f"runs/{run_id}/calls",
                                                 {"tool": tool, "args": args}))

    def wait_for_humans(self, space: str = "lab", timeout: float = 60.0) -> None:
        """Until the page's space socket counts as a human (ask_user needs one)."""
        client = self.server.client()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            humans = client.status()["resources"]["questions"].get("humans", {})
            if humans.get(space, 0) >= 1:
                return
            time.sleep(0.2)
        raise AssertionError(f"the lab never joined space {space!r}")


@contextmanager
def open_lab(browser: Any, server: JupyterServerProcess) -> Iterator[Lab]:
    """A new page of the lab, loaded, with the agent-tools extension active and joined."""
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    page.set_default_timeout(UI_TIMEOUT_MS)
    page.goto(f"{server.url}lab?token={server.token}")
    page.wait_for_selector("#jp-main-dock-panel", state="attached")
    page.wait_for_function("() => window.jupyterapp && window.jupyterapp.commands.hasCommand("
                           "'agent-tools:open-panel')")
    lab = Lab(page, server)
    lab.wait_for_humans()
    try:
        yield lab
    finally:
        context.close()


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Any:
    report = yield
    if report.when == "call":
        item.stash[CALL_FAILED] = report.failed
    return report


CALL_FAILED = pytest.StashKey[bool]()


@pytest.fixture()
def lab(browser: Any, lab_server: JupyterServerProcess,
        request: pytest.FixtureRequest) -> Iterator[Lab]:
    with open_lab(browser, lab_server) as page:
        yield page
        if request.node.stash.get(CALL_FAILED, False):
            # What the page showed when the test failed, for the CI log's reader.
            ARTIFACTS.mkdir(exist_ok=True)
            shot = ARTIFACTS / f"failed-{request.node.name}.png"
            page.page.screenshot(path=str(shot))
            print(f"screenshot of the failed test's page: {shot}")


@pytest.fixture()
def start_lab(browser: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[..., Lab]]:
    """`start_lab(root, *server_args)`: a lab of its own rooted at `root`, and a page of it;
    both end with the test (the page first)."""
    with ExitStack() as stack:
        def start(root: Path, *server_args: str) -> Lab:
            server = lab_server_process(root, tmp_path_factory.mktemp("lab-state"), *server_args)
            return stack.enter_context(open_lab(browser, stack.enter_context(server)))

        yield start


class Background:
    """A blocking call (an agent waiting on a card) on a thread; `result()` joins it."""

    def __init__(self, call: Callable[[], Any]) -> None:
        self._value: Any = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(call,), daemon=True)
        self._thread.start()

    def _run(self, call: Callable[[], Any]) -> None:
        try:
            self._value = call()
        except BaseException as error:  # noqa: BLE001 - re-raised in the test's thread
            self._error = error

    def result(self, timeout: float = 60.0) -> Any:
        self._thread.join(timeout)
        assert not self._thread.is_alive(), "the call did not return"
        if self._error is not None:
            raise self._error
        return self._value


@pytest.fixture()
def artifacts() -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS

