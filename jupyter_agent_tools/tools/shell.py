"""bash: run a shell command in the working directory, bounded in time, output and memory."""

from __future__ import annotations

import os
import resource
import sys

from pydantic import Field

from ..processes import PIPE, STDOUT, ManagedProcess
from ..runtime import CallContext, ErrorCode, Tier, Tool, ToolArgs, ToolError, ToolResult
from ..runtime.limits import bound_text


class BashArgs(ToolArgs):
    command: str = Field(min_length=1, description="A bash command line.")
    timeout_seconds: int | None = Field(None, ge=1, description="Stop it after this long.")


class Bash(Tool):
    name = "bash"
    tier = Tier.EXEC
    description = (
        "Run a bash command in the working directory; stdout and stderr come back together, "
        "bounded. The whole process group is killed on timeout. A non-zero exit is an error "
        "carrying the output."
    )
    Args = BashArgs

    def label(self, args: BashArgs) -> str:
        return f"bash {args.command[:60]}"

    async def call(self, ctx: CallContext, args: BashArgs) -> ToolResult:
        runtime = ctx.runtime
        timeout = min(args.timeout_seconds or runtime.bash_timeout_seconds,
                      runtime.max_bash_timeout_seconds)
        memory_bytes = runtime.max_bash_memory_mb * 1024 * 1024

        def limit_memory() -> None:
            if memory_bytes > 0:
                resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))

        process = await ManagedProcess.start(
            ["bash", "-c", args.command], cwd=ctx.run.cwd, env=server_environment(),
            stdout=PIPE, stderr=STDOUT, preexec_fn=limit_memory,
        )
        done = await process.collect(timeout, runtime.max_output_chars * 4)
        output = bound_text(done.stdout.text(), runtime.max_output_chars)[0]
        if done.timed_out:
            raise ToolError(
                ErrorCode.TIMEOUT,
                f"The command ran past {timeout}s and its process group was killed. Run it in "
                "the background, or with a longer timeout_seconds "
                f"(at most {runtime.max_bash_timeout_seconds}).",
                text=output, data={"output": output},
            )
        code = done.returncode
        if code != 0:
            raise ToolError(
                ErrorCode.FAILED,
                f"The command exited with status {code}. Read its output above and fix the "
                "command or the code it ran.",
                text=output or "(no output)", data={"exit_code": code, "output": output},
            )
        return ToolResult.success(output or "(no output)", {"exit_code": 0, "output": output})


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
