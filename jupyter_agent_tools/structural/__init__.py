"""Structural search and staged rewrites: ast-grep's engine, tree-sitter where it has no grammar.

Kept free of imports: search workers import this package's grammar, pattern and match
modules without loading the runtime.
"""
