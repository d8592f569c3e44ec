"""A corpus of FAKE credentials, made at run time to each format's real shape, each inside the text a
file would hold it in: what redaction must catch (tests/unit/test_redaction_corpus.py) and what
benchmarks/redaction.py counts.

No value here was ever a credential: every one is drawn from a seeded random generator, and every
prefix is split in the source (``"gh" + "p_"``), so that no secret scanner takes this file for a leak.
"""

from __future__ import annotations

import base64
import json
import random
import string
from dataclasses import dataclass

ALNUM = string.ascii_letters + string.digits
UPPER_DIGITS = string.ascii_uppercase + string.digits
LOWER_HEX = "0123456789abcdef"
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "-_"


@dataclass(frozen=True)
class Sample:
    area: str  # cloud, VCS, package registry, payment, chat, JWT, private key, URL, Docker, provider
    kind: str  # the kind the warning must name
    file: str  # the file name it sits in (the detector reads code and config differently)
    text: str
    secrets: tuple[str, ...]  # what must not survive redaction

    @property
    def name(self) -> str:
        return f"{self.area}:{self.kind}:{self.file}"


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _pem(rng: random.Random, label: str) -> str:
    body = "\n".join("".join(rng.choice(B64) for _ in range(64)) for _ in range(6))
    return f"-----BEGIN {label}-----\n{body}\n-----END {label}-----\n"


