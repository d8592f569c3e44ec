"""The built-in providers: one entry each, data only (docs/providers.md lists them).

Order matters twice: it is the order of the tool schema's names, and the order in which the
built-in name patterns (``claims``) are tried when a call names a model but no provider.
"""

from __future__ import annotations

from colibri_router.providers import phrases
from colibri_router.providers.agent_cli import CLAUDE_CODE, CLI_DEFAULT_MODEL, CODEX, GEMINI_CLI, AgentCli
from colibri_router.providers.model_names import KIMI_SEGMENT
from colibri_router.providers.spec import HostQuirks, ProviderSpec
from colibri_router.providers.structured import (
    ANTHROPIC_NATIVE,
    ANTHROPIC_TOOL,
    OPENAI_STRICT,
    OPENAI_STRICT_UNSUPPORTED,
    StructuredSupport,
)

# The host's own model answers for "host": the name only says so (a model asked for is a hint).
HOST_MODEL = "host"

KIMI_NAMES = rf"(?:.*/)?~?{KIMI_SEGMENT}.*"  # a Kimi model wherever it is served, by its last segment
OPENAI_NAMES = (r"gpt-.*", r"chatgpt-.*", r"o1.*", r"o3.*", r"o4.*")
MISTRAL_NAMES = (r"mistral-.*", r"magistral-.*", r"codestral-.*", r"devstral-.*", r"ministral-.*")

# Moonshot, SiliconFlow and DeepSeek replay reasoning in `reasoning_content` (the default); OpenRouter,
# Together, Groq and vLLM in `reasoning` (docs/providers.md;
# https://openrouter.ai/docs/use-cases/reasoning-tokens).
_REASONING_FIELD = HostQuirks(reasoning_field="reasoning")


def _schema(source: str) -> StructuredSupport:
    """An OpenAI-wire host that takes ``response_format: json_schema`` as it is (best effort or its own
    constrained decoding), without OpenAI's strict subset."""
    return StructuredSupport("schema", source)


def _json_mode(source: str, *, says_json: bool = False) -> StructuredSupport:
    return StructuredSupport("json_mode", source, says_json=says_json)


def _agent_cli(name: str, agent: AgentCli) -> ProviderSpec:
    """A command-line agent: no URL and no key of ours (it runs on its own login), its own tools."""
    return ProviderSpec(
        name=name,
        wire="agent-cli",
        base_url="",
        base_url_env="",
        key_required=False,
        default_model=CLI_DEFAULT_MODEL,
        tools=False,
        agent=agent,
    )


