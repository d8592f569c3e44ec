"""Redaction: what it catches, what it mangles, and what it costs a log line.

Alone: ``uv run python -m benchmarks.redaction`` (about 20 s). Prints:

- the catch rate on the corpus of fake credentials (tests/secrets_corpus.py): a sample is caught
  when none of its secrets survives :func:`scan` and the warning names its kind; beside it, what
  detect-secrets' plugins alone catch (without our shapes and the registry's key shapes);
- false positives on ordinary source code: this repository's ``src/`` and the installed sources of
  a few pure-Python libraries, read as ``files`` reads them (per file, by name); each changed line is
  a false positive (none of them holds a real credential), and the kinds are listed. Beside it, for
  information, the lines detect-secrets' high-entropy plugins (left out) would have changed;
- ``redact_log()`` on log lines (what the log processors call on each value), before (the
  three-pattern ``redact`` it replaced, kept here as the baseline) and after, in interleaved rounds
  (median ns per call and the paired ratio), and the Python function calls of one call (cProfile),
  the figure benchmark 13 adds up.
"""

from __future__ import annotations

import cProfile
import functools
import pstats
import re
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

from colibri_router.environment import values_of
from colibri_router.redaction import REDACTED, key_variables, redact_log, scan
from colibri_router.redaction.detector import detector

_TESTS = str(Path(__file__).resolve().parent.parent / "tests")
if _TESTS not in sys.path:
    sys.path.append(_TESTS)

from secrets_corpus import corpus  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
LIBRARIES = ("httpx", "structlog", "jsonschema", "pathspec", "yaml", "pypdf", "anyio", "starlette", "mcp")

# The function this module replaced, as the baseline of the log-line timing.
_OLD_PATTERNS = re.compile(
    r"(?i)(sk-[A-Za-z0-9_\-]{8,}|bearer\s+[A-Za-z0-9._\-]{8,}|x-api-key[\"']?\s*[:=]\s*[\"']?[A-Za-z0-9._\-]{8,})"
)
_OLD_WORDS = ("sk-", "bearer", "key")


def old_redact(text: str, *secrets: str | None) -> str:
    known = [secret for secret in (*secrets, *values_of(key_variables()).values()) if secret and len(secret) >= 4]
    for secret in sorted(known, key=len, reverse=True):
        text = text.replace(secret, REDACTED)
    folded = text.casefold()
    if any(word in folded for word in _OLD_WORDS):
        return _OLD_PATTERNS.sub(REDACTED, text)
    return text


LOG_LINES = {
    "event": "router_call finished",
    "fields": "[kimi] model=kimi-k2-0905-preview prompt_tokens=1200 completion_tokens=340 latency_ms=812",
    "url": "POST https://api.moonshot.ai/v1/chat/completions 200",
    "token": "upstream said: invalid token " + "gh" + "p_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
}


def catch_rate() -> None:
    samples = corpus()
    plugins = detector()
    caught = alone = 0
    missed: list[str] = []
    for sample in samples:
        result = scan(sample.text, sample.file)
        if sample.kind in result.kinds and not any(secret in result.text for secret in sample.secrets):
            caught += 1
        else:
            missed.append(sample.name)
        groups = plugins.keyword_groups(sample.file)
        lines = sample.text.splitlines()
        covered = all(
            any(
                secret in line
                and any(
                    line[h.start : h.end].find(secret) >= 0
                    for h in (*plugins.hits(line), *plugins.keyword_hits(line, groups))
                )
                for line in lines
            )
            or all(secret not in line for line in lines)
            for secret in sample.secrets
        )
        alone += covered
    print(f"catch rate: {caught}/{len(samples)} samples ({100 * caught / len(samples):.1f}%)")
    print(f"  detect-secrets' plugins alone: {alone}/{len(samples)} ({100 * alone / len(samples):.1f}%)")
    if missed:
        print("  missed:", ", ".join(missed))


def _sources() -> tuple[list[Path], list[str]]:
    """This repository's src/, and the sources of those of the libraries that are installed."""
    files = sorted((ROOT / "src").rglob("*.py"))
    found = []
    for name in LIBRARIES:
        try:
            module = __import__(name)
        except ImportError:
            continue
        found.append(name)
        files += sorted(Path(module.__file__ or "").parent.rglob("*.py"))
    return files, found


def false_positives() -> None:
    from detect_secrets.plugins.high_entropy_strings import Base64HighEntropyString, HexHighEntropyString

    entropy = (Base64HighEntropyString(), HexHighEntropyString())
    files, libraries = _sources()
    lines = changed_lines = changed_files = entropy_lines = 0
    kinds: Counter[str] = Counter()
    examples: list[str] = []
    started = time.perf_counter()
    for path in files:
        text = path.read_text(encoding="utf-8", errors="replace")
        result = scan(text, path.name)
        file_lines = text.splitlines()
        lines += len(file_lines)
        if result.text != text:
            changed_files += 1
            kinds.update(result.kinds)
            for before, after in zip(file_lines, result.text.splitlines(), strict=False):
                if before != after:
                    changed_lines += 1
                    if len(examples) < 8:
                        examples.append(f"{path.name}: {before.strip()[:100]}")
    elapsed = time.perf_counter() - started
    for path in files:
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            if any(any(True for _ in plugin.analyze_string(line)) for plugin in entropy):
                entropy_lines += 1
    print(
        f"false positives on source code: {changed_lines} of {lines} lines ({100 * changed_lines / lines:.3f}%),"
        f" {changed_files} of {len(files)} files; scanned in {elapsed:.2f} s"
        f" ({1e6 * elapsed / max(lines, 1):.1f} µs a line)"
    )
    print(f"  sources: src/ and {', '.join(libraries)}")
    print(f"  kinds: {dict(kinds)}")
    for example in examples:
        print(f"    {example}")
    print(
        f"  the high-entropy plugins (left out) would change {entropy_lines} lines ({100 * entropy_lines / lines:.2f}%)"
    )


def _per_call_ns(function: functools.partial[str], number: int) -> float:
    started = time.perf_counter_ns()
    for _ in range(number):
        function()
    return (time.perf_counter_ns() - started) / number


def log_line_cost(rounds: int = 9, number: int = 5_000) -> None:
    redact_log("warm " + LOG_LINES["token"])  # the detector's import and set-up, paid once
    print("redact_log() on a log line (median ns per call over interleaved rounds; ratio after/before):")
    for label, line in LOG_LINES.items():
        before, after = functools.partial(old_redact, line), functools.partial(redact_log, line)
        old_times: list[float] = []
        new_times: list[float] = []
        for index in range(rounds):
            arms = [(before, old_times), (after, new_times)]
            for function, out in arms if index % 2 else arms[::-1]:
                out.append(_per_call_ns(function, number // 10 if label == "token" else number))
        ratio = statistics.median(new / old for new, old in zip(new_times, old_times, strict=True))
        print(
            f"  {label:7} before {statistics.median(old_times):8.0f} ns  after {statistics.median(new_times):8.0f} ns"
            f"  ratio {ratio:.2f}   calls: before {_calls(before)}, after {_calls(after)}"
        )


def _calls(function: functools.partial[str]) -> int:
    profile = cProfile.Profile()
    profile.enable()
    function()
    profile.disable()
    stats = pstats.Stats(profile)
    return int(sum(row[1] for key, row in stats.stats.items() if "disable" not in key[2]))  # type: ignore[attr-defined]


def main() -> None:
    catch_rate()
    false_positives()
    log_line_cost()


if __name__ == "__main__":
    main()
