"""Runs on a user's kernel: what the runtime asks of the kernels resource, and its refusals.

`create_run(kernel_id=... | notebook=...)` asks the kernels resource (a `UserKernelLender`)
for the user's kernel. The resource raises the refusals declared here, as facts; the runtime
words them for whoever creates the run. They are declared here, not in the kernels package,
so that the runtime never imports a resource package.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol, runtime_checkable

from .results import ErrorCode, ToolError


class UserKernelRef(Protocol):
    """The kernel a run borrows, and the notebook whose session named it (if any)."""

    @property
    def kernel_id(self) -> str: ...

    @property
    def notebook(self) -> str | None: ...


@runtime_checkable
class UserKernelLender(Protocol):
    """A resource provider that lends runs a kernel of the server's (the KernelFactory)."""

    async def find_user_kernel(self, *, kernel_id: str | None,
                               notebook: Path | None) -> UserKernelRef: ...


class UserKernelRefused(Exception):
    """Raised by a UserKernelLender: the run cannot have that kernel."""


class NoServerKernels(UserKernelRefused):
    """The runtime is embedded: there are no server kernels to borrow."""


class NoSuchUserKernel(UserKernelRefused):
    def __init__(self, kernel_id: str) -> None:
        super().__init__(f"the server has no kernel {kernel_id!r}")
        self.kernel_id = kernel_id


class NotebookWithoutKernel(UserKernelRefused):
    def __init__(self, notebook: str) -> None:
        super().__init__(f"no kernel is running for notebook {notebook!r}")
        self.notebook = notebook


class NotPythonKernel(UserKernelRefused):
    def __init__(self, kernel_id: str, language: str) -> None:
        super().__init__(f"kernel {kernel_id} is a {language or 'non-Python'} kernel")
        self.kernel_id = kernel_id
        self.language = language


class KernelInUse(UserKernelRefused):
    """Another open run already works in the kernel."""

    def __init__(self, kernel_id: str, run_id: str) -> None:
        super().__init__(f"run {run_id} already works in kernel {kernel_id}")
        self.kernel_id = kernel_id
        self.run_id = run_id


def refusal_error(exc: UserKernelRefused) -> ToolError:
    """What a refused `kernel_id` / `notebook` means to whoever creates the run."""
    match exc:
        case NoServerKernels():
            return ToolError(ErrorCode.UNAVAILABLE,
                             "kernel_id and notebook need a Jupyter server's kernels, and this "
                             "runtime is embedded (no server kernel manager). Run the agent in "
                             "the server (jupyter lab / jupyter server), or create the run "
                             "without them.")
        case NoSuchUserKernel(kernel_id=kernel_id):
            return ToolError(ErrorCode.NOT_FOUND,
                             f"The server has no kernel {kernel_id!r}. List the running kernels "
                             "(GET api/kernels) and pass one of their ids, or pass notebook "
                             "instead.")
        case NotPythonKernel(kernel_id=kernel_id, language=language):
            return ToolError(ErrorCode.INVALID_ARGUMENTS,
                             f"Kernel {kernel_id} is a {language or 'non-Python'} kernel; eval "
                             "can borrow only a Python kernel. Create the run without "
                             "kernel_id/notebook.")
        case NotebookWithoutKernel(notebook=notebook):
            return ToolError(ErrorCode.NOT_FOUND,
                             f"No kernel is running for notebook {notebook!r}. Open it in "
                             "JupyterLab (or start its kernel), then create the run again.")
        case KernelInUse(kernel_id=kernel_id, run_id=run_id):
            return ToolError(ErrorCode.SESSION_EXISTS,
                             f"Run {run_id} already works in kernel {kernel_id}; one run at a "
                             "time may. Use that run, or close it first.")
    return ToolError(ErrorCode.UNAVAILABLE, f"The user's kernel cannot be used: {exc}.")
