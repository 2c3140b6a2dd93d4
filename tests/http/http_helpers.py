"""Shared by the HTTP tests."""

#: The body limit of the in-process test server: small, so a 413 needs no big upload.
MAX_REQUEST_BYTES = 256 * 1024
