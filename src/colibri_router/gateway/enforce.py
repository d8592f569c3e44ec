"""The policy applied where a call is decided: the member a call is made for, and each check.

The shell (:mod:`.shell`) names the member of a request served over HTTP with a policy file; the code
below the shell asks :func:`current_member` (a context variable, so the router and the services keep
their signatures, and a call over stdio, with no member, skips every check at the cost of one lookup).

- :func:`check_chain`: every model a call may reach (its own, each fallback, each of
  ``router_ask_many``'s and the judge) against ``providers``, ``models`` and ``agent_cli``, before
  anything is sent; the first model outside the policy refuses the whole call.
- :func:`gate`: each request just before it is sent, against ``max_cost_usd_per_call``, and its
  estimated tokens (input and ``max_tokens``) taken from ``tpm``; :meth:`Gate.settle` puts the real
  count in place of the estimate once it answered.
- :func:`visible_models`: ``router_models`` without what the member may not use.

``daily_usd`` and ``monthly_usd`` become the store's per-caller budgets in :mod:`.budgets`. This module
is loaded with the router and ``router_models``, which need no store: the ``tpm`` count, kept in the
store (:mod:`.limiter`), loads with the first call of a member who has a ``tpm``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from colibri_router.errors import ColibriError
from colibri_router.gateway.errors import NotAllowedError
from colibri_router.gateway.member import Member, current_member
from colibri_router.providers import load_registry
from colibri_router.providers.cost import worst_case

if TYPE_CHECKING:
    from colibri_router.catalog.schema import RouterModelsResult
    from colibri_router.conversation import CompletionRequest, Usage
    from colibri_router.gateway.limiter import Taken
    from colibri_router.providers import Choice, ProviderSpec


def refusal(member: Member, spec: ProviderSpec, model: str) -> NotAllowedError | None:
    """Why ``member`` may not call ``model`` at ``spec`` (the rule), or None."""
    rules, who = member.rules, f"the policy of {member.name!r}"
    if not rules.allows_provider(spec.name):
        allowed = ", ".join(rules.providers or ())
        return NotAllowedError(
            f"provider {spec.name!r} is not allowed by {who} (providers: {allowed}); nothing was sent"
        )
    if spec.agent is not None and not rules.agent_cli:
        return NotAllowedError(
            f"command-line agent {spec.name!r} is not allowed by {who} (agent_cli = false); nothing was sent"
        )
    if not rules.allows_model(spec.name, model):
        allowed = ", ".join(rules.models or ())
        return NotAllowedError(
            f"model {spec.name}:{model} is not allowed by {who} (models: {allowed}); nothing was sent"
        )
    return None


def check_chain(choices: Sequence[Choice | ColibriError | None]) -> None:
    """Refuse the call when any placed model of it is outside the running member's policy (the first
    such, by its position), before anything is sent. Entries that are errors or None are left alone."""
    member = current_member()
    if member is None:
        return
    for choice in choices:
        if choice is None or isinstance(choice, ColibriError):
            continue
        refused = refusal(member, choice.provider, choice.model)
        if refused is not None:
            raise refused.about(choice.provider.name, choice.model)


@dataclass
class Gate:
    """One request admitted by the running member's policy: what its check warned of, and its tokens
    in the member's minute, settled once it answered."""

    event: Taken | None = None  # the limiter's record of the estimate (it settles itself)
    warnings: list[str] = field(default_factory=list)

    async def settle(self, usage: Usage) -> None:
        """The real token count in place of the estimate. A store failure here never breaks the call
        that answered: the estimate stays counted, and the log says why."""
        if self.event is not None:
            await self.event.settle_or_log(usage.prompt_tokens + usage.completion_tokens)


_OPEN_GATE = Gate()


async def gate(choice: Choice, request: CompletionRequest) -> Gate:
    """Check one request about to be sent against the running member's ``max_cost_usd_per_call`` and
    take its estimated tokens from their ``tpm``; raises what refuses it."""
    member = current_member()
    if member is None:
        return _OPEN_GATE
    rules = member.rules
    passed = Gate()
    if rules.max_cost_usd_per_call is not None:
        worst = worst_case(choice, request)
        if worst is None:
            if not choice.provider.subscription:
                passed.warnings.append(f"no price known for {choice.model}: max_cost_usd_per_call could not check it")
        elif worst > rules.max_cost_usd_per_call:
            raise NotAllowedError(
                f"the call could cost up to ${worst:.6f} with {choice.model}, above max_cost_usd_per_call "
                f"${rules.max_cost_usd_per_call:g} of the policy of {member.name!r}; nothing was sent"
            ).about(choice.provider.name, choice.model)
    if rules.tpm is not None:
        # The limiter counts in the store: loaded by the first call of a member with tpm, not with the router.
        from colibri_router.gateway.limiter import take_tokens

        passed.event = await take_tokens(member, rules.tpm, choice, request)
    return passed


def visible_models(result: RouterModelsResult) -> RouterModelsResult:
    """``router_models``' answer as the running member may use it: providers, models, default models
    and aliases outside their policy left out."""
    member = current_member()
    if member is None:
        return result
    registry = load_registry()
    providers = []
    for entry in result.providers:
        spec = registry.providers.get(entry.name)
        if spec is None or _provider_refused(member, spec):
            continue
        models = [model for model in entry.models if refusal(member, spec, model) is None]
        if member.rules.models is not None and not models:
            continue
        default = entry.default_model
        if default is not None and refusal(member, spec, default) is not None:
            default = None
        providers.append(entry.model_copy(update={"models": models, "default_model": default}))
    aliases = {}
    for alias, target in result.aliases.items():
        name, _, model = target.partition(":")
        spec = registry.providers.get(name)
        if spec is not None and refusal(member, spec, model) is None:
            aliases[alias] = target
    return result.model_copy(update={"providers": providers, "aliases": aliases})


def _provider_refused(member: Member, spec: ProviderSpec) -> bool:
    return not member.rules.allows_provider(spec.name) or (spec.agent is not None and not member.rules.agent_cli)
