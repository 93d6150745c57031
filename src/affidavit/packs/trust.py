"""Whom a host trusts, and how the trust flags are read from a raw command line.

The flags are the same on ``pack verify`` and ``pack serve`` (and in MCP client configs), so
they are parsed here from raw argv rather than by each command: ``--flag value`` and
``--flag=value``, ``=true|false`` for booleans, an empty value meaning "off", relative paths
refused. Flags this module does not know are handed back for the caller to use or refuse.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from affidavit.core.errors import UsageError
from affidavit.crypto.signers import is_fingerprint, read_allowed_signers, read_revoked_keys

TRUSTED_KEYS = "--trusted-keys"
TRUSTED_FINGERPRINT = "--trusted-fingerprint"
REVOKED_KEYS = "--revoked-keys"
MIN_SEQUENCE = "--min-sequence"
REQUIRE_SIGNATURE = "--require-signature"
STRICT = "--strict"
VALUE_FLAGS = (TRUSTED_KEYS, TRUSTED_FINGERPRINT, REVOKED_KEYS, MIN_SEQUENCE)
BOOLEAN_FLAGS = (REQUIRE_SIGNATURE, STRICT)


@dataclass(frozen=True)
class TrustOptions:
    """The host's trust configuration; every setting defaults to off."""

    trusted_keys: Path | None = None
    trusted_fingerprints: tuple[str, ...] = ()
    revoked_keys: Path | None = None
    min_sequence: int | None = None
    require_signature: bool = False
    strict: bool = False

    @property
    def signature_required(self) -> bool:
        """A trusted signature is needed: asked for, or implied by a pin, strict or a minimum."""
        return (
            self.require_signature
            or self.strict
            or self.min_sequence is not None
            or bool(self.trusted_fingerprints)
        )

    def as_args(self) -> list[str]:
        """These options as ``--flag=value`` arguments (to pass them on to a child process)."""
        args: list[str] = []
        if self.trusted_keys is not None:
            args.append(f"{TRUSTED_KEYS}={self.trusted_keys}")
        if self.trusted_fingerprints:
            args.append(f"{TRUSTED_FINGERPRINT}={','.join(self.trusted_fingerprints)}")
        if self.revoked_keys is not None:
            args.append(f"{REVOKED_KEYS}={self.revoked_keys}")
        if self.min_sequence is not None:
            args.append(f"{MIN_SEQUENCE}={self.min_sequence}")
        if self.require_signature:
            args.append(f"{REQUIRE_SIGNATURE}=true")
        if self.strict:
            args.append(f"{STRICT}=true")
        return args


@dataclass(frozen=True)
class TrustAnchors:
    """The trust files, read once: trusted keys by fingerprint, pins and revocations."""

    names: dict[str, str]
    pins: frozenset[str]
    revoked: frozenset[str]


def load_anchors(options: TrustOptions) -> TrustAnchors:
    """Read the trusted-keys and revoked-keys files and check the configuration is usable.

    A configuration that requires a signature but names no key to trust could never pass; it
    is refused up front instead of refusing every pack with a misleading reason.
    """
    names: dict[str, str] = {}
    if options.trusted_keys is not None:
        for signer in read_allowed_signers(options.trusted_keys):
            names.setdefault(signer.key.fingerprint, signer.name)
    revoked = read_revoked_keys(options.revoked_keys) if options.revoked_keys else frozenset()
    if options.signature_required and not names and not options.trusted_fingerprints:
        where = (
            f"the trusted keys file {options.trusted_keys} lists no keys"
            if options.trusted_keys is not None
            else "no --trusted-keys or --trusted-fingerprint is set"
        )
        raise UsageError(
            f"a trusted signature is required but {where}",
            "pin the signer with --trusted-fingerprint SHA256:... or list it in --trusted-keys",
        )
    return TrustAnchors(names, frozenset(options.trusted_fingerprints), revoked)


