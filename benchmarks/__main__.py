"""Run every benchmark in turn: python -m benchmarks"""

import importlib
import pkgutil
import sys

import benchmarks

failed = []
for info in sorted(pkgutil.iter_modules(benchmarks.__path__), key=lambda m: m.name):
    if not info.name.startswith("bench_"):
        continue
    print(f"\n=== {info.name} ===", flush=True)
    sys.argv = [info.name]
    try:
        importlib.import_module(f"benchmarks.{info.name}").main()
    except Exception as exc:  # noqa: BLE001 - report and go on: one broken benchmark must not hide the rest
        failed.append(info.name)
        print(f"{info.name} failed: {type(exc).__name__}: {exc}")
sys.exit(1 if failed else 0)
