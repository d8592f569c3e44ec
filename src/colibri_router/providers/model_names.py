"""Model-name patterns shared by the registry's claims and the model profiles.

A leaf, so that the registry (needed at start-up, for the hello line) can claim Kimi's names
without importing the model profiles (needed only once a call is made).
"""

# Kimi names as hosts list them (https://models.dev; docs/providers.md): `kimi-k2-instruct`,
# `Kimi-K2-Thinking`, `kimi-k2p5`, `kimi-k2.6`, plus Moonshot's aliases and today's bare `K2-Thinking`.
KIMI_SEGMENT = r"(?:moonshot(?:ai)?\.)?(?:kimi[-_.]?k\d|kimi-latest|kimi-thinking-preview|k2[-_.]thinking)"
