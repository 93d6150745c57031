"""The Docker verifier against a loopback fake of the Docker Engine API on a Unix socket.

No Docker daemon runs on this machine (or in CI), and the real Engine cannot be started here,
so the verifier is tested against ``fake_docker.py``: a real HTTP/1.1 server on a real Unix
socket that speaks the endpoints the verifier reads (``GET /images/{name}/json``) with the
Engine's shapes. The verifier's own code path — socket, HTTP, JSON — is the one it runs
against a real Engine; only the Engine is stand-in. Held-back lies: a build claimed but never
run, a build under another tag, a reply naming an image the tag does not name.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from affidavit.proxy.verifiers.base import Verdict
from affidavit.proxy.verifiers.docker import DockerVerifier, normal_tag
from tests.proxy._verifier_fixtures import call, judge, tool_result
from tests.proxy.fake_docker import FakeEngine, serving

V = DockerVerifier()


@pytest.fixture
def engine() -> Iterator[tuple[FakeEngine, str]]:
    state = FakeEngine()
    folder = Path(tempfile.mkdtemp(prefix="afd-docker-", dir="/tmp"))  # sockets: 108 bytes
    with serving(state, folder / "docker.sock") as host:
        yield state, host
    folder.rmdir()


def build_call(host: str, tag: str = "app:dev"):
    return call("docker_build", {"tag": tag}, settings={"docker_host": host})


def built(tag: str, image_id: str | None = None) -> dict:
    report = {"tag": tag, "context": ".", "log_tail": "done\n"}
    if image_id is not None:
        report["image_id"] = image_id
    return tool_result(f"built {tag}", report)


def test_a_new_build_is_verified(engine) -> None:
    state, host = engine
    receipt = judge(V, build_call(host), lambda: built("app:dev", state.build("app:dev")))
    assert receipt.verdict is Verdict.VERIFIED, receipt.evidence
    assert V.still_holds(build_call(host), receipt)
    state.build("app:dev")  # rebuilt since: the tag names another image now
    assert not V.still_holds(build_call(host), receipt)


def test_a_rebuild_that_moves_the_tag_is_verified(engine) -> None:
    state, host = engine
    state.build("app:dev")
    receipt = judge(V, build_call(host), lambda: built("app:dev", state.build("app:dev")))
    assert receipt.verdict is Verdict.VERIFIED


def test_held_back_lies_are_contradicted(engine) -> None:
    state, host = engine

    def tagged_elsewhere() -> dict:
        state.build("app:dev")
        return built("app:dev", state.build("scratch:1"))

    lies = {  # what the Engine shows instead, and what the backend does
        "no image is tagged app:dev": lambda: built("app:dev"),
        "not the image": tagged_elsewhere,
        "the reply is for app:prod": lambda: built("app:prod", state.build("app:prod")),
    }
    for observed, act in lies.items():
        state.images.clear()
        state.tags.clear()
        receipt = judge(V, build_call(host), act)
        assert receipt.verdict is Verdict.CONTRADICTED, observed
        assert observed in receipt.evidence[0].observed, receipt.evidence[0].observed
    other = judge(V, build_call(host, "app:new"), lambda: built("app:new", state.build("x:1")))
    assert other.verdict is Verdict.CONTRADICTED  # built under another tag: none is app:new


def test_a_tag_that_already_named_the_image_is_unchecked(engine) -> None:
    """A fully cached build and a build that never ran look the same: never verified."""
    state, host = engine
    image = state.build("app:dev")
    receipt = judge(V, build_call(host), lambda: built("app:dev", image))
    assert receipt.verdict is Verdict.UNCHECKED
    assert "already named" in receipt.evidence[0].observed


def test_no_engine_or_another_transport_is_unchecked(tmp_path: Path) -> None:
    for where in (f"unix://{tmp_path}/absent.sock", "tcp://127.0.0.1:2375"):
        receipt = judge(V, build_call(where), lambda: built("app:dev"))
        assert receipt.verdict is Verdict.UNCHECKED, where


def test_a_backend_error_claims_nothing(engine) -> None:
    _, host = engine
    failed = tool_result("docker build failed (exit 1)", is_error=True)
    assert judge(V, build_call(host), lambda: failed).verdict is Verdict.UNCHECKED


def test_tags_are_named_as_the_engine_names_them() -> None:
    assert normal_tag("app") == "app:latest"
    assert normal_tag("registry:5000/app") == "registry:5000/app:latest"
    assert normal_tag("app:1") == "app:1" and normal_tag("app@sha256:ab") == "app@sha256:ab"