def corpus(seed: int = 20261128) -> list[Sample]:
    """Every format, in the file it typically sits in. Same seed, same corpus."""
    rng = random.Random(seed)

    def draw(n: int, alphabet: str = ALNUM) -> str:
        return "".join(rng.choice(alphabet) for _ in range(n))

    samples: list[Sample] = []

    def add(area: str, kind: str, file: str, text: str, *secrets: str) -> None:
        samples.append(Sample(area, kind, file, text, secrets))

    # -- cloud ------------------------------------------------------------------------------------------
    access = "AK" + "IA" + draw(16, UPPER_DIGITS)
    secret = draw(40, B64)
    add(
        "cloud",
        "AWS key",
        "credentials",
        f"[default]\naws_access_key_id = {access}\naws_secret_access_key = {secret}\nregion = eu-west-1\n",
        access,
        secret,
    )
    access2, secret2 = "AS" + "IA" + draw(16, UPPER_DIGITS), draw(40, B64)
    add(
        "cloud",
        "AWS key",
        "deploy.py",
        f'session = boto3.Session(aws_access_key_id="{access2}", aws_secret_access_key="{secret2}")\n',
        access2,
        secret2,
    )
    pem = _pem(rng, "PRIVATE " + "KEY")
    key_id = draw(40, LOWER_HEX)
    service_account = {
        "type": "service_account",
        "project_id": "demo-project",
        "private_key_id": key_id,
        "private_key": pem,
        "client_email": "bot@demo-project.iam.gserviceaccount.com",
    }
    add(
        "cloud",
        "private key",
        "service-account.json",
        json.dumps(service_account, indent=2),
        pem.splitlines()[1],
        pem.splitlines()[3],
        key_id,
    )
    azure = draw(86, B64) + "=="
    add(
        "cloud",
        "Azure storage key",
        "appsettings.json",
        '{"Storage": "DefaultEndpointsProtocol=https;AccountName=demo;Account'
        + f'Key={azure};EndpointSuffix=core.windows.net"}}\n',
        azure,
    )
    # -- VCS --------------------------------------------------------------------------------------------
    for prefix in ("gh" + "p_", "gh" + "o_", "gh" + "s_", "gh" + "u_"):
        token = prefix + draw(36)
        add("VCS", "GitHub token", "hosts.yml", f"github.com:\n    oauth_token: {token}\n    user: octo\n", token)
    fine = "github" + "_pat_" + draw(22) + "_" + draw(59)
    add("VCS", "GitHub token", "ci.sh", f"export GH_TOKEN={fine}\ngh release list\n", fine)
    gitlab = "gl" + "pat-" + draw(20, URLSAFE)
    add(
        "VCS", "GitLab token", "settings.py", f'GITLAB = {{"url": "https://gitlab.com", "token": "{gitlab}"}}\n', gitlab
    )
    # -- package registries -------------------------------------------------------------------------------
    npm = "np" + "m_" + draw(36)
    add("package registry", "npm token", ".npmrc", "//registry.npmjs.org/:_auth" + f"Token={npm}\n", npm)
    npm2 = "np" + "m_" + draw(36)
    add("package registry", "npm token", "publish.js", f'const token = "{npm2}";\n', npm2)
    pypi = "py" + "pi-AgEIcHlwaS5vcmc" + draw(120, URLSAFE)
    add(
        "package registry",
        "PyPI token",
        ".pypirc",
        f"[pypi]\nusername = __token__\npassword = {pypi}\n",
        pypi,
    )
    # -- payment ----------------------------------------------------------------------------------------
    for prefix in ("sk" + "_live_", "rk" + "_live_"):
        stripe = prefix + draw(99)
        add("payment", "Stripe key", "billing.py", f'stripe.api_key = "{stripe}"\n', stripe)
    # -- chat ---------------------------------------------------------------------------------------------
    for prefix in ("xo" + "xb-", "xo" + "xp-"):
        tail = draw(24, string.ascii_lowercase + string.digits)
        slack = f"{prefix}{draw(12, string.digits)}-{draw(13, string.digits)}-{tail}"
        add("chat", "Slack token", "bot.yaml", f"slack:\n  token: {slack}\n", slack)
    hook = f"https://hooks.slack.com/services/T{draw(10, UPPER_DIGITS)}/B{draw(10, UPPER_DIGITS)}/{draw(24)}"
    add("chat", "Slack token", "notify.py", f'WEBHOOK = "{hook}"\n', hook.rsplit("/", 1)[1])
    discord = rng.choice("MNO") + draw(23, URLSAFE) + "." + draw(6, URLSAFE) + "." + draw(27, URLSAFE)
    add("chat", "Discord token", "bot.py", f'client.run("{discord}")\n', discord)
    # -- JWT ----------------------------------------------------------------------------------------------
    header = _b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    payload = _b64url(json.dumps({"sub": draw(12), "iat": 1764288000}).encode())
    jwt = f"{header}.{payload}.{_b64url(bytes(rng.randrange(256) for _ in range(32)))}"
    add("JWT", "JWT", "request.http", f"GET /api/me\nAuthorization: Bearer {jwt}\n", jwt)
    add("JWT", "JWT", "session.json", json.dumps({"session": jwt}), jwt)
    # -- private keys -------------------------------------------------------------------------------------
    for label in ("RSA PRIVATE " + "KEY", "OPENSSH PRIVATE " + "KEY", "EC PRIVATE " + "KEY", "PRIVATE " + "KEY"):
        block = _pem(rng, label)
        add("private key", "private key", "key.txt", f"# deploy key\n{block}", *block.splitlines()[1:-1])
    pgp = _pem(rng, "PGP PRIVATE " + "KEY BLOCK")
    add("private key", "private key", "backup.asc", pgp, *pgp.splitlines()[1:-1])
    # -- passwords in URLs ----------------------------------------------------------------------------------
    for scheme in ("postgresql", "mysql", "mongodb+srv", "amqp"):
        password = draw(16)
        add(
            "URL",
            "password in URL",
            "settings.py",
            f'DATABASE_URL = "{scheme}://app:{password}@db.internal:5432/app"\n',
            password,
        )
    password = draw(16)
    add(
        "URL",
        "password in URL",
        "docker-compose.yml",
        f"    environment:\n      REDIS_URL: redis://:{password}@redis:6379/0\n",
        password,
    )
    # -- Docker -------------------------------------------------------------------------------------------
    auth = base64.b64encode(f"alice:dckr_pat_{draw(27, URLSAFE)}".encode()).decode()
    docker = {"auths": {"https://index.docker.io/v1/": {"auth": auth}}}
    add("Docker", "Docker auth", "config.json", json.dumps(docker, indent="\t"), auth)
    # -- every provider's keys --------------------------------------------------------------------------------
    for kind, key in provider_keys(rng):
        add("provider", kind, "client.py", f'client = OpenAI(api_key="{key}", base_url=BASE)\n', key)
        add("provider", kind, "notes.md", f"The key I used yesterday was {key} (rotate it).\n", key)
    # Keys with no shape of their own (Mistral, Cohere: 32 and 40 letters and digits): caught by name.
    for variable, size in (("MISTRAL_API_KEY", 32), ("CO_API_KEY", 40)):
        key = draw(size)
        add("provider", "password or key", ".env.local", f"{variable}={key}\n", key)
        add("provider", "password or key", "client.py", f'Mistral(api_key="{key}")\n', key)
    return samples


def provider_keys(rng: random.Random) -> list[tuple[str, str]]:
    """A fake key of each provider shape in the registry, with the kind a warning names it by."""

    def draw(n: int, alphabet: str = ALNUM) -> str:
        return "".join(rng.choice(alphabet) for _ in range(n))

    sk = "s" + "k-"
    return [
        ("kimi key", sk + draw(48)),
        ("claude key", sk + "ant-api03-" + draw(93, URLSAFE) + "AA"),
        ("openai key", sk + "proj-" + draw(156, URLSAFE)),
        ("openai key", sk + draw(20) + "T3Blbk" + "FJ" + draw(20)),
        ("openrouter key", sk + "or-v1-" + draw(64, LOWER_HEX)),
        ("groq key", "gs" + "k_" + draw(52)),
        ("together key", "tg" + "p_v1_" + draw(43, URLSAFE)),
        ("fireworks key", "f" + "w_" + draw(24)),
        ("siliconflow key", sk + draw(48, string.ascii_lowercase)),
        ("deepseek key", sk + draw(32, LOWER_HEX)),
        ("gemini key", "AI" + "za" + draw(35, URLSAFE)),
    ]
