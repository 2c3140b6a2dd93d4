"""The demo: a tour of every tool on a bundled sample project, headless and printed."""
