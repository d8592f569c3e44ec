"""What the policy refuses with: ``NOT_ALLOWED`` (a rule forbids the call; the same call will never
pass) and ``POLICY_RATE_LIMITED`` (kind ``RATE_LIMITED``: the member's own ``rpm`` or ``tpm``, not a
provider's 429, whose codes are ``<PREFIX>_API_ERROR``/``_RETRIES_EXHAUSTED``)."""

from __future__ import annotations

from colibri_router.errors import ColibriError, Kind


class NotAllowedError(ColibriError):
    """A call outside the member's policy; the message names the rule. Nothing was sent."""

    code = "NOT_ALLOWED"
    kind: Kind = "NOT_ALLOWED"


class PolicyRateLimited(ColibriError):
    """The member's ``rpm`` or ``tpm`` is used up for now; ``retry_after`` says when room frees."""

    code = "POLICY_RATE_LIMITED"
    kind: Kind = "RATE_LIMITED"

    def __init__(self, message: str, retry_after_s: float) -> None:
        super().__init__(message)
        self.retry_after = round(max(retry_after_s, 0.001), 3)
