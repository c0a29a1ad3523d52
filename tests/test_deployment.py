"""Deployment: DEBUG off unless asked, `check --deploy` clean in the production shape, security headers on."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
PRODUCTION = {
    "DEBUG": "0",
    "HTTPS": "1",
    "BEHIND_TLS_PROXY": "1",
    "SECRET_KEY": "k3y-" + "x9Qz" * 14,
    "ALLOWED_HOSTS": "lab.example.org",
    "CSRF_TRUSTED_ORIGINS": "https://lab.example.org",
}


# set by the browser tests in this same pytest process; a deployment never has it
LEAKED_FROM_TESTS = {"DJANGO_ALLOW_ASYNC_UNSAFE"}


def manage(*args: str, **env: str) -> subprocess.CompletedProcess:
    clean = {
        k: v
        for k, v in os.environ.items()
        if k not in PRODUCTION and k not in LEAKED_FROM_TESTS and not k.startswith("SECURE_")
    }
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=clean | env, capture_output=True, text=True, timeout=120
    )


def test_check_deploy_is_clean_with_the_documented_production_settings():
    done = manage("check", "--deploy", "--fail-level", "WARNING", **PRODUCTION)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "no issues" in done.stdout


def test_debug_is_off_unless_asked():
    shown = manage("shell", "-c", "from django.conf import settings; print(settings.DEBUG)", SECRET_KEY="k")
    assert shown.stdout.strip().splitlines()[-1] == "False", shown.stderr


def test_lab_up_no_longer_writes_debug_into_env_and_has_a_debug_switch():
    script = (ROOT / "lab").read_text()
    assert "DEBUG=1\\n" not in script and "--debug" in script


def test_docker_compose_runs_the_web_without_debug_over_tls():
    env = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]["web"]["environment"]
    assert env["DEBUG"] == "0" and env["HTTPS"].endswith("1}") and "SECRET_KEY" in env


def test_no_template_has_an_inline_script_or_event_handler():
    for template in (ROOT / "labs" / "templates").rglob("*.html"):
        text = template.read_text()
        for tag in re.findall(r"<script\b[^>]*>", text):
            assert "src=" in tag, f"{template.name}: inline script {tag}"
        assert not re.search(r"\son[a-z]+\s*=", text), f"{template.name}: inline event handler"


@pytest.mark.django_db
def test_pages_carry_a_csp_without_inline_script_and_hsts_over_tls(settings, client):
    settings.SECURE_HSTS_SECONDS, settings.SECURE_SSL_REDIRECT = 31536000, True
    response = client.get("/accounts/login/", secure=True)
    csp = response["Content-Security-Policy"]
    script_src = re.search(r"script-src ([^;]*)", csp).group(1)
    assert "'self'" in script_src and "unsafe-inline" not in script_src and "unsafe-eval" not in script_src
    assert "frame-ancestors 'none'" in csp and "object-src 'none'" in csp
    assert response["Strict-Transport-Security"].startswith("max-age=31536000")
    assert client.get("/accounts/login/").status_code == 301  # plain HTTP is sent to HTTPS


@pytest.mark.django_db
def test_cookies_are_secure_when_served_over_tls(settings, client):
    settings.SESSION_COOKIE_SECURE = settings.CSRF_COOKIE_SECURE = True
    response = client.get("/accounts/login/", secure=True)
    assert response.cookies["csrftoken"]["secure"] is True
