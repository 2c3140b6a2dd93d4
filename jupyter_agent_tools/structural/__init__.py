"""Structural search and staged rewrites on tree-sitter (the parser resource).

Kept free of imports: search workers import this package's grammar, pattern and match
modules without loading the runtime.
"""