BUILTIN_PROVIDERS: tuple[ProviderSpec, ...] = (
    ProviderSpec(
        name="kimi",
        structured=_json_mode("https://platform.moonshot.ai/docs/guide/use-json-mode-feature-of-kimi-api"),
        error_phrases=phrases.MOONSHOT,
        wire="openai",
        base_url="https://api.moonshot.ai/v1",
        base_url_env="COLIBRI_KIMI_BASE_URL",
        key_envs=("COLIBRI_KIMI_API_KEY",),
        key_pattern=r"sk-[A-Za-z0-9]{40,}",
        default_model="kimi-k2.6",
        claims=(KIMI_NAMES,),
        quirks=HostQuirks(max_tokens_field="max_tokens", max_temperature=1.0, reasoning_control="none"),
        price_provider="moonshotai",
        code_prefix="KIMI",
    ),
    ProviderSpec(
        name="claude",
        structured=ANTHROPIC_NATIVE,
        error_phrases=phrases.ANTHROPIC,
        wire="anthropic",
        base_url="https://api.anthropic.com",
        base_url_env="ANTHROPIC_BASE_URL",
        key_envs=("ANTHROPIC_API_KEY",),
        key_pattern=r"sk-ant-(?:api|admin|oat|ort)\d{2}-[A-Za-z0-9_\-]{80,}",
        default_model="claude-sonnet-4-5",
        claims=(r"claude-.*",),
        quirks=HostQuirks(max_temperature=1.0),
        price_provider="anthropic",
        code_prefix="ANTHROPIC",
    ),
    ProviderSpec(
        name="kimi-anthropic",
        structured=ANTHROPIC_TOOL,
        error_phrases=phrases.MOONSHOT,
        wire="anthropic",
        base_url="https://api.moonshot.ai/anthropic",
        base_url_env="COLIBRI_KIMI_ANTHROPIC_BASE_URL",
        key_envs=("COLIBRI_KIMI_API_KEY",),
        key_pattern=r"sk-[A-Za-z0-9]{40,}",
        default_model="kimi-k2.6",
        quirks=HostQuirks(max_temperature=1.0),
        price_provider="moonshotai",
    ),
    ProviderSpec(
        name="openai",
        structured=OPENAI_STRICT,
        error_phrases=phrases.OPENAI,
        wire="openai",
        base_url="https://api.openai.com/v1",
        base_url_env="OPENAI_BASE_URL",
        key_envs=("OPENAI_API_KEY",),
        key_pattern=r"sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}",
        default_model="gpt-5.4-mini",
        claims=OPENAI_NAMES,
        quirks=HostQuirks(max_tokens_field="max_completion_tokens", include_usage=True),
        price_provider="openai",
    ),
    ProviderSpec(
        name="mistral",
        structured=StructuredSupport(
            "strict_schema",
            "https://docs.mistral.ai/capabilities/structured-output/custom_structured_output/",
            unsupported=OPENAI_STRICT_UNSUPPORTED,
        ),
        error_phrases=phrases.MISTRAL,
        wire="openai",
        base_url="https://api.mistral.ai/v1",
        base_url_env="MISTRAL_BASE_URL",
        key_envs=("MISTRAL_API_KEY",),
        default_model="mistral-large-latest",
        claims=MISTRAL_NAMES,
        quirks=HostQuirks(
            max_tokens_field="max_tokens",
            max_temperature=1.5,
            documented_fields_only=True,
            required_tool_choice="any",
            none_drops_tools=True,
            no_user_after_tool=True,
        ),
        price_provider="mistral",
    ),
    ProviderSpec(
        name="openrouter",
        structured=StructuredSupport(
            "strict_schema",
            "https://openrouter.ai/docs/structured-outputs (json_schema strict, passed to models that support it)",
            unsupported=OPENAI_STRICT_UNSUPPORTED,
        ),
        error_phrases=phrases.OPENROUTER,
        wire="openai",
        base_url="https://openrouter.ai/api/v1",
        base_url_env="OPENROUTER_BASE_URL",
        key_envs=("OPENROUTER_API_KEY",),
        key_pattern=r"sk-or-v1-[a-f0-9]{64}",
        default_model="moonshotai/kimi-k2.6",
        quirks=HostQuirks(max_tokens_field="max_tokens", reasoning_field="reasoning", reasoning_control="openrouter"),
        price_provider="openrouter",
    ),
    ProviderSpec(
        name="groq",
        structured=_schema("https://console.groq.com/docs/structured-outputs (best-effort json_schema)"),
        error_phrases=phrases.GROQ,
        wire="openai",
        base_url="https://api.groq.com/openai/v1",
        base_url_env="GROQ_BASE_URL",
        key_envs=("GROQ_API_KEY",),
        key_pattern=r"gsk_[A-Za-z0-9]{48,}",
        default_model="llama-3.3-70b-versatile",
        quirks=_REASONING_FIELD,
        price_provider="groq",
    ),
    ProviderSpec(
        name="together",
        structured=_schema("https://docs.together.ai/docs/json-mode (response_format json_schema)"),
        error_phrases=phrases.OPENAI,
        wire="openai",
        base_url="https://api.together.xyz/v1",
        base_url_env="TOGETHER_BASE_URL",
        key_envs=("TOGETHER_API_KEY",),
        key_pattern=r"tgp_v1_[A-Za-z0-9_\-]{30,}",
        default_model="moonshotai/Kimi-K2-Instruct-0905",
        quirks=_REASONING_FIELD,
        price_provider="together",
    ),
    ProviderSpec(
        name="fireworks",
        structured=_schema("https://docs.fireworks.ai/structured-responses/structured-response-formatting"),
        error_phrases=phrases.OPENAI,
        wire="openai",
        base_url="https://api.fireworks.ai/inference/v1",
        base_url_env="FIREWORKS_BASE_URL",
        key_envs=("FIREWORKS_API_KEY",),
        key_pattern=r"fw_[A-Za-z0-9]{20,}",
        default_model="accounts/fireworks/models/kimi-k2-instruct-0905",
        price_provider="fireworks",
    ),
    ProviderSpec(
        name="siliconflow",
        structured=_json_mode("https://docs.siliconflow.com/en/userguide/guides/json-mode"),
        error_phrases=phrases.OPENAI,
        wire="openai",
        base_url="https://api.siliconflow.com/v1",
        base_url_env="SILICONFLOW_BASE_URL",
        key_envs=("SILICONFLOW_API_KEY",),
        key_pattern=r"sk-[a-z]{48}(?![A-Za-z0-9])",
        default_model="moonshotai/Kimi-K2-Instruct-0905",
        price_provider=None,
    ),
    ProviderSpec(
        name="deepseek",
        structured=_json_mode("https://api-docs.deepseek.com/guides/json_mode", says_json=True),
        error_phrases=phrases.OPENAI,
        wire="openai",
        base_url="https://api.deepseek.com/v1",
        base_url_env="DEEPSEEK_BASE_URL",
        key_envs=("DEEPSEEK_API_KEY",),
        key_pattern=r"sk-[a-f0-9]{32}(?![A-Za-z0-9])",
        default_model="deepseek-chat",
        claims=(r"deepseek-.*",),
        price_provider="deepseek",
    ),
    ProviderSpec(
        name="gemini",
        error_phrases=phrases.GEMINI,
        wire="gemini",
        base_url="https://generativelanguage.googleapis.com/v1beta",
        base_url_env="GEMINI_BASE_URL",
        key_envs=("GOOGLE_API_KEY", "GEMINI_API_KEY"),
        key_pattern=r"AIza[0-9A-Za-z_\-]{35}",
        default_model="gemini-3.5-flash",
        claims=(r"(?:models/)?gemini-.*",),
        price_provider="google",
    ),
    ProviderSpec(
        name="cohere",
        error_phrases=phrases.COHERE,
        wire="cohere",
        base_url="https://api.cohere.com",
        base_url_env="COHERE_BASE_URL",
        key_envs=("CO_API_KEY", "COHERE_API_KEY"),
        default_model="command-a-03-2025",
        claims=(r"command-.*", r"c4ai-aya-.*"),
        price_provider="cohere",
    ),
    ProviderSpec(
        name="ollama",
        error_phrases=phrases.OLLAMA,
        wire="ollama",
        base_url="http://127.0.0.1:11434",
        base_url_env="OLLAMA_HOST",
        key_envs=("OLLAMA_API_KEY",),
        key_required=False,
        local=True,
    ),
    ProviderSpec(
        name="vllm",
        structured=_schema("https://docs.vllm.ai/en/latest/features/structured_outputs.html"),
        error_phrases=phrases.VLLM,
        wire="openai",
        base_url="http://localhost:8000/v1",
        base_url_env="VLLM_BASE_URL",
        key_envs=("VLLM_API_KEY",),
        key_required=False,
        quirks=_REASONING_FIELD,
        local=True,
    ),
    ProviderSpec(
        name="lmstudio",
        structured=_schema("https://lmstudio.ai/docs/app/api/structured-output (json_schema only)"),
        error_phrases=phrases.GENERIC,
        wire="openai",
        base_url="http://127.0.0.1:1234/v1",
        base_url_env="LMSTUDIO_BASE_URL",
        key_required=False,
        local=True,
    ),
    # Subscriptions: reached through the user's own login, not an API key of ours.
    _agent_cli("claude-code", CLAUDE_CODE),
    _agent_cli("codex", CODEX),
    _agent_cli("gemini-cli", GEMINI_CLI),
    ProviderSpec(
        name="host",
        wire="sampling",
        base_url="",
        base_url_env="",
        key_required=False,
        default_model=HOST_MODEL,
        tools=False,
    ),
)
