"""The memory server over Streamable HTTP, driven by the official SDK client, and attacked.

Every server here is a real ``affidavit serve --http 127.0.0.1:0`` process over a real vault;
tokens come from the real ``affidavit grant token`` command.
"""

from __future__ import annotations

import datetime
import json
import socket
from pathlib import Path

import httpx2
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from tests.servers.http_support import JSON_HEADERS, SEARCH_CALL, http_client, http_server
from tests.servers.memory.conftest import LIGHT, VaultSetup, body, run
from tests.support import INSPECTOR, cli_env, inspector_cli, inspector_tool_call, run_cli

SERVE = ["serve", "--http", "127.0.0.1:0"]


def issue(setup: VaultSetup, caller: str) -> str:
    done = run_cli(["grant", "token", caller], setup.home, env=setup.env())
    assert done.returncode == 0, done.stderr
    token = done.stdout.strip()
    assert token.startswith("afv_") and token not in done.stderr
    return token


def post(
    url: str, token: str | None, payload: object = SEARCH_CALL, **headers: str
) -> httpx2.Response:
    sent = {**JSON_HEADERS, **headers}
    if token is not None:
        sent["authorization"] = f"Bearer {token}"
    return httpx2.post(url, content=json.dumps(payload), headers=sent, timeout=60)


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
def test_sdk_client_stores_and_searches_as_the_tokens_caller(setup: VaultSetup, mode: str) -> None:
    token = issue(setup, "cursor")
    with http_server(SERVE, setup.home, setup.env(**LIGHT)) as server:

        async def scenario() -> None:
            async with http_client(server.url, token, mode) as client:
                names = {tool.name for tool in (await client.list_tools()).tools}
                assert {"memory_store", "memory_search", "memory_status"} <= names
                stored = body(
                    await client.call_tool(
                        "memory_store", {"text": "The cat is called Mia", "source": "chat"}
                    )
                )
                assert stored["namespace"] == "cursor"  # the token named the caller
                found = body(await client.call_tool("memory_search", {"query": "cat called"}))
                assert [hit["text"] for hit in found["results"]] == ["The cat is called Mia"]

        run(scenario)


def test_grants_follow_the_token(setup: VaultSetup) -> None:
    cursor, bob = issue(setup, "cursor"), issue(setup, "bob")
    done = run_cli(["grant", "bob", "cursor", "none"], setup.home, env=setup.env())
    assert done.returncode == 0, done.stderr
    with http_server(SERVE, setup.home, setup.env(**LIGHT)) as server:

        async def scenario() -> None:
            async with http_client(server.url, cursor) as client:
                fact = {"text": "The launch code word is heron", "source": "chat"}
                body(await client.call_tool("memory_store", fact))
            async with http_client(server.url, bob) as client:
                found = body(await client.call_tool("memory_search", {"query": "launch heron"}))
                assert found["results"] == []

        run(scenario)


def test_no_wrong_or_revoked_token_is_401_and_reads_nothing(setup: VaultSetup) -> None:
    token = issue(setup, "cursor")
    with http_server(SERVE, setup.home, setup.env(**LIGHT)) as server:
        assert post(server.url, token).status_code == 200
        for presented in (None, "afv_" + "x" * 43, token[:-1], "Bearer"):
            answer = post(server.url, presented)
            assert answer.status_code == 401, presented
            assert answer.headers["www-authenticate"].startswith("Bearer")
            assert "results" not in answer.text
        # the refusal comes before the body: a request that never sends its body is answered
        host, port = server.url.split("//")[1].split("/")[0].split(":")
        with socket.create_connection((host, int(port)), timeout=30) as raw:
            raw.sendall(
                b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer nope\r\n"
                b"Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n"
            )
            assert raw.recv(64).startswith(b"HTTP/1.1 401")
        revoked = run_cli(["token", "--revoke", "cursor"], setup.home, env=setup.env())
        assert revoked.returncode == 0, revoked.stderr
        assert post(server.url, token).status_code == 401  # at once, no restart
        replaced = issue(setup, "cursor")
        assert post(server.url, replaced).status_code == 200
    assert token not in server.log() and replaced not in server.log()


@pytest.mark.parametrize(
    ("header", "value"),
    [
        ("host", "evil.example:80"),
        ("host", "127.0.0.1.nip.io"),
        ("origin", "http://evil.example"),
        ("origin", "null"),
        ("origin", "http://localhost:1"),
    ],
)
def test_foreign_host_or_origin_is_403(setup: VaultSetup, header: str, value: str) -> None:
    token = issue(setup, "cursor")
    with http_server(SERVE, setup.home, setup.env(**LIGHT)) as server:
        answer = post(server.url, token, **{header: value})
        assert answer.status_code == 403
        assert "DNS rebinding" in answer.json()["error"]["message"]
        port = server.url.split(":")[2].split("/")[0]
        assert post(server.url, token, origin=f"http://localhost:{port}").status_code == 200


