"""The CI file parser (core.cifile): what it accepts, and one clear error for what it does not."""

from __future__ import annotations

from pathlib import Path

import pytest

from affidavit.core.cifile import CI_FILE_NAME, DEFAULT_TIMEOUT_S, load_ci_file
from affidavit.core.errors import InputError, NotFoundError


def write_ci(repo: Path, text: str) -> Path:
    (repo / CI_FILE_NAME).write_text(text)
    return repo


def test_parses_steps_in_order_with_defaults(tmp_path: Path) -> None:
    write_ci(
        tmp_path,
        "pipelines:\n"
        "  check:\n"
        "    - name: lint\n"
        "      command: \"ruff check 'src dir'\"\n"
        "      safe_to_rerun: true\n"
        "      timeout: 12.5\n"
        "    - name: test\n"
        "      command: [python, -m, pytest]\n",
    )
    steps = load_ci_file(tmp_path).pipeline()
    assert [s.name for s in steps] == ["lint", "test"]
    assert steps[0].command == ("ruff", "check", "src dir")
    assert steps[0].safe_to_rerun is True and steps[0].timeout == 12.5
    assert steps[1].command == ("python", "-m", "pytest")
    assert steps[1].safe_to_rerun is False and steps[1].timeout == DEFAULT_TIMEOUT_S


def test_default_pipeline_selection(tmp_path: Path) -> None:
    two = '  a:\n    - {name: x, command: ["true"]}\n  b:\n    - {name: y, command: ["false"]}\n'
    write_ci(tmp_path, "pipelines:\n" + two)
    ci = load_ci_file(tmp_path)
    with pytest.raises(InputError, match="several pipelines"):
        ci.pipeline()
    assert ci.pipeline("b")[0].name == "y"
    with pytest.raises(NotFoundError, match="no pipeline 'c'"):
        ci.pipeline("c")
    write_ci(tmp_path, "default: b\npipelines:\n" + two)
    assert load_ci_file(tmp_path).resolve(None) == "b"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("pipelines: [", "not valid YAML"),
        ("- a\n", "must be a mapping"),
        ("pipelines: {}\n", "`pipelines` must map"),
        ("pipeline:\n  a: []\n", "unknown key 'pipeline'"),
        ("pipelines:\n  a: []\n", "non-empty list of steps"),
        ("pipelines:\n  a:\n    - {command: [x]}\n", r"a\[0\]\.name"),
        ("pipelines:\n  a:\n    - {name: s}\n", r"a\[0\]\.command"),
        ("pipelines:\n  a:\n    - {name: s, command: ''}\n", "is empty"),
        ("pipelines:\n  a:\n    - {name: s, command: [x], shell: true}\n", "unknown key 'shell'"),
        (
            "pipelines:\n  a:\n    - {name: s, command: [x], safe_to_rerun: 'yes'}\n",
            "true or false",
        ),
        ("pipelines:\n  a:\n    - {name: s, command: [x], timeout: 0}\n", "timeout"),
        ("pipelines:\n  a:\n    - {name: s, command: [x], timeout: true}\n", "timeout"),
        (
            "pipelines:\n  a:\n    - {name: s, command: [x]}\n    - {name: s, command: [y]}\n",
            "twice",
        ),
        ("default: z\npipelines:\n  a:\n    - {name: s, command: [x]}\n", "`default`"),
        ('pipelines:\n  a:\n    - {name: s, command: "x \'unclosed"}\n', "cannot be split"),
    ],
)
def test_rejects_bad_files_with_the_field_named(tmp_path: Path, text: str, message: str) -> None:
    write_ci(tmp_path, text)
    with pytest.raises(InputError, match=message) as caught:
        load_ci_file(tmp_path)
    assert "\n" not in str(caught.value)


def test_missing_file_and_symlink_out_are_refused(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    with pytest.raises(NotFoundError, match=r"no \.affidavit-ci\.yml"):
        load_ci_file(repo)
    outside = tmp_path / "elsewhere.yml"
    outside.write_text("pipelines:\n  a:\n    - {name: s, command: [x]}\n")
    (repo / CI_FILE_NAME).symlink_to(outside)
    with pytest.raises(InputError, match="not a regular file of this repository"):
        load_ci_file(repo)
