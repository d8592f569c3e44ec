"""Where developer tools, cloud CLIs and the operating system keep credentials: data, with sources.

Each entry is a pattern and what it holds (said in the refusal). Patterns are git-style globs
(:mod:`.wildmatch`) over lower-cased paths, in three shapes:

- ``name``: a file or directory of that name anywhere (``.netrc``, ``*.pem``);
- ``dir/name``: those trailing path names anywhere (``.aws/credentials`` matches
  ``/home/me/.aws/credentials``; a pattern starting ``.config/`` also matches below
  ``$XDG_CONFIG_HOME`` when that is set elsewhere);
- ``dir/``: a directory and everything in it (``.ssh/``).

Sources, besides each tool's own documentation named beside its lines: Talisman's file-name
detector (thoughtworks/talisman, ``detector/filename/filename_detector.go``: ``*_rsa``,
``*_ed25519``, ``*.ppk``, ``*.p12``, ``*.pfx``, ``*.kdb``, ``*.keychain``, ``*.keystore``,
``.htpasswd``, ``.netrc``, ``.s3cfg``, ``.*_history``, ``credentials.xml``), the Gitrob/shhgit
signature lists (``.git-credentials``, ``.dockercfg``, ``.pgpass``, ``.npmrc``, ``.pypirc``,
``.gem/credentials``, ``.aws/credentials``, ``*.kdbx``, ``*.psafe3``, ``*.ovpn``) and GitGuardian's
sensitive-filenames policy.
"""

from __future__ import annotations