def test_body_over_the_limit_is_413_declared_or_chunked(setup: VaultSetup) -> None:
    token = issue(setup, "cursor")
    big = {**SEARCH_CALL, "params": {"name": "memory_search", "arguments": {"query": "x" * 5000}}}
    with http_server([*SERVE, "--max-body", "4096"], setup.home, setup.env(**LIGHT)) as server:
        answer = post(server.url, token, big)
        assert answer.status_code == 413
        assert "4096-byte limit" in answer.json()["error"]["message"]
        chunks = iter([json.dumps(big).encode()[i : i + 1000] for i in range(0, 6000, 1000)])
        headers = {**JSON_HEADERS, "authorization": f"Bearer {token}"}
        streamed = httpx2.post(server.url, content=chunks, headers=headers, timeout=60)
        assert streamed.status_code == 413
        assert post(server.url, token).status_code == 200


def test_rate_limit_is_429_with_retry_after(setup: VaultSetup) -> None:
    token = issue(setup, "cursor")
    flags = [*SERVE, "--rate-limit", "0.05"]  # a burst of one, then one every 20 s
    with http_server(flags, setup.home, setup.env(**LIGHT)) as server:
        answers = [post(server.url, token) for _ in range(20)]
        limited = [a for a in answers if a.status_code == 429]
        assert limited, [a.status_code for a in answers]
        assert int(limited[0].headers["retry-after"]) >= 1
        assert "rate limit" in limited[0].json()["error"]["message"]
        assert {a.status_code for a in answers} <= {200, 429}


def test_locked_vault_is_503_with_the_way_to_unlock(setup: VaultSetup) -> None:
    token = issue(setup, "cursor")
    with http_server(SERVE, setup.home, setup.env(passphrase=None, **LIGHT)) as server:
        answer = post(server.url, token)
        assert answer.status_code == 503
        assert "affidavit unlock" in answer.json()["error"]["message"]


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        (["--http", "0.0.0.0:0"], "--allow-remote"),
        (["--http", "0.0.0.0:0", "--allow-remote"], "--tls-cert"),
        (["--http", "127.0.0.1:0", "--tls-cert", __file__], "go together"),
        (["--http", "nonsense"], "HOST:PORT"),
        (["--allow-remote"], "need --http"),
        (["--http", "127.0.0.1:0", "--caller", "bob"], "--caller does not apply"),
    ],
)
def test_exposure_needs_explicit_flags(setup: VaultSetup, flags: list[str], expected: str) -> None:
    done = run_cli(["serve", *flags], setup.home, env=setup.env(**LIGHT), timeout=60)
    assert done.returncode != 0
    assert expected in done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) <= 2


def test_token_is_sealed_and_listed_without_its_value(setup: VaultSetup) -> None:
    token = issue(setup, "cursor")
    listed = run_cli(["token", "--list", "--json"], setup.home, env=setup.env())
    assert json.loads(listed.stdout)[0]["caller"] == "cursor"
    assert token not in listed.stdout
    import hashlib

    digest = hashlib.sha256(token.encode()).hexdigest()
    for path in setup.path.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert token.encode() not in data and digest.encode() not in data, path


def _self_signed(directory: Path) -> tuple[Path, Path]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost")]), critical=False)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = directory / "cert.pem", directory / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    key_path.chmod(0o600)
    return cert_path, key_path


def test_tls_with_a_self_signed_certificate(setup: VaultSetup, tmp_path: Path) -> None:
    import ssl

    token = issue(setup, "cursor")
    cert, key = _self_signed(tmp_path)
    flags = ["serve", "--http", "localhost:0", "--tls-cert", str(cert), "--tls-key", str(key)]
    with http_server(flags, setup.home, setup.env(**LIGHT)) as server:
        assert server.url.startswith("https://localhost:")
        trust = ssl.create_default_context(cafile=str(cert))

        async def scenario() -> None:
            async with http_client(server.url, token, verify=trust) as client:
                found = body(await client.call_tool("memory_search", {"query": "anything"}))
                assert found["results"] == []

        run(scenario)
        with pytest.raises(httpx2.HTTPError):  # an untrusted certificate is refused
            httpx2.post(server.url, content=b"{}", timeout=30)


@pytest.mark.skipif(not INSPECTOR.exists(), reason="MCP Inspector not installed (.ci/node-tools)")
def test_inspector_cli_calls_memory_search_over_http(setup: VaultSetup) -> None:
    token = issue(setup, "cursor")
    with http_server(SERVE, setup.home, setup.env(**LIGHT)) as server:
        call = inspector_tool_call("memory_search", query="anything")
        done = inspector_cli(
            [
                server.url,
                "--transport",
                "http",
                "--header",
                f"Authorization: Bearer {token}",
                *call,
            ],
            cli_env(setup.home),
        )
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["structuredContent"]["results"] == []
