"""bash: run a shell command in the working directory, bounded in time, output and memory."""

from __future__ import annotations

import asyncio
import resource

from pydantic import Field

from ..runtime import CallContext, ErrorCode, Tier, Tool, ToolArgs, ToolError, ToolResult
from ..runtime.limits import bound_text
from ..runtime.processes import signal_process_group


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
                      runtime.bash_max_timeout_seconds)
        memory_bytes = runtime.bash_memory_limit_mb * 1024 * 1024

        def limit_memory() -> None:
            if memory_bytes > 0:
                resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))

        process = await asyncio.create_subprocess_exec(
            "bash", "-c", args.command,
            cwd=ctx.run.cwd,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=limit_memory,
        )
        chunks: list[bytes] = []
        kept = 0
        cap = runtime.max_output_chars * 4

        async def collect() -> None:
            nonlocal kept
            assert process.stdout is not None
            while chunk := await process.stdout.read(65536):
                if kept < cap:
                    chunks.append(chunk)
                    kept += len(chunk)

        try:
            await asyncio.wait_for(asyncio.gather(collect(), process.wait()), timeout)
        except asyncio.TimeoutError:
            signal_process_group(process.pid)
            await process.wait()
            output = _decode(chunks, runtime.max_output_chars)
            raise ToolError(
                ErrorCode.TIMEOUT,
                f"The command ran past {timeout}s and its process group was killed. Run it in "
                "the background, or with a longer timeout_seconds "
                f"(at most {runtime.bash_max_timeout_seconds}).",
                text=output, data={"output": output},
            ) from None
        finally:
            if process.returncode is None:
                signal_process_group(process.pid)
        output = _decode(chunks, runtime.max_output_chars)
        code = process.returncode
        if code != 0:
            raise ToolError(
                ErrorCode.FAILED,
                f"The command exited with status {code}. Read its output above and fix the "
                "command or the code it ran.",
                text=output or "(no output)", data={"exit_code": code, "output": output},
            )
        return ToolResult.success(output or "(no output)", {"exit_code": 0, "output": output})


def _decode(chunks: list[bytes], max_chars: int) -> str:
    text = b"".join(chunks).decode("utf-8", errors="replace")
    return bound_text(text, max_chars)[0]
