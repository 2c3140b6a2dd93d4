"""`jupyter agent-tools …`: status, tool schemas, one-off calls and the demo, embedded.

The CLI runs its own Runtime over the current directory (or --root): no server is needed.
Exit codes of `call`: 0 the tool succeeded, 1 it answered an error, 2 bad usage.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any

from .runtime import Origin, Runtime, ToolError
from .runtime.schemas import FORMATS

EXIT_OK, EXIT_TOOL_ERROR, EXIT_USAGE = 0, 1, 2


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="jupyter agent-tools", description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=".", help="the root no path may leave (default: .)")
    commands = parser.add_subparsers(dest="command", required=True)

    status = commands.add_parser("status", help="what each resource can serve, or why not")
    status.add_argument("--json", action="store_true", help="print JSON")

    tools = commands.add_parser("tools", help="the tools a surface sees, with their schemas")
    tools.add_argument("--surface", default="full", choices=["full", "plan", "readonly"])
    tools.add_argument("--format", choices=FORMATS, help="print schemas in this format (JSON)")

    call = commands.add_parser("call", help="call one tool and print its result")
    call.add_argument("tool")
    call.add_argument("args", nargs="?", default="{}", help="the arguments as a JSON object")
    call.add_argument("--cwd", default=".", help="the run's working directory, inside the root")
    call.add_argument("--surface", default="full", choices=["full", "plan", "readonly"])
    call.add_argument("--conversation-id", default="cli", help="debug sessions are keyed by it")
    call.add_argument("--json", action="store_true", help="print the whole result as JSON")

    commands.add_parser("demo", help="the tour of every tool on a bundled sample project")

    replay = commands.add_parser("replay", help="re-issue a transcript's calls; exit 1 on any "
                                 "changed result (ok, error code or text)")
    replay.add_argument("transcript", help="JSON from GET agent-tools/api/runs/{id}/transcript")
    replay.add_argument("--cwd", default=".", help="the fresh run's working directory, inside the root")
    replay.add_argument("--surface", default="full", choices=["full", "plan", "readonly"])
    replay.add_argument("--json", action="store_true", help="print the report as JSON")
    replay.add_argument("--save", metavar="PATH", help="also write the new transcript here")

    token = commands.add_parser("token", help="agent tokens: credentials for agents, each with "
                                "a ceiling (create, list, revoke)")
    token.add_argument("--file", metavar="PATH", help="the token file (default: <Jupyter data "
                       "directory>/agent_tools/tokens.sqlite3, as c.AgentTokens.path)")
    actions = token.add_subparsers(dest="action", required=True)
    create = actions.add_parser("create", help="mint a token and print it (shown once)")
    create.add_argument("--surface", required=True, choices=["full", "plan", "readonly"],
                        help="the widest surface its runs may have (readonly < plan < full)")
    create.add_argument("--approvals", required=True, choices=["auto", "ask", "deny"],
                        help="the least strict approvals its runs may have (auto < ask < deny)")
    create.add_argument("--cwd", default=".", help="the folder, relative to the server root, "
                        "its runs must work inside (default: the root)")
    create.add_argument("--space", help="the only space its runs may show cards in")
    create.add_argument("--expires", default="30d", help="when it expires: 90s, 15m, 12h, 7d, "
                        "2w (default: 30d)")
    create.add_argument("--label", default="agent", help="what it is for, as `list` shows it")
    create.add_argument("--json", action="store_true", help="print JSON")
    listing = actions.add_parser("list", help="the tokens, their ceilings and expiry")
    listing.add_argument("--json", action="store_true", help="print JSON")
    revoke = actions.add_parser("revoke", help="revoke a token: its next request is refused")
    revoke.add_argument("id", help="the token's id (from `list`)")
    return parser


def main(argv: list[str] | None = None) -> int:
    options = _parser().parse_args(argv)  # exits 2 on bad usage
    try:
        return asyncio.run(_dispatch(options))
    except ToolError as error:
        print(f"error [{error.code.value}]: {error.message}", file=sys.stderr)
        return EXIT_USAGE


async def _dispatch(options: argparse.Namespace) -> int:
    if options.command == "token":
        return _token(options)
    if options.command == "demo":
        from .demo.tour import run_demo

        return EXIT_TOOL_ERROR if await run_demo() else EXIT_OK
    if options.command == "replay":
        from .testing.replay import replay_command

        return await replay_command(options)
    runtime = Runtime(root_dir=options.root)
    try:
        if options.command == "status":
            return _print_status(await runtime.status(), options.json)
        if options.command == "tools":
            run = await runtime.create_run(surface=options.surface, conversation_id="cli", origin="cli")
            return _print_tools(run.schemas(options.format or "json"), options.format)
        return await _call(runtime, options)
    finally:
        await runtime.shutdown()


def _print_status(status: dict[str, Any], as_json: bool) -> int:
    if as_json:
        print(json.dumps(status, indent=2, default=str))
        return EXIT_OK
    print(f"root: {status['root_dir']}")
    print(f"tools: {', '.join(status['tools'])}")
    for origin, error in {**status["tool_load_errors"], **status["resource_errors"]}.items():
        print(f"  could not load {origin}: {error}")
    sandbox = status.get("sandbox")
    if sandbox is not None:  # what a sandboxed run can have here (runtime/sandbox.py)
        network = ", ".join(f"{surface} {how or 'cannot'}"
                            for surface, how in sandbox["network"].items())
        print(f"sandbox: Landlock ABI {sandbox['landlock_abi']}; network off: {network}"
              if sandbox["available"] else f"sandbox: unavailable ({sandbox['reason']})")
    for resource, detail in status["resources"].items():
        print(f"{resource}:")
        print("  " + json.dumps(_abridged(detail), default=str, indent=2).replace("\n", "\n  "))
    return EXIT_OK


def _abridged(value: Any, max_items: int = 8) -> Any:
    """Long lists shortened for reading (`--json` prints them whole)."""
    if isinstance(value, dict):
        return {key: _abridged(item, max_items) for key, item in value.items()}
    if isinstance(value, list):
        if len(value) > max_items:
            return [*(_abridged(item) for item in value[:max_items]),
                    f"... {len(value) - max_items} more (see --json)"]
        return [_abridged(item, max_items) for item in value]
    return value


def _print_tools(schemas: list[dict[str, Any]], fmt: str | None) -> int:
    if fmt:
        print(json.dumps(schemas, indent=2))
        return EXIT_OK
    for schema in schemas:
        params = schema["parameters"].get("properties", {})
        required = set(schema["parameters"].get("required", []))
        signature = ", ".join(name if name in required else f"{name}?" for name in params)
        print(f"{schema['name']:<12} {schema['tier']:<5} {{{signature}}}")
        print(f"{'':<18} {schema['description']}")
    return EXIT_OK


async def _call(runtime: Runtime, options: argparse.Namespace) -> int:
    try:
        args = json.loads(options.args)
    except json.JSONDecodeError as exc:
        print(f"error: ARGS is not JSON ({exc})", file=sys.stderr)
        return EXIT_USAGE
    if not isinstance(args, dict):
        print("error: ARGS must be a JSON object", file=sys.stderr)
        return EXIT_USAGE
    run = await runtime.create_run(cwd=options.cwd, surface=options.surface,
                                   conversation_id=options.conversation_id, origin="cli")
    result = await run.call(options.tool, args, origin=Origin.CLI)
    if options.json:
        print(json.dumps(result.to_json(), indent=2, default=str))
    else:
        print(result.text)
    return EXIT_OK if result.ok else EXIT_TOOL_ERROR


def _token(options: argparse.Namespace) -> int:
    """`token create|list|revoke`, on the token file itself: no server needed (a running one
    reads the file at each agent-token request)."""
    from pathlib import Path

    from .agent_tokens import Ceiling, TokenStore, default_path, normalize_cwd, parse_duration
    from .runtime import Approvals, Surface

    store = TokenStore(Path(options.file).expanduser() if options.file else default_path())
    try:
        if options.action == "create":
            try:
                ceiling = Ceiling(Surface(options.surface), Approvals(options.approvals),
                                  normalize_cwd(options.cwd), options.space or None)
                record, secret = store.create(options.label, ceiling,
                                              parse_duration(options.expires))
            except ValueError as exc:
                print(f"error: {exc}", file=sys.stderr)
                return EXIT_USAGE
            if options.json:
                print(json.dumps({**record.to_json(), "token": secret}, indent=2))
                return EXIT_OK
            print(secret)
            print(f"agent token {record.id} ({record.label}): {record.ceiling.describe()}; "
                  f"expires {_when(record.expires_at)}. Shown once: it is stored hashed.",
                  file=sys.stderr)
            return EXIT_OK
        if options.action == "list":
            tokens = store.tokens()
            if options.json:
                print(json.dumps([token.to_json() for token in tokens], indent=2))
                return EXIT_OK
            for token in tokens:
                state = "expired" if token.expired() else f"expires {_when(token.expires_at)}"
                print(f"{token.id}  {token.label}  {token.ceiling.describe()}  {state}")
            if not tokens:
                print("no agent tokens; make one with `jupyter agent-tools token create`",
                      file=sys.stderr)
            return EXIT_OK
        if store.revoke(options.id):
            print(f"revoked agent token {options.id}")
            return EXIT_OK
        print(f"error: no agent token {options.id!r} (see `jupyter agent-tools token list`)",
              file=sys.stderr)
        return EXIT_TOOL_ERROR
    finally:
        store.close()


def _when(timestamp: float) -> str:
    import time

    return time.strftime("%Y-%m-%d %H:%M %Z", time.localtime(timestamp))


if __name__ == "__main__":
    sys.exit(main())
