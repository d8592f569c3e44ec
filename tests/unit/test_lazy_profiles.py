"""The registry imports without the model profiles (start-up needs only the registry), and the
package still hands out the profiles' names on first use."""

from __future__ import annotations

import subprocess
import sys

import pytest

import colibri_router.providers as providers
from colibri_router.providers import profiles


def test_the_registry_loads_without_the_model_profiles() -> None:
    probe = (
        "import sys\n"
        "from colibri_router.providers import load_registry, provider_names\n"
        "load_registry(); provider_names()\n"
        "print('colibri_router.providers.profiles' in sys.modules)\n"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)

    assert result.stdout.strip() == "False"


@pytest.mark.parametrize("name", ["ModelProfile", "is_kimi_model", "profile_for"])
def test_the_profiles_names_are_the_profiles_modules_own(name: str) -> None:
    assert getattr(providers, name) is getattr(profiles, name)


def test_an_unknown_name_is_still_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no_such_name"):
        _ = providers.no_such_name
