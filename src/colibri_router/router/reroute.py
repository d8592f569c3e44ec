"""A turn goes to a model that can read it: the model a call names, swapped for a configured one when
the registry's facts say it cannot read the conversation.

Three rules, checked in this order against the chosen model, each with its own setting (the
environment variable wins over the config file's ``[routing]`` key):

- images, and the model reads none (its media facts say ``images = False``): ``COLIBRI_VISION_MODEL``
  / ``vision``. Unset, the call is refused as before (INVALID_REQUEST, a fallback chain skips the
  model), and the message names the setting.
- PDFs, and the model does not read PDFs natively, so it would get their extracted text:
  ``COLIBRI_DOCUMENTS_MODEL`` / ``documents``. Unset, the text goes as before.
- the conversation's estimated tokens over the model's context window less ``max_tokens`` (the
  price data's window; an unknown window never reroutes): ``COLIBRI_LONG_CONTEXT_MODEL`` /
  ``long_context``. Unset, the call goes as before.

The swap applies only where the caller named no explicit ``fallback`` (the caller then chose what
happens to a model that cannot read the turn), and only to HTTP providers: a subscription (a
command-line agent, the host's model) reads the call its own way. The model swapped in is checked
against the rules in turn (an image and a long conversation may take two steps), never revisiting a
model; one that fails the very rule that chose it is a misconfiguration (CONFIG_ERROR naming the
setting). Nothing here names a provider: the facts are the model's profile and the price data's window.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from colibri_router.conversation import CompletionRequest, Media, Message, ToolResult
from colibri_router.errors import ConfigError
from colibri_router.pricing import context_window
from colibri_router.providers import Choice, Registry
from colibri_router.providers.placing import UnknownModelError
from colibri_router.providers.profiles import profile_for
from colibri_router.router.fit import MediaUnreadable
from colibri_router.settings import Settings
from colibri_router.token_estimate import request_tokens

__all__ = ["Facts", "reroute"]


Build = Callable[[], CompletionRequest]


@dataclass(slots=True)
class Facts:
    """What the conversation holds that a model may be unable to read. The media are read off its
    parts; the request (for the token estimate) is built only when a rule asks for it, so a call
    with neither media nor a long-context model set costs no second build."""

    images: bool
    documents: bool
    build: Build
    _request: CompletionRequest | None = field(default=None, repr=False)

    @classmethod
    def of(cls, messages: Iterable[Message], build: Build) -> Facts:
        kinds = _media_kinds(messages)
        return cls(images="image" in kinds, documents="document" in kinds, build=build)

    @property
    def request(self) -> CompletionRequest:
        if self._request is None:
            self._request = self.build()
        return self._request


@dataclass(frozen=True, slots=True)
class _Rule:
    key: str  # the config file's [routing] key
    variable: str  # the environment variable, which wins over the key
    attribute: str  # the Settings field reading the variable
    # Why ``choice`` cannot read a conversation with these facts, or None when it can.
    unmet: Callable[[Facts, Choice], str | None]

    def target(self, settings: Settings, registry: Registry) -> tuple[str, str] | None:
        """The model this rule sends to, and the setting that named it; None when unset."""
        name: str | None = getattr(settings, self.attribute)
        if name:
            return name, self.variable
        name = registry.routing.get(self.key)
        return (name, f"[routing] {self.key}") if name else None


def _no_images(facts: Facts, choice: Choice) -> str | None:
    if not facts.images:
        return None
    support = profile_for(choice.model).media
    return f"{choice.model} cannot read images" if support.images is False else None


def _no_native_pdf(facts: Facts, choice: Choice) -> str | None:
    if not facts.documents or profile_for(choice.model).media.pdf:
        return None
    return f"{choice.model} reads no PDFs (only their extracted text)"


def _over_window(facts: Facts, choice: Choice) -> str | None:
    window = context_window(choice.provider.price_provider, choice.model)
    if window is None:
        return None
    tokens = request_tokens(facts.request)
    if tokens <= window - facts.request.max_tokens:
        return None
    return f"the conversation (about {tokens} tokens) is over {choice.model}'s context window of {window}"


_RULES = (
    _Rule("vision", "COLIBRI_VISION_MODEL", "vision_model", _no_images),
    _Rule("documents", "COLIBRI_DOCUMENTS_MODEL", "documents_model", _no_native_pdf),
    _Rule("long_context", "COLIBRI_LONG_CONTEXT_MODEL", "long_context_model", _over_window),
)
_VISION = _RULES[0]


def reroute(
    messages: Iterable[Message], choice: Choice, registry: Registry, settings: Settings, build: Build
) -> tuple[Choice, list[str]]:
    """The model a call whose conversation is ``messages`` (the files read into it included) goes to
    instead of ``choice``, and a warning per swap naming both models; ``build`` makes the call's
    request (for any model: only the estimate of its tokens is read).

    Raises :class:`MediaUnreadable` (which a fallback chain skips) when the conversation holds images
    ``choice`` cannot read and no vision model is set, naming the setting; ``ConfigError`` when a
    setting names a model no rule places, or one that fails the rule that chose it."""
    if choice.provider.subscription:
        return choice, []
    facts = Facts.of(messages, build)
    warnings: list[str] = []
    seen = {(choice.provider.name, choice.model)}
    while True:
        step = _next(facts, choice, registry, settings, seen)
        if step is None:
            return choice, warnings
        rule, why, target, source = step
        if (still := rule.unmet(facts, target)) is not None:
            raise ConfigError(f"{source} names {target.model}, but {still}: name a model that can")
        warnings.append(f"{why}: sent to {target.model} instead ({source})")
        seen.add((target.provider.name, target.model))
        choice = target


def _next(
    facts: Facts, choice: Choice, registry: Registry, settings: Settings, seen: set[tuple[str, str]]
) -> tuple[_Rule, str, Choice, str] | None:
    """The first rule ``choice`` fails that names a model not yet visited (settings that send a call
    round in a circle stop where it began): the rule, why, the model and its setting."""
    for rule in _RULES:
        if rule is not _VISION and rule.target(settings, registry) is None:
            continue  # an unset rule other than vision changes nothing: no need to look (the window's lookup)
        why = rule.unmet(facts, choice)
        if why is None:
            continue
        named = rule.target(settings, registry)
        if named is None:  # images only: refused as before, now naming the setting
            raise MediaUnreadable(
                f"{why} ({profile_for(choice.model).media.source}); nothing was sent. Set {rule.variable} "
                f"(or [routing] {rule.key} in the config file) to send such turns to a model that reads them"
            )
        name, source = named
        try:
            target = registry.choose(None, name, settings)
        except UnknownModelError as error:
            raise ConfigError(f"{source}: {error.clause}") from None
        if (target.provider.name, target.model) not in seen:
            return rule, why, target, source
    return None


def _media_kinds(messages: Iterable[Message]) -> set[str]:
    """The kinds of media (image, document) in the conversation, tool results' included."""
    kinds: set[str] = set()
    for message in messages:
        for part in message.parts:
            if isinstance(part, Media):
                kinds.add(part.kind)
            elif isinstance(part, ToolResult):
                kinds.update(media.kind for media in part.media)
    return kinds
