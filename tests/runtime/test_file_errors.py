"""OS errors become contract codes with a next step; "a bug in the tool" stays for bugs."""

from __future__ import annotations

import errno
import os

import pytest
from pydantic import Field

from jupyter_agent_tools.runtime import Resource, Tier, Tool, ToolArgs, ToolResult
from jupyter_agent_tools.runtime.file_errors import os_error

EXPECTED = [
    (errno.ENAMETOOLONG, "invalid_arguments", "too long"),
    (errno.ENOENT, "not_found", "does not exist"),
    (errno.ENOTDIR, "not_found", "not a folder"),
    (errno.EISDIR, "invalid_arguments", "is a folder"),
    (errno.ELOOP, "path_outside_root", "symbolic link"),
    (errno.EACCES, "permission_denied", "does not let the server's user"),
    (errno.EPERM, "permission_denied", "does not let the server's user"),
    (errno.ENOSPC, "failed", "Check free space"),
    (errno.EROFS, "failed", "writable"),
    (errno.EMFILE, "failed", "Try again in a moment"),
]


@pytest.mark.parametrize(("number", "code", "says"), EXPECTED)
def test_each_os_error_has_its_code_and_names_the_file(number, code, says):
    exc = OSError(number, "reason", "/tmp/.f4.py.1a2b.tmp")
    error = os_error(exc, "pkg/f4.py", action="write")
    assert error.code.value == code
    assert says in error.message and "pkg/f4.py" in error.message
    assert ".tmp" not in error.message and "bug" not in error.message
    if number != errno.ELOOP:
        assert "no file was changed" in error.message


def test_without_a_name_the_errors_own_filename_is_used_and_cut():
    error = os_error(OSError(errno.ENAMETOOLONG, "File name too long", "x" * 5000))
    assert error.code.value == "invalid_arguments" and len(error.message) < 400


class _OpenArgs(ToolArgs):
    path: str = Field(description="A path handed to open() as is.")


class _OpenAsIs(Tool):
    """A tool that forgets to map its OSError: the dispatch path must still answer well."""

    name = "open_as_is"
    tier = Tier.READ
    description = "Opens a path without any checks."
    Args = _OpenArgs
    requires = frozenset({Resource.WORKDIR})

    async def call(self, ctx, args):
        with open(ctx.run.cwd / args.path):
            return ToolResult.success("opened")


async def test_run_call_maps_an_oserror_no_tool_caught(runtime, root):
    (root / "file.txt").write_text("x")
    runtime.registry.add(_OpenAsIs())
    run = await runtime.create_run()
    for path, code in [("y" * 300, "invalid_arguments"), ("missing.txt", "not_found"),
                       ("file.txt/inner", "not_found"), (".", "invalid_arguments")]:
        result = await run.call("open_as_is", {"path": path})
        assert result.code == code, result.text
        assert "bug in the tool" not in result.text


class _WriteToClosedPipe(Tool):
    """A tool whose OSError is about no file: that stays a bug, reported as one."""

    name = "write_to_closed_pipe"
    tier = Tier.READ
    description = "Writes to a pipe nobody reads."
    Args = ToolArgs
    requires = frozenset({Resource.WORKDIR})

    async def call(self, ctx, args):
        read_end, write_end = os.pipe()
        os.close(read_end)
        try:
            os.write(write_end, b"x")
        finally:
            os.close(write_end)
        return ToolResult.success("written")


async def test_an_oserror_about_no_file_is_still_reported_as_a_bug(runtime):
    runtime.registry.add(_WriteToClosedPipe())
    run = await runtime.create_run()
    result = await run.call("write_to_closed_pipe", {})
    assert result.code == "failed" and "bug in the tool" in result.text
    assert "BrokenPipeError" in result.text
