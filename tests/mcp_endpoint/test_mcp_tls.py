"""agent-tools/mcp of a real `jupyter server` serving HTTPS: the server's own port and TLS.

The server (a child process) gets a self-signed certificate; the MCP SDK's client trusts it
and reaches the endpoint on the server's one port, and the server listens on nothing else.
"""

from __future__ import annotations

import datetime
import ipaddress
import ssl
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import httpx2
import psutil
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

from jupyter_agent_tools.testing.server import JupyterServerProcess


def self_signed_certificate(directory: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 and its key, as PEM files (certfile, keyfile)."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.timezone.utc)
    certificate = (
        x509.CertificateBuilder().subject_name(name).issuer_name(name)
        .public_key(key.public_key()).serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                       critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    certfile, keyfile = directory / "cert.pem", directory / "key.pem"
    certfile.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    keyfile.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                          serialization.PrivateFormat.PKCS8,
                                          serialization.NoEncryption()))
    return certfile, keyfile


@pytest.fixture
def https_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[JupyterServerProcess]:
    certfile, keyfile = self_signed_certificate(tmp_path)
    root = tmp_path / "root"
    root.mkdir()
    (root / "notes.txt").write_text("alpha\nbeta\n")
    # The readiness probe (httpx) trusts the certificate through the environment.
    monkeypatch.setenv("SSL_CERT_FILE", str(certfile))
    with JupyterServerProcess(root, extra_args=[f"--ServerApp.certfile={certfile}",
                                                f"--ServerApp.keyfile={keyfile}"]) as server:
        yield server


def server_pid(port: int) -> int:
    """The process listening on `port` (the jupyter server)."""
    [pid] = {c.pid for c in psutil.net_connections(kind="inet")
             if c.status == psutil.CONN_LISTEN and c.laddr.port == port}
    return pid


def listening_ports(pid: int) -> set[int]:
    return {c.laddr.port for c in psutil.Process(pid).net_connections(kind="inet")
            if c.status == psutil.CONN_LISTEN}


async def test_mcp_over_the_servers_own_https_port(https_server: JupyterServerProcess,
                                                   tmp_path: Path) -> None:
    url = urlsplit(https_server.url)
    assert url.scheme == "https" and url.port is not None
    pid = server_pid(url.port)
    assert listening_ports(pid) == {url.port}
    trusting = ssl.create_default_context(cafile=tmp_path / "cert.pem")
    headers = {"Authorization": f"token {https_server.token}"}
    async with httpx2.AsyncClient(verify=trusting, headers=headers, timeout=120) as http:
        async with streamable_http_client(f"{https_server.url.rstrip('/')}/agent-tools/mcp",
                                          http_client=http) as (read, write), \
                ClientSession(read, write) as session:
            await session.initialize()
            found = await session.call_tool("grep", {"pattern": "beta"})
            assert not found.is_error, found.content
            assert found.structured_content["matches"][0]["file"] == "notes.txt"
            assert listening_ports(pid) == {url.port}  # no socket of the endpoint's own
        # A client that does not trust the server's certificate gets no further than TLS.
        async with httpx2.AsyncClient(headers=headers, trust_env=False) as untrusting:
            with pytest.raises(httpx2.ConnectError):
                await untrusting.post(f"{https_server.url.rstrip('/')}/agent-tools/mcp", json={})
