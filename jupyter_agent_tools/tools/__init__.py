"""The tools: one module per family, each short — argument model, tier, resources, call.

The heavy machinery lives in the resource packages (`lsp/`, `structural/`, `dap/`, ...).
"""