CREDENTIAL_STORES: tuple[tuple[str, str], ...] = (
    # Key material. OpenSSH ssh(1) FILES: ~/.ssh holds id_* private keys, config, known_hosts.
    (".ssh/", "SSH keys"),
    ("id_rsa*", "an SSH key"),
    ("id_dsa*", "an SSH key"),
    ("id_ecdsa*", "an SSH key"),
    ("id_ed25519*", "an SSH key"),
    ("id_xmss*", "an SSH key"),
    ("*_rsa", "an SSH key"),
    ("*_dsa", "an SSH key"),
    ("*_ecdsa", "an SSH key"),
    ("*_ed25519", "an SSH key"),
    ("*.ppk", "a PuTTY key"),
    ("*.pem", "a key or certificate"),
    ("*.key", "a private key"),
    ("*.keypair", "a key pair"),
    ("*.p12", "a PKCS#12 key store"),
    ("*.pfx", "a PKCS#12 key store"),
    ("*.pkcs12", "a PKCS#12 key store"),
    ("*.jks", "a Java key store"),
    ("*.keystore", "a key store"),
    ("*.keyring", "a key ring"),
    # GnuPG (gnupg.org, "GnuPG files"): ~/.gnupg holds private-keys-v1.d, secring.gpg, trustdb.
    (".gnupg/", "GnuPG keys"),
    ("secring.*", "a GnuPG secret key ring"),
    # Password stores: pass (passwordstore.org: ~/.password-store), KeePass, Password Safe,
    # macOS keychains (~/Library/Keychains), GNOME Keyring and KWallet data, 1Password and
    # Bitwarden CLIs' local state.
    (".password-store/", "a password store"),
    ("*.kdb", "a KeePass database"),
    ("*.kdbx", "a KeePass database"),
    ("*.psafe3", "a Password Safe database"),
    ("*.keychain", "a keychain"),
    ("*.keychain-db", "a keychain"),
    ("*.agilekeychain", "a 1Password keychain"),
    ("library/keychains/", "macOS keychains"),
    (".local/share/keyrings/", "GNOME keyrings"),
    (".local/share/kwalletd/", "KDE wallets"),
    (".config/op/", "1Password CLI sessions"),
    (".config/bitwarden cli/", "Bitwarden CLI data"),
    # Logins in plain text: netrc (curl, git, Heroku CLI), libpq's password file (PostgreSQL docs,
    # "The Password File"), MySQL option and login-path files, Apache htpasswd.
    (".netrc", "netrc logins"),
    ("_netrc", "netrc logins"),
    (".pgpass", "PostgreSQL passwords"),
    ("pgpass.conf", "PostgreSQL passwords"),
    (".my.cnf", "MySQL passwords"),
    (".mylogin.cnf", "MySQL login paths"),
    (".htpasswd", "HTTP passwords"),
    (".msmtprc", "SMTP passwords"),
    # Package registries: npm (docs "npmrc": _authToken), Yarn (.yarnrc.yml npmAuthToken), pip
    # (pip.conf index-url may carry credentials), PyPI (.pypirc), Poetry (auth.toml), Cargo
    # (credentials.toml), RubyGems (~/.gem/credentials), Composer (auth.json), Maven
    # (settings.xml, settings-security.xml), Gradle (~/.gradle/gradle.properties), NuGet
    # (NuGet.Config ClearTextPassword), Hugging Face (token), Kaggle (kaggle.json).
    (".npmrc", "npm tokens"),
    (".yarnrc", "Yarn tokens"),
    (".yarnrc.yml", "Yarn tokens"),
    ("pip.conf", "pip index credentials"),
    ("pip.ini", "pip index credentials"),
    (".pypirc", "PyPI tokens"),
    (".config/pypoetry/auth.toml", "Poetry credentials"),
    (".cargo/credentials", "Cargo tokens"),
    (".cargo/credentials.toml", "Cargo tokens"),
    (".gem/credentials", "RubyGems keys"),
    (".composer/auth.json", "Composer credentials"),
    (".config/composer/auth.json", "Composer credentials"),
    (".m2/settings.xml", "Maven server passwords"),
    (".m2/settings-security.xml", "the Maven master password"),
    (".gradle/gradle.properties", "Gradle credentials"),
    (".nuget/nuget/nuget.config", "NuGet credentials"),
    (".cache/huggingface/token", "a Hugging Face token"),
    (".huggingface/token", "a Hugging Face token"),
    (".kaggle/kaggle.json", "a Kaggle token"),
    # Containers and clusters: Docker (docs "docker login": ~/.docker/config.json auths), Helm
    # registry logins, Kubernetes (kubectl: ~/.kube/config), Teleport (~/.tsh).
    (".docker/config.json", "Docker registry logins"),
    (".dockercfg", "Docker registry logins"),
    (".config/helm/registry/", "Helm registry logins"),
    (".kube/", "Kubernetes credentials"),
    ("kubeconfig", "Kubernetes credentials"),
    ("*.kubeconfig", "Kubernetes credentials"),
    (".tsh/", "Teleport keys"),
    # Source hosting: git-credential-store (git docs: ~/.git-credentials,
    # $XDG_CONFIG_HOME/git/credentials), GitHub CLI (gh: hosts.yml holds the token without a
    # keyring), hub, GitLab CLI (glab config.yml).
    (".git-credentials", "git credentials"),
    (".config/git/credentials", "git credentials"),
    (".config/gh/hosts.yml", "GitHub CLI tokens"),
    (".config/hub", "hub GitHub tokens"),
    (".config/glab-cli/config.yml", "GitLab CLI tokens"),
    # Clouds: AWS CLI (~/.aws/credentials and config, SSO and CLI caches), Azure CLI (~/.azure
    # token caches), Google Cloud SDK (~/.config/gcloud credential databases,
    # application_default_credentials.json), Oracle Cloud (~/.oci), s3cmd (.s3cfg), gsutil
    # (.boto), rclone (rclone.conf), DigitalOcean doctl, Hetzner hcloud, Fly.io, Cloudflare
    # Wrangler, Firebase CLI, Stripe CLI, ngrok, Terraform CLI (credentials.tfrc.json; state files
    # hold secrets in plain text: Terraform docs "Sensitive Data in State"), Vault (~/.vault-token).
    (".aws/", "AWS credentials"),
    (".azure/", "Azure credentials"),
    (".config/gcloud/", "Google Cloud credentials"),
    ("application_default_credentials.json", "Google Cloud credentials"),
    (".oci/", "Oracle Cloud keys"),
    (".s3cfg", "S3 keys"),
    (".boto", "Google Cloud Storage keys"),
    (".config/rclone/rclone.conf", "rclone remotes' credentials"),
    (".config/doctl/config.yaml", "a DigitalOcean token"),
    (".config/hcloud/cli.toml", "Hetzner Cloud tokens"),
    (".fly/config.yml", "a Fly.io token"),
    (".wrangler/config/", "a Cloudflare token"),
    (".config/.wrangler/config/", "a Cloudflare token"),
    (".config/configstore/firebase-tools.json", "Firebase tokens"),
    (".config/stripe/config.toml", "Stripe keys"),
    (".ngrok2/ngrok.yml", "an ngrok token"),
    (".config/ngrok/ngrok.yml", "an ngrok token"),
    (".terraform.d/credentials.tfrc.json", "Terraform tokens"),
    ("*.tfstate", "Terraform state (holds secrets)"),
    ("*.tfstate.backup", "Terraform state (holds secrets)"),
    (".vault-token", "a Vault token"),
    # Coding agents' own logins: Claude Code (~/.claude/.credentials.json on Linux), Codex
    # ($CODEX_HOME/auth.json, default ~/.codex), Gemini CLI (~/.gemini/oauth_creds.json).
    (".claude/.credentials.json", "Claude Code credentials"),
    (".codex/auth.json", "Codex credentials"),
    (".gemini/oauth_creds.json", "Gemini CLI credentials"),
    # Environment files and shell histories (keys pasted on command lines).
    (".env", "environment secrets"),
    (".env.*", "environment secrets"),
    (".envrc", "environment secrets"),
    ("*.env", "environment secrets"),
    (".*_history", "a shell or REPL history"),
    (".histfile", "a shell history"),
    (".zhistory", "a shell history"),
    # Anything named after credentials (credentials.json, credentials.xml, aws_credentials...).
    ("*credentials*", "credentials"),
)
