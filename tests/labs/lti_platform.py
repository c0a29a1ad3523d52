"""A local LTI 1.3 platform for the tests: it signs real id_tokens with its own generated RSA key, and serves
OAuth 2 tokens (checking the tool's signed client assertion), AGS scores and an NRPS roster over HTTP on
127.0.0.1, as Canvas or Moodle would. No network beyond this machine."""

from __future__ import annotations

import json
import secrets
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

import jwt
from pylti1p3.registration import Registration

from labs.courses.lti import new_key_pair

LTI = "https://purl.imsglobal.org/spec/lti/claim/"
LEARNER = "http://purl.imsglobal.org/vocab/lis/v2/membership#Learner"
INSTRUCTOR = "http://purl.imsglobal.org/vocab/lis/v2/membership#Instructor"
SCORE_SCOPE = "https://purl.imsglobal.org/spec/lti-ags/scope/score"


class LocalPlatform:
    """The LMS side: `issuer`, `client_id` and `deployment_id` as the tool is registered with them."""

    issuer = "https://lms.example.test"
    client_id = "warplab-tool"
    deployment_id = "deployment-1"
    context_id = "lms-course-42"

    def __init__(self) -> None:
        self.private_key, self.public_key = new_key_pair()
        self.jwk = Registration.get_jwk(self.public_key)
        self.tool_public_key = ""  # the tool's key, pasted in at registration as an LMS admin would
        self.tokens: set[str] = set()
        self.scores: list[dict] = []
        self.members: list[dict] = []
        self.refused: list[str] = []
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> LocalPlatform:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    @property
    def key_set(self) -> dict:
        return {"keys": [self.jwk]}

    def id_token(self, nonce: str, sub: str, roles: list[str], target: str, *, key: str | None = None, **claims) -> str:
        """A signed resource-link launch for `sub` into `target`, with AGS and NRPS endpoints."""
        now = int(time.time())
        body = {
            "iss": self.issuer,
            "aud": self.client_id,
            "sub": sub,
            "iat": now,
            "exp": now + 300,
            "nonce": nonce,
            "given_name": claims.pop("given_name", "Ada"),
            "family_name": claims.pop("family_name", "Lovelace"),
            "email": claims.pop("email", f"{sub}@lms.example.test"),
            LTI + "message_type": "LtiResourceLinkRequest",
            LTI + "version": "1.3.0",
            LTI + "deployment_id": self.deployment_id,
            LTI + "target_link_uri": target,
            LTI + "resource_link": {"id": "link-7", "title": "Memory bound"},
            LTI + "roles": roles,
            LTI + "context": {"id": claims.pop("context_id", self.context_id), "title": "GPU Programming"},
            "https://purl.imsglobal.org/spec/lti-ags/claim/endpoint": {
                "scope": [SCORE_SCOPE, "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem"],
                "lineitems": f"{self.base}/lineitems",
                "lineitem": f"{self.base}/lineitems/1",
            },
            "https://purl.imsglobal.org/spec/lti-nrps/claim/namesroleservice": {
                "context_memberships_url": f"{self.base}/memberships",
                "service_versions": ["2.0"],
            },
            **claims,
        }
        return jwt.encode(body, key or self.private_key, algorithm="RS256", headers={"kid": self.jwk["kid"]})

    def authorize(self, location: str, sub: str, roles: list[str], **claims) -> tuple[str, dict]:
        """The platform's OIDC authorisation endpoint: from the tool's redirect, the form it posts back."""
        url = urlparse(location)
        assert f"{url.scheme}://{url.netloc}{url.path}" == f"{self.base}/auth", location
        query = {k: v[0] for k, v in parse_qs(url.query).items()}
        assert query["client_id"] == self.client_id and query["response_type"] == "id_token"
        target = claims.pop("target", query.get("lti_message_hint", ""))
        token = self.id_token(query["nonce"], sub, roles, target, **claims)
        return urlparse(query["redirect_uri"]).path, {"id_token": token, "state": query["state"]}

    def launch(self, browser, target: str, sub: str = "lms-alice", roles=(LEARNER,), **claims):
        """A learner's launch through `browser` (a Django test client): the tool's OIDC login, this platform's
        authorisation, and the signed id_token posted back to the tool; (the browser, the tool's answer)."""
        login = browser.post(
            "/lti/login/",
            {
                "iss": self.issuer,
                "client_id": self.client_id,
                "login_hint": sub,
                "target_link_uri": target,
                "lti_message_hint": target,
            },
        )
        assert login.status_code == 302, login.content
        path, form = self.authorize(login["Location"], sub, list(roles), **claims)
        return browser, browser.post(path, form)

    def _handler(self):
        platform = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:  # quiet
                pass

            def _send(self, status: int, body: dict, content_type: str = "application/json") -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _authorised(self) -> bool:
                token = self.headers.get("Authorization", "").removeprefix("Bearer ")
                if token not in platform.tokens:
                    platform.refused.append(self.path)
                    self._send(401, {"error": "invalid_token"})
                    return False
                return True

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode()
                if self.path == "/token":
                    form = {k: v[0] for k, v in parse_qs(body).items()}
                    try:  # the tool proves who it is with a JWT signed by its private key
                        jwt.decode(
                            form["client_assertion"],
                            platform.tool_public_key,
                            algorithms=["RS256"],
                            audience=f"{platform.base}/token",
                            issuer=platform.client_id,
                        )
                    except (jwt.InvalidTokenError, KeyError, ValueError) as exc:
                        platform.refused.append(f"token: {exc}")
                        return self._send(400, {"error": "invalid_client"})
                    token = secrets.token_hex(16)
                    platform.tokens.add(token)
                    return self._send(200, {"access_token": token, "token_type": "Bearer", "expires_in": 3600})
                if self.path == "/lineitems/1/scores" and self._authorised():
                    platform.scores.append(json.loads(body))
                    return self._send(200, {})
                if not self.path.startswith(("/lineitems", "/memberships")):
                    self._send(404, {})

            def do_GET(self) -> None:
                if self.path.startswith("/memberships") and self._authorised():
                    container = {"id": f"{platform.base}/memberships", "members": platform.members}
                    return self._send(200, container, "application/vnd.ims.lti-nrps.v2.membershipcontainer+json")
                if not self.path.startswith("/memberships"):
                    self._send(404, {})

        return Handler
