"""The `command` backend: a worker is an outside program (e.g. a coding-agent CLI).

The brief goes on its stdin. Its environment names the server, its run and a token scoped
to that run, so its own tool calls go through that run's gate:

- JUPYTER_SERVER_URL: the server's URL (with its base_url)
- JUPYTER_TOKEN: the run token (never the server's token), sent as `Authorization: token ...`
- JUPYTER_AGENT_TOOLS_RUN_ID, JUPYTER_AGENT_TOOLS_WORKER_ID, JUPYTER_AGENT_TOOLS_TIER

(`jupyter_agent_tools.client.AgentToolsClient.discover()` picks the first two up.) The program
runs under a keeper (processes.py): when it exits, when the worker is stopped (SIGTERM, then
SIGKILL after kill_grace_seconds) and when the server stops or dies (`kill -9` too),
everything it started ends with it, double forks and setsid'ed processes included.
The tail of its standard output is the worker's last result.
"""

from __future__ import annotations

import asyncio
import os
import shutil
from typing import Any
from urllib.parse import urlsplit

from traitlets import Dict, Float, List, Unicode

from ..processes import PIPE, BoundedOutput, ManagedProcess, drain
from .backends import WorkerBackend, WorkerFailed, WorkerJob, tail

# Secrets of the hosting server that a worker must not inherit.
_SERVER_SECRETS = ("JUPYTER_TOKEN", "JPY_API_TOKEN", "JUPYTERHUB_API_TOKEN")
# A pipe still open after the group is dead belongs to a process that left the group.
_READERS_SECONDS = 5.0


class CommandBackend(WorkerBackend):
    """Runs each worker as a program started from an argv template per tier."""

    name = "command"
    uses_http = True

    argv = Dict(
        key_trait=Unicode(), value_trait=List(Unicode()), default_value={},
        help="The program to start per tier ('fast', 'good'), as an argv list. Items may use "
        "{tier}, {worker_id}, {run_id}, {label} and {cwd}; no shell is involved. The brief "
        "is written to its stdin. Example: {'fast': ['my-agent', '--model', 'small'], "
        "'good': ['my-agent', '--model', 'large']}. No default: configure one to use workers.",
    ).tag(config=True)
    kill_grace_seconds = Float(
        2.0, help="After SIGTERM, how long a stopped worker's process group gets before SIGKILL."
    ).tag(config=True)

    def unavailable(self, grade: str) -> str | None:
        template = self.argv.get(grade)  # keyed by what users call a worker's tier
        if not template:
            return (f"No command is configured for tier {grade!r}. Set "
                    f"c.CommandBackend.argv = {{{grade!r}: [...]}}, or use the python backend.")
        if not getattr(getattr(self.parent, "runtime", None), "server_url", None):
            return ("Command workers call tools over HTTP, and this runtime has no server. "
                    "Run under jupyter server, or use the python backend.")
        if shutil.which(template[0]) is None:
            self.log.warning("worker command for tier %s not found: %s", grade, template[0])
            return (f"The program configured for tier {grade!r} is not installed or not on PATH; "
                    "ask the user to install it or to change c.CommandBackend.argv.")
        return None

    def _argv(self, job: WorkerJob) -> list[str]:
        fields = {"tier": job.grade, "worker_id": job.worker_id, "run_id": job.run.id,
                  "label": job.label, "cwd": str(job.run.cwd)}
        try:
            return [part.format(**fields) for part in self.argv[job.grade]]
        except (KeyError, IndexError, ValueError) as exc:
            raise WorkerFailed(f"c.CommandBackend.argv for tier {job.grade!r} has a bad "
                               f"placeholder ({exc}); ask the user to fix it.") from None

    def _env(self, job: WorkerJob) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k not in _SERVER_SECRETS}
        env.update(
            JUPYTER_SERVER_URL=job.server_url,
            JUPYTER_TOKEN=job.token or "",
            JUPYTER_AGENT_TOOLS_RUN_ID=job.run.id,
            JUPYTER_AGENT_TOOLS_WORKER_ID=job.worker_id,
            JUPYTER_AGENT_TOOLS_TIER=job.grade,
        )
        return env

    async def run(self, job: WorkerJob) -> str:
        # A sandboxed run's worker command is confined as its run's (the worker's) are; with
        # the network off it may still reach this server's port, to call its tools.
        server_port = urlsplit(job.server_url).port if job.server_url else None
        process = await ManagedProcess.start(
            self._argv(job), cwd=job.run.cwd,
            env={**self._env(job), **job.run.sandbox.env("workers")}, stdin=PIPE,
            owned=True, grace_seconds=self.kill_grace_seconds,
            sandbox=job.run.sandbox.policy("workers",
                                           ports=[server_port] if server_port else None),
        )
        keep = job.max_result_chars * 4  # bytes: enough for max_result_chars of UTF-8
        out, err = BoundedOutput(keep, "tail"), BoundedOutput(keep, "tail")

        def decoded(buffer: BoundedOutput) -> str:
            return tail(buffer.text(), job.max_result_chars)

        def report(chunk: bytes) -> None:
            out.add(chunk)
            job.report(decoded(out))

        pipes = process.process
        assert pipes.stdout is not None and pipes.stderr is not None
        feeder = asyncio.ensure_future(_feed(pipes, job.brief))
        readers = asyncio.ensure_future(asyncio.gather(drain(pipes.stdout, report),
                                                       drain(pipes.stderr, err.add)))
        try:
            await process.exited()
        finally:
            # Cancelled (the worker is being stopped): SIGTERM, the grace, then SIGKILL. Either
            # way, whatever the program left behind goes too (which closes the pipes).
            await process.stop(self.kill_grace_seconds if process.running else 0)
            feeder.cancel()
            if pipes.stdin is not None:
                pipes.stdin.close()
            await _settle(readers, asyncio.ensure_future(pipes.wait()))
        result = decoded(out)
        if process.returncode != 0:
            errors = decoded(err).strip()
            raise WorkerFailed(
                f"{result}\n[the worker exited with status {process.returncode}"
                + (f"; its stderr ends with:\n{errors}]" if errors else "]")
            )
        return result


async def _feed(process: asyncio.subprocess.Process, brief: str) -> None:
    assert process.stdin is not None
    try:
        process.stdin.write(brief.encode())
        await process.stdin.drain()
        process.stdin.close()
    except OSError:
        pass  # the program does not read its brief: its business


async def _settle(*pending: asyncio.Future[Any]) -> None:
    """Let the output readers reach end of file; give up on a pipe held open elsewhere."""
    await asyncio.wait(set(pending), timeout=_READERS_SECONDS)
    for future in pending:
        if not future.done():
            future.cancel()
        elif not future.cancelled():
            future.exception()  # retrieved: a read error only loses output