def take_flag(args: Sequence[str], index: int, name: str) -> tuple[str | None, int] | None:
    """Match ``args[index]`` against ``--name value`` or ``--name=value``.

    Returns ``(value, next_index)`` when it matches (``value`` is None for a bare flag with no
    ``=``), or None when ``args[index]`` is another argument. Used for the trust flags and by
    commands that read their own flags from the same raw argv (``--pack``, ``--at``).
    """
    arg = args[index]
    if arg == name:
        return None, index + 1
    if arg.startswith(name + "="):
        return arg[len(name) + 1 :], index + 1
    return None


def flag_value(args: Sequence[str], index: int, name: str) -> tuple[str, int] | None:
    """Like :func:`take_flag` for a flag that needs a value: ``--name V`` or ``--name=V``."""
    taken = take_flag(args, index, name)
    if taken is None:
        return None
    value, following = taken
    if value is not None:
        return value, following
    if following >= len(args) or args[following].startswith("--"):
        raise UsageError(f"{name} needs a value", f"write {name} VALUE or {name}=VALUE")
    return args[following], following + 1


def parse_bool(name: str, value: str | None) -> bool:
    """A boolean flag: bare means true; ``=true``/``=false``; empty means off."""
    if value is None or value == "true":
        return True
    if value in ("false", ""):
        return False
    raise UsageError(f"{name}={value} is not true or false", f"write {name} or {name}=false")


def absolute_path(name: str, value: str) -> Path | None:
    """A path flag's value: empty means off; anything else must be absolute."""
    if value == "":
        return None
    path = Path(value)
    if not path.is_absolute():
        raise UsageError(
            f"{name} {value} is a relative path", f"give an absolute path, e.g. {Path.cwd()}"
        )
    return path


def _fingerprints(value: str) -> list[str]:
    found = []
    for part in value.split(","):
        fingerprint = part.strip()
        if not fingerprint:
            continue
        if not is_fingerprint(fingerprint):
            raise UsageError(
                f"{TRUSTED_FINGERPRINT} {fingerprint[:60]!r} is not a SHA256 fingerprint",
                "copy it from `affidavit pack sign` or `ssh-keygen -l -f KEY.pub` (SHA256:...)",
            )
        found.append(fingerprint)
    return found


def _min_sequence(value: str) -> int | None:
    if value == "":
        return None
    if not value.isascii() or not value.isdigit():
        raise UsageError(f"{MIN_SEQUENCE} {value[:40]!r} is not a whole number >= 0")
    return int(value)


def parse_trust_args(args: Sequence[str]) -> tuple[TrustOptions, list[str]]:
    """Consume the trust flags from ``args``; return the options and every other argument.

    Unknown arguments are returned in order for the caller, which must refuse the ones it does
    not understand. A single-valued flag given twice is refused, since which one wins would be
    a guess.
    """
    values: dict[str, object] = {}
    fingerprints: list[str] = []
    rest: list[str] = []
    index = 0
    while index < len(args):
        matched = False
        for name in BOOLEAN_FLAGS:
            taken = take_flag(args, index, name)
            if taken is not None:
                _once(values, name, parse_bool(name, taken[0]))
                index, matched = taken[1], True
                break
        if not matched:
            for name in VALUE_FLAGS:
                taken_value = flag_value(args, index, name)
                if taken_value is None:
                    continue
                value, index = taken_value
                matched = True
                if name == TRUSTED_FINGERPRINT:
                    fingerprints.extend(_fingerprints(value))
                elif name == MIN_SEQUENCE:
                    _once(values, name, _min_sequence(value))
                else:
                    _once(values, name, absolute_path(name, value))
                break
        if not matched:
            rest.append(args[index])
            index += 1
    options = TrustOptions(
        trusted_keys=values.get(TRUSTED_KEYS),  # type: ignore[arg-type]
        trusted_fingerprints=tuple(dict.fromkeys(fingerprints)),
        revoked_keys=values.get(REVOKED_KEYS),  # type: ignore[arg-type]
        min_sequence=values.get(MIN_SEQUENCE),  # type: ignore[arg-type]
        require_signature=bool(values.get(REQUIRE_SIGNATURE, False)),
        strict=bool(values.get(STRICT, False)),
    )
    return options, rest


def _once(values: dict[str, object], name: str, value: object) -> None:
    if name in values:
        raise UsageError(f"{name} is given twice", "give it once")
    values[name] = value
