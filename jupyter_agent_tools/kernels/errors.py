"""What can go wrong with a run's kernels, as plain facts (the eval tool words them).

A kernel that dies or times out under a cell is no error here: `RunInterpreters.execute`
returns it as a `CellRun`, with what the cell produced.
"""

from __future__ import annotations

from typing import Any

from ..runtime.user_kernels import (
    KernelInUse,
    NoServerKernels,
    NoSuchUserKernel,
    NotebookWithoutKernel,
    NotPythonKernel,
)


class KernelError(Exception):
    """Base class of the kernels resource's errors."""


# -- a run created on a user's kernel that it cannot have (the runtime words these) --------


class KernelsNeedServer(KernelError, NoServerKernels):
    """A user's kernel was asked for, and this runtime is embedded (no server kernels)."""


class UnknownKernel(KernelError, NoSuchUserKernel):
    """The server runs no kernel of that id."""


class NotebookHasNoKernel(KernelError, NotebookWithoutKernel):
    """No session of the server names a kernel for the notebook."""


class NotAPythonKernel(KernelError, NotPythonKernel):
    """The kernel runs another language; eval borrows only Python kernels."""


class KernelBorrowed(KernelError, KernelInUse):
    """Another open run already works in this user's kernel."""


# -- eval's kernels ----------------------------------------------------------------------


class UserKernelNotRunning(KernelError):
    """The user's kernel is shut down, or dead and not restarted within `waited_seconds`."""

    def __init__(self, kernel_id: str, waited_seconds: float) -> None:
        super().__init__(f"the user's kernel {kernel_id} is not running")
        self.kernel_id = kernel_id
        self.waited_seconds = waited_seconds


class UserKernelSilent(KernelError):
    """The user's kernel did not answer when the bridge was installed."""

    def __init__(self, kernel_id: str, reason: str) -> None:
        super().__init__(f"the user's kernel {kernel_id} did not answer: {reason}")
        self.kernel_id = kernel_id
        self.reason = reason


class UserKernelBusy(KernelError):
    """The user's kernel ran another cell all along, so set-up code never ran."""

    def __init__(self, kernel_id: str, waited_seconds: float) -> None:
        super().__init__(f"the user's kernel {kernel_id} was busy for {waited_seconds:g}s")
        self.kernel_id = kernel_id
        self.waited_seconds = waited_seconds


class SetupFailed(KernelError):
    """The bridge's set-up code failed in the kernel; `output` is the end of what it said."""

    def __init__(self, language: str, ending: str, output: str) -> None:
        super().__init__(f"setting up the {language} kernel failed ({ending})")
        self.language = language
        self.ending = ending
        self.output = output


class CellPaused(KernelError):
    """A cell of the kernel is stopped at a debugger's breakpoint: the kernel runs nothing
    else until the debugger resumes or detaches. `place`: where it stopped, if known."""

    def __init__(self, kernel_id: str, place: dict[str, Any] | None) -> None:
        super().__init__(f"a cell of kernel {kernel_id} is paused at a breakpoint")
        self.kernel_id = kernel_id
        self.place = place


class TooManyKernels(KernelError):
    def __init__(self, limit: int) -> None:
        super().__init__(f"{limit} kernels are running already")
        self.limit = limit


class UnknownLanguage(KernelError):
    def __init__(self, language: str, languages: tuple[str, ...]) -> None:
        super().__init__(f"no eval language {language!r}")
        self.language = language
        self.languages = languages


class KernelNotInstalled(KernelError):
    """No kernelspec fits the language; `install_hint` says how to get one."""

    def __init__(self, language: str, kernel_name: str, install_hint: str) -> None:
        super().__init__(f"no {language} kernel is installed (kernelspec {kernel_name!r})")
        self.language = language
        self.kernel_name = kernel_name
        self.install_hint = install_hint


class KernelDidNotStart(KernelError):
    """A kernel failed to start, or (`answered` False after `started`) never answered."""

    def __init__(self, language: str, kernel_name: str, reason: str, install_hint: str, *,
                 started: bool) -> None:
        super().__init__(f"the {language} kernel ({kernel_name}) did not start: {reason}")
        self.language = language
        self.kernel_name = kernel_name
        self.reason = reason
        self.install_hint = install_hint
        self.started = started


class GatewayUnreachable(KernelError):
    def __init__(self, reason: str) -> None:
        super().__init__(f"the kernel gateway did not answer ({reason})")
        self.reason = reason


class ResetRefused(KernelError):
    """reset was asked for the user's own kernel, which a run never restarts."""

    def __init__(self, kernel: str) -> None:
        super().__init__(f"reset of the user's {kernel} is refused")
        self.kernel = kernel


def status_reason(exc: KernelError) -> str:
    """Why a language is unavailable, for the status a human reads."""
    match exc:
        case KernelNotInstalled(language=language, kernel_name=name, install_hint=hint):
            return f"No {language} kernel is installed (kernelspec {name!r} not found). {hint}"
        case UnknownLanguage(language=language, languages=languages):
            return f"eval has no language {language!r}; use one of {languages}."
        case GatewayUnreachable(reason=reason):
            return (f"The kernel gateway did not answer ({reason}). Check that it is up at "
                    "c.GatewayClient.url.")
    return str(exc)
