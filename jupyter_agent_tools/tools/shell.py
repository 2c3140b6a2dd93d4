"""bash: run a shell command in the working directory, bounded in time, output and memory;
job: continue the run's background jobs (`bash {background: true}`).

Every command runs under a keeper (processes.py, keeper.py): when its shell exits, times out,
is cancelled, or its run closes — or the server stops or dies — everything it started ends,
double forks, `nohup` and `setsid` included. Work that must go on is a background job of the
run, which ends with the run.
"""

from __future__ import annotations

import os
import resource
import sys
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from ..processes import PIPE, STDOUT, BoundedOutput, ManagedProcess
from ..runtime import CallContext, ErrorCode, Tier, Tool, ToolArgs, ToolError, ToolResult
from ..runtime.jobs import Job
from ..runtime.limits import bound_text
from ..runtime.protocols import RuntimeView, SandboxView
from .outputs import BashOutput, JobOutput


class BashArgs(ToolArgs):
    command: str = Field(min_length=1, description="A bash command line.")
    timeout_seconds: int | None = Field(
        None, ge=1, description="Stop it after this long. A background job has no limit "
        "unless given one: it runs until it ends, is cancelled, or the run closes.")
    background: bool = Field(
        False, description="Start it as a background job of the run and answer at once with "
        "its job_id; read its output, wait for it or cancel it with the `job` tool.")


class Bash(Tool):
    name = "bash"
    tier = Tier.EXEC
    description = (
        "Run a bash command in the working directory; stdout and stderr come back together, "
        "bounded. A non-zero exit is an error carrying the output. The call ends when the "
        "shell exits, and then everything it started is killed (`cmd &`, nohup and setsid "
        "too), as on timeout: to keep something running (a server, a watcher, a long build), "
        "start it with background: true and follow it with the `job` tool. A command still "
        "running after a while answers status running with a job_id: it goes on as a job."
    )
    Args = BashArgs
    Output = BashOutput

    def label(self, args: BashArgs) -> str:
        return f"bash {'(background) ' if args.background else ''}{args.command[:60]}"

    async def call(self, ctx: CallContext, args: BashArgs) -> ToolResult:
        runtime = ctx.runtime
        cwd = ctx.run.cwd
        jobs = ctx.run.jobs
        sandbox = ctx.run.sandbox
        if args.background:
            job = jobs.start(
                "bash", args.command[:200],
                lambda job: run_command(runtime, args.command, cwd, args.timeout_seconds,
                                        job.output, sandbox),
                background=True)
            return ToolResult.success(
                f"Started {job.id} in the background: {args.command[:200]}\nFollow it with "
                f'job {{action: "output" | "wait" | "cancel", job_id: "{job.id}"}}; it ends '
                "when it exits, is cancelled, or this run closes.",
                {"job_id": job.id, "status": "running"})
        timeout = min(args.timeout_seconds or runtime.bash_timeout_seconds,
                      runtime.max_bash_timeout_seconds)
        # The call runs as a job of the run (`runs_long`): closing the run ends it like a
        # background one, and past max_call_seconds it goes on as one; the job's output is
        # the end of what it printed, the call's answer the beginning.
        output = BoundedOutput(runtime.max_output_chars * 4, "head")
        if ctx.job is not None:
            output = _Both(output, ctx.job.output)
        return await run_command(runtime, args.command, cwd, timeout, output, sandbox)

    def runs_long(self, args: BashArgs) -> bool:
        return not args.background


class _Both(BoundedOutput):
    """Keeps the head of a stream, and hands every chunk on to another output too."""

    def __init__(self, head: BoundedOutput, also: BoundedOutput) -> None:
        super().__init__(head.max_bytes, head.keep)
        self.also = also

    def add(self, chunk: bytes) -> None:
        super().add(chunk)
        self.also.add(chunk)


async def run_command(runtime: RuntimeView, command: str, cwd: Path,
                      timeout: float | None, output: BoundedOutput,
                      sandbox: SandboxView | None = None) -> ToolResult:
    """Run `command` under a keeper until its shell exits (then what it left is killed) or
    `timeout` passes; its answer. Cancelled, it kills the whole tree before it ends. In a
    sandboxed run (`sandbox`), the keeper confines itself and so the command first."""
    memory_bytes = runtime.max_bash_memory_mb * 1024 * 1024

    def limit_memory() -> None:
        if memory_bytes > 0:
            resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))

    process = await ManagedProcess.start(
        ["bash", "-c", command], cwd=cwd,
        env={**server_environment(), **(sandbox.env("bash") if sandbox else {})},
        stdout=PIPE, stderr=STDOUT, preexec_fn=limit_memory, owned=True,
        sandbox=sandbox.policy("bash") if sandbox else None,
    )
    done = await process.collect(timeout, output.max_bytes, out=output)
    text = bound_text(output.text() if output.keep == "head" else _tail(output),
                      runtime.max_output_chars)[0]
    if done.timed_out:
        raise ToolError(
            ErrorCode.TIMEOUT,
            f"The command ran past {timeout}s and everything it started was killed. Run it "
            "with background: true, or with a longer timeout_seconds "
            f"(at most {runtime.max_bash_timeout_seconds}).",
            text=text, data={"output": text},
        )
    code = done.returncode
    if code != 0:
        raise ToolError(
            ErrorCode.FAILED,
            f"The command exited with status {code}. Read its output above and fix the "
            "command or the code it ran.",
            text=text or "(no output)", data={"exit_code": code, "output": text},
        )
    return ToolResult.success(text or "(no output)", {"exit_code": 0, "output": text})


