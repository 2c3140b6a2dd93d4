"""The HTTP layer: typed request/response models, thin handlers, the generated OpenAPI document.

The resource packages know nothing of HTTP; everything that speaks it lives here. Request
models (e.g. `RunRequest`) are in `models`, WebSocket event models in `events`.
"""
