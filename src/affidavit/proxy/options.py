"""Everything one proxy run is configured with, gathered by the CLI in one value."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from affidavit.proxy.changes import Remember
from affidavit.proxy.otel import Telemetry
from affidavit.proxy.policy import Policy, SamplingLimit
from affidavit.proxy.verifiers.base import Verifier


@dataclass(frozen=True)
class ProxyOptions:
    """The switches of ``affidavit proxy`` (``affidavit proxy --help`` describes each one)."""

    audit_log: Path
    roots: tuple[Path, ...] = ()
    idempotent_replay: bool = False
    receipts: bool = False
    policy: Policy | None = None
    pin_tools: bool = False
    verifiers: tuple[Verifier, ...] = ()
    verify_timeout: float = 60.0
    settings: Mapping[str, Any] = field(default_factory=dict)
    telemetry: Telemetry | None = None
    sampling: SamplingLimit | None = None
    """A limit on backend sampling requests given on the command line (else the policy's)."""
    approval_timeout: float = 600.0
    """Seconds the host has to answer an approval question before the call is denied."""
    remember: Remember | None = None
    """Hears of each VERIFIED state change once its audit entry is written (``--remember``);
    called on the audit thread, so it must only queue."""

    @property
    def sampling_limit(self) -> SamplingLimit | None:
        """The limit on backend sampling requests: the command line's, else the policy's."""
        if self.sampling is not None:
            return self.sampling
        return self.policy.sampling if self.policy is not None else None

    @property
    def pins_path(self) -> Path:
        """Pins live beside the audit log."""
        from affidavit.proxy.pinning import PINS_FILE

        return self.audit_log.parent / PINS_FILE