def _tail(output: BoundedOutput) -> str:
    text = output.text()
    return f"[... the first {output.total - len(output.data)} bytes were not kept ...]\n{text}" \
        if output.truncated else text


# -- job -----------------------------------------------------------------------------------


class JobArgs(ToolArgs):
    action: Literal["wait", "output", "cancel", "list"] = Field(
        description="wait: until the job ends or timeout_seconds pass, then its result (or "
        "its output so far); output: what it printed so far (the end of it); cancel: end it "
        "and everything it started; list: the run's jobs.")
    job_id: str | None = Field(None, description="The job, as bash {background: true} "
                               "answered it (every action but list).")
    timeout_seconds: float | None = Field(
        None, ge=0, description="wait: how long to wait (default c.Runtime.job_wait_seconds; "
        "at most c.Runtime.max_call_seconds, then it answers that the job still runs).")


class JobTool(Tool):
    name = "job"
    # Visible where jobs can be started (exec tools); each call is read-tier (`call_tier`).
    tier = Tier.EXEC
    description = (
        "Follow the run's jobs (bash {background: true}, and any call that answered status "
        "running with a job_id: eval, notebook run, bash): wait for one (its result, as the "
        "call would have answered; or still running), read its output so far, cancel it "
        "(with everything it started: a cell is interrupted), or list them. Jobs end when the "
        "run closes."
    )
    Args = JobArgs
    Output = JobOutput

    def call_tier(self, args: JobArgs) -> Tier:  # noqa: ARG002 - the same for every action
        # Never gated: each action only reads, or stops, work this run started, which passed
        # the gate when it was started; asking a human before stopping it would make stopping
        # runaway work harder than starting it.
        return Tier.READ

    def label(self, args: JobArgs) -> str:
        return f"job {args.action} {args.job_id or ''}".rstrip()

    async def call(self, ctx: CallContext, args: JobArgs) -> ToolResult:
        jobs = ctx.run.jobs
        if args.action == "list":
            listed = jobs.background()
            lines = [_line(job) for job in listed] or ["No jobs in this run."]
            return ToolResult.success("\n".join(lines),
                                      {"jobs": [job.describe() for job in listed]})
        if args.job_id is None:
            raise ToolError(ErrorCode.INVALID_ARGUMENTS,
                            f"job {args.action} needs job_id: the id bash {{background: true}} "
                            "answered; job {action: \"list\"} shows them.")
        job = jobs.get(args.job_id)
        runtime = ctx.runtime
        if args.action == "output":
            return _so_far(job, runtime, f"{_line(job)}.")
        if args.action == "cancel":
            if job.done:
                return _so_far(job, runtime, f"{_line(job)}: it had already ended.")
            await jobs.cancel(job)
            return _so_far(job, runtime, f"{_line(job)}: it and everything it started ended.")
        # Bounded like any call, so that waiting never needs a long-open request.
        timeout = min(runtime.job_wait_seconds if args.timeout_seconds is None
                      else args.timeout_seconds, runtime.max_job_wait_seconds,
                      runtime.max_call_seconds or runtime.max_job_wait_seconds)
        if not await job.wait(timeout):
            return _so_far(job, runtime, f"{_line(job)}: still running after {timeout:g}s. "
                           "Wait again, do something else meanwhile, or cancel it.")
        if job.status == "cancelled":
            return _so_far(job, runtime, f"{_line(job)}.")
        result = job.result()
        result.data = {**result.data, **job.describe()}
        result.text = f"{_line(job)}.\n{result.text}"
        return result


def _line(job: Job) -> str:
    described = job.describe()
    code = f", exit {described['exit_code']}" if "exit_code" in described else ""
    return f"{job.id} ({job.label[:80]}): {job.status}{code}"


def _so_far(job: Job, runtime: RuntimeView, headline: str) -> ToolResult:
    text = _tail(job.output)
    if len(text) > runtime.max_output_chars:
        text = "[... earlier output cut ...]\n" + text[-runtime.max_output_chars:]
    data: dict[str, Any] = {**job.describe(), "output": text}
    return ToolResult.success(f"{headline}\n{text or '(no output yet)'}", data)


def server_environment() -> dict[str, str]:
    """The server's environment, its Python's folder first on PATH, as a JupyterLab terminal
    of an activated environment has it: `jupyter`, `python` and `pip` are the server's (and
    the default kernel's) even when the server was started as `.venv/bin/jupyter lab`."""
    env = dict(os.environ)
    scripts = os.path.dirname(sys.executable)
    parts = env.get("PATH", "").split(os.pathsep)
    if scripts not in parts:
        env["PATH"] = os.pathsep.join([scripts, *filter(None, parts)])
    return env
