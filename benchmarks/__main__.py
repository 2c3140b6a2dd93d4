"""Run every benchmark in turn, each in a process of its own: python -m benchmarks

A process per benchmark, as `python -m benchmarks.bench_X` runs it alone: none inherits the
heap, threads, imports or event-loop state the others leave behind, and one that crashes
(a native extension, a browser) does not end the run.
"""

import pkgutil
import subprocess
import sys

import benchmarks

failed = []
for info in sorted(pkgutil.iter_modules(benchmarks.__path__), key=lambda m: m.name):
    if not info.name.startswith("bench_"):
        continue
    print(f"\n=== {info.name} ===", flush=True)
    # Go on after a failure: one broken benchmark must not hide the rest.
    if subprocess.run([sys.executable, "-m", f"benchmarks.{info.name}"], check=False).returncode:
        failed.append(info.name)
        print(f"{info.name} failed (its output above says why)", flush=True)
sys.exit(1 if failed else 0)
