"""Images and PDFs fitted to the model and wire one attempt goes to, before anything is sent.

A model that cannot read images is refused (:class:`MediaUnreadable`, which a fallback chain skips);
a model whose images support is unknown gets them, with a warning. A PDF goes natively where the model
reads PDFs, else as its text, extracted locally (a PDF without text, or one that cannot be read here,
is refused for that model). An image over the wire's size limit is downscaled (Pillow, the ``images``
extra) or refused naming the extra; more images than the wire takes, or media by URL where the wire
takes only content, are refused. A PDF that opens only with a password is refused for every model.

Whatever the bytes hold, a failure is INVALID_REQUEST naming the file, or, where the model can take the
file as it is (a PDF it reads natively that cannot be read here), the file goes as it is with a warning.
"""

from __future__ import annotations

from dataclasses import replace

from colibri_router.conversation import CompletionRequest, Media, Part, Text, ToolResult
from colibri_router.errors import InvalidRequestError
from colibri_router.media.images import ImageUnreadable, downscaled
from colibri_router.media.pdf import PdfEncrypted, PdfUnreadable, document_text, pdf_pages, pdf_text
from colibri_router.media.support import MediaSupport
from colibri_router.providers import Choice
from colibri_router.providers.profiles import profile_for
from colibri_router.providers.wires import WIRE_MEDIA_LIMITS, WireMediaLimits


class MediaUnreadable(InvalidRequestError):
    """The model cannot read what the call holds (images): another model of a fallback chain may."""


def has_media(request: CompletionRequest) -> bool:
    return any(
        isinstance(part, Media) or (isinstance(part, ToolResult) and part.media)
        for message in request.messages
        for part in message.parts
    )


def fit_media(request: CompletionRequest, choice: Choice) -> tuple[CompletionRequest, list[str]]:
    """``request`` with its media as ``choice`` can take them, and the warnings; CPU work (PDF text,
    downscaling), so async callers run it in a worker thread."""
    fitter = _Fitter(choice, profile_for(choice.model).media, WIRE_MEDIA_LIMITS[choice.provider.wire])
    messages = tuple(replace(m, parts=fitter.parts(m.parts)) if m.role == "user" else m for m in request.messages)
    fitter.check_count()
    return replace(request, messages=messages), fitter.warnings


class _Fitter:
    def __init__(self, choice: Choice, support: MediaSupport, limits: WireMediaLimits) -> None:
        self.model, self.where = choice.model, choice.provider.name
        self.support, self.limits = support, limits
        self.warnings: list[str] = []
        self.images = 0
        self.unknown_warned = False

    def parts(self, parts: tuple[Part, ...]) -> tuple[Part, ...]:
        out: list[Part] = []
        for part in parts:
            if isinstance(part, Media):
                out.append(self._fitted(part))
            elif isinstance(part, ToolResult) and part.media:
                fitted = [self._fitted(media) for media in part.media]
                text = "".join(f.text for f in fitted if isinstance(f, Text))
                media = tuple(f for f in fitted if isinstance(f, Media))
                out.append(replace(part, content=part.content + text, media=media))
            else:
                out.append(part)
        return tuple(out)

    def check_count(self) -> None:
        limit = self.limits.max_images
        if limit is not None and self.images > limit:
            raise InvalidRequestError(
                f"the call holds {self.images} images and {self.where} takes at most {limit} a request "
                f"({self.limits.source}); nothing was sent"
            )

    def _fitted(self, media: Media) -> Media | Text:
        if media.kind == "image":
            return self._image(media)
        return self._document(media)

    def _image(self, media: Media) -> Media:
        if self.support.images is False:
            raise MediaUnreadable(f"{self.model} cannot read images ({self.support.source}); nothing was sent")
        if self.support.images is None and not self.unknown_warned:
            self.unknown_warned = True
            self.warnings.append(f"whether {self.model} reads images is not known: they were sent as they are")
        self.images += 1
        if media.data is None:
            if not self.limits.url_images:
                raise InvalidRequestError(f"{self.where} takes no image by URL: send the image's content (base64)")
            return media
        limit = self.limits.max_image_bytes
        if limit is not None and media.size > limit:
            try:
                smaller, warning = downscaled(media, limit, self.where)
            except ImageUnreadable as error:  # a wire with a larger limit may take it as it is
                raise MediaUnreadable(str(error)) from None
            self.warnings.append(warning)
            return smaller
        return media

    def _document(self, media: Media) -> Media | Text:
        name = media.title or "a PDF"
        if self.support.pdf:
            return self._native_document(media, name)
        if media.data is None:
            raise InvalidRequestError(
                f"{self.model} cannot read PDFs, and {name} is given by URL, so its text cannot be extracted "
                "here: send its content (base64)"
            )
        try:
            pages = pdf_text(media)
        except PdfEncrypted:
            raise _encrypted(name) from None
        except PdfUnreadable as error:  # a model that reads PDFs natively may take it as it is
            raise MediaUnreadable(
                f"{self.model} cannot read PDFs, and {name} could not be read here to send its text ({error}); "
                "send it to a model that reads PDFs natively (Claude, Gemini, GPT-4o and later), e.g. by setting "
                "COLIBRI_DOCUMENTS_MODEL"
            ) from None
        if not any(pages):
            raise MediaUnreadable(
                f"{name} holds no text (its pages are images) and {self.model} cannot read PDFs; send it to a "
                "model that reads PDFs natively (Claude, Gemini, GPT-4o and later), e.g. by setting "
                "COLIBRI_DOCUMENTS_MODEL"
            )
        self.warnings.append(f"{self.model} cannot read PDFs natively: sent the text of {name}, extracted locally")
        return Text(f"\n{document_text(name, pages)}\n")

    def _native_document(self, media: Media, name: str) -> Media:
        """A PDF for a model that reads PDFs: checked for a password and the wire's page limit; one
        that cannot be read here goes as it is, with a warning (the model may read it)."""
        if media.data is None:
            if not self.limits.url_documents:
                raise InvalidRequestError(f"{self.where} takes no PDF by URL: send the PDF's content (base64)")
            return media
        pages = self.limits.max_pdf_pages
        try:
            count = pdf_pages(media)
        except PdfEncrypted:
            raise _encrypted(name) from None
        except PdfUnreadable as error:
            unchecked = "" if pages is None else f", its pages not counted against {self.where}'s limit"
            self.warnings.append(f"{name} could not be read here ({error}): sent as it is{unchecked}")
            return media
        if pages is not None and count > pages:
            raise InvalidRequestError(
                f"{name} has {count} pages and {self.where} reads at most {pages} a PDF "
                f"({self.limits.source}); split it or send fewer pages"
            )
        return media


def _encrypted(name: str) -> InvalidRequestError:
    return InvalidRequestError(
        f"{name} is encrypted: it opens only with its password, so no model can read it; send it decrypted"
    )
