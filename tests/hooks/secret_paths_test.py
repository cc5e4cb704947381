"""hooks/secret_paths.py: which files hold secrets."""
from __future__ import annotations

import pytest

from swarmgate.hooks.secret_paths import may_name_secret, secret_kind

HOME = "/home/ada"


@pytest.mark.parametrize("full", [
    "/home/ada/.ssh/id_rsa", "/home/ada/.ssh/config", "/home/ada/.aws/credentials", "/r/.env", "/r/.env.local",
    "/r/.env.production", "/r/certs/server.pem", "/r/tls.key", "/r/id_work", "/home/ada/.netrc", "/r/.pypirc",
    "/home/ada/.config/gcloud/application_default_credentials.json", "/etc/shadow", "/home/ada/.kube/config",
    "/home/ada/.git-credentials", "/home/ada/.gnupg/private-keys-v1.d/x.key",
])
def test_secret(full):
    assert secret_kind(full, HOME)


@pytest.mark.parametrize("full", [
    "/home/ada/.ssh/id_rsa.pub", "/home/ada/.ssh/known_hosts", "/r/.env.example", "/r/.env.sample",
    "/r/.env.template", "/r/src/id_map.py", "/r/README.md", "/r/.envrc.md", "/home/ada/.bashrc", "/r/keys.py",
])
def test_not_secret(full):
    assert secret_kind(full, HOME) is None


def test_config_paths_and_npmrc(tmp_path):
    assert secret_kind("/srv/keys/a", HOME, ["/srv/keys/**"])
    assert secret_kind("/r/prod.secret", HOME, ["*.secret"])
    assert secret_kind("/home/ada/.config/acme/token", HOME, ["~/.config/acme/token"])
    npmrc = tmp_path / ".npmrc"
    npmrc.write_text("registry=https://registry.npmjs.org/\n")
    assert secret_kind(str(npmrc), HOME) is None
    npmrc.write_text("//registry.npmjs.org/:_authToken=abc\n")
    assert secret_kind(str(npmrc), HOME)
    assert may_name_secret("cat .env") and not may_name_secret("ls src")
    assert may_name_secret("cat prod.secret", ["*.secret"])
