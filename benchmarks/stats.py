"""Latency summaries for benchmark output."""

from __future__ import annotations

import statistics


def summarize(samples_s: list[float]) -> dict[str, float]:
    ordered = sorted(samples_s)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return {
        "calls_per_s": len(ordered) / sum(ordered),
        "p50_ms": statistics.median(ordered) * 1000,
        "p99_ms": p99 * 1000,
    }


def line(name: str, summary: dict[str, float]) -> str:
    return (f"{name:<34} {summary['calls_per_s']:>10.0f} calls/s   p50 {summary['p50_ms']:8.3f} ms"
            f"   p99 {summary['p99_ms']:8.3f} ms")
