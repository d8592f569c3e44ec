"""The browser tests' shared fixture, from ``browser_support``: one headless Chromium per module."""

from browser_support import browser

__all__ = ["browser"]
