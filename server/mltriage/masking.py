"""Mask secrets (tokens, keys, passwords) in anything we render or export.

Logs routinely echo environments and command lines; a diagnosis pasted into a ticket must not
carry a Hugging Face token or an AWS key along with it.
"""

from __future__ import annotations

import re

MASK = "****"

# Each pattern's group 1 (when present) is kept, the rest of the match is masked.
_SECRET_PATTERNS: tuple[re.Pattern[str], ...] = (
    re.compile(r"\bhf_[A-Za-z0-9]{30,}\b"),  # Hugging Face user access token
    re.compile(r"\b(?:ghp|gho|ghu|ghs|ghr|github_pat)_[A-Za-z0-9_]{20,}\b"),  # GitHub tokens
    re.compile(r"\bsk-(?:proj-|ant-)?[A-Za-z0-9_-]{20,}\b"),  # OpenAI / Anthropic style API keys
    re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),  # AWS access key id
    re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}\b"),  # Slack tokens
    re.compile(r"\beyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\b"),  # JWT
    re.compile(r"(?i)(\bbearer\s+)[A-Za-z0-9._~+/=-]{12,}"),
    re.compile(r"(://[^/\s:@]+:)[^@\s/]+(?=@)"),  # credentials inside a URL
    # NAME=value / name: value for names that say they are secret
    re.compile(
        r"(?i)(\b[A-Z0-9_]*(?:TOKEN|API_KEY|APIKEY|SECRET|PASSWORD|PASSWD|ACCESS_KEY)[A-Z0-9_]*\s*[=:]\s*['\"]?)"
        r"(?!\*\*\*\*)[^\s'\",;]{4,}"
    ),
)


def mask_secrets(text: str) -> str:
    """Return ``text`` with every recognised secret replaced by ``****``."""
    if not text:
        return text
    for pattern in _SECRET_PATTERNS:
        if pattern.groups:
            text = pattern.sub(lambda m: m.group(1) + MASK, text)
        else:
            text = pattern.sub(MASK, text)
    return text
