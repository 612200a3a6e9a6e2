"""An OAuth-protected MCP server on the official Python SDK (PyPI `mcp`), for pi's MCP OAuth tests.

    python oauth_server.py --port N [--token-ttl SECONDS]

One process is both the authorization server (the SDK's auth routes: metadata, dynamic client
registration, /authorize, /token, /revoke) and the streamable-HTTP MCP server at /mcp, which answers
401 with a `WWW-Authenticate` challenge naming its protected resource metadata.

/authorize approves at once: it redirects to the client's redirect URI with a code, so a test drives
the "browser" step with two HTTP GETs. Test controls (no auth):
  POST /test/expire   the server forgets its access tokens (the client's next request gets a 401)
  POST /test/revoke   the server forgets its access and refresh tokens (sign-in needed again)
  GET  /test/stats    JSON counts: registrations, code grants, refresh grants, authorized MCP requests
Tools: whoami (the client id and scopes of the token), echo.
"""

import argparse
import json
import secrets
import time

import uvicorn
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    RefreshToken,
    TokenError,
    construct_redirect_uri,
)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions, RevocationOptions
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.mcpserver import MCPServer
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from starlette.requests import Request
from starlette.responses import JSONResponse

parser = argparse.ArgumentParser()
parser.add_argument("--port", type=int, required=True)
parser.add_argument("--token-ttl", type=int, default=3600)
args = parser.parse_args()

BASE = f"http://127.0.0.1:{args.port}"
STATS = {"registrations": 0, "code_grants": 0, "refresh_grants": 0, "authorized_requests": 0}


class Provider:
    """In-memory authorization server that approves every authorization request."""

    def __init__(self):
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.access: dict[str, AccessToken] = {}
        self.refresh: dict[str, RefreshToken] = {}

    async def get_client(self, client_id):
        return self.clients.get(client_id)

    async def register_client(self, client_info):
        STATS["registrations"] += 1
        self.clients[client_info.client_id] = client_info

    async def authorize(self, client, params: AuthorizationParams):
        code = secrets.token_urlsafe(16)
        self.codes[code] = AuthorizationCode(
            code=code,
            scopes=params.scopes or ["mcp"],
            expires_at=time.time() + 300,
            client_id=client.client_id,
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
        )
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(self, client, authorization_code):
        return self.codes.get(authorization_code)

    def issue(self, client_id, scopes, resource):
        access = secrets.token_hex(16)
        refresh = secrets.token_hex(16)
        self.access[access] = AccessToken(
            token=access,
            client_id=client_id,
            scopes=scopes,
            expires_at=int(time.time()) + args.token_ttl,
            resource=resource,
        )
        self.refresh[refresh] = RefreshToken(token=refresh, client_id=client_id, scopes=scopes, resource=resource)
        return OAuthToken(
            access_token=access,
            token_type="Bearer",
            expires_in=args.token_ttl,
            scope=" ".join(scopes),
            refresh_token=refresh,
        )

    async def exchange_authorization_code(self, client, authorization_code):
        STATS["code_grants"] += 1
        self.codes.pop(authorization_code.code, None)
        return self.issue(client.client_id, authorization_code.scopes, authorization_code.resource)

    async def load_refresh_token(self, client, refresh_token):
        token = self.refresh.get(refresh_token)
        return token if token and token.client_id == client.client_id else None

    async def exchange_refresh_token(self, client, refresh_token, scopes):
        STATS["refresh_grants"] += 1
        # Rotating refresh tokens: the old one stops working.
        self.refresh.pop(refresh_token.token, None)
        return self.issue(client.client_id, scopes or refresh_token.scopes, refresh_token.resource)

    async def load_access_token(self, token):
        found = self.access.get(token)
        if found and found.expires_at and found.expires_at < time.time():
            return None
        return found

    async def revoke_token(self, token):
        self.access.pop(token.token, None)
        self.refresh.pop(token.token, None)

    async def exchange_identity_assertion(self, client, params):
        raise TokenError("unsupported_grant_type")


provider = Provider()
server = MCPServer(
    "oauth-test-server",
    auth_server_provider=provider,
    auth=AuthSettings(
        issuer_url=BASE,
        resource_server_url=f"{BASE}/mcp",
        validate_token_resource=True,
        required_scopes=["mcp"],
        client_registration_options=ClientRegistrationOptions(enabled=True, valid_scopes=["mcp"], default_scopes=["mcp"]),
        revocation_options=RevocationOptions(enabled=True),
    ),
)


@server.tool()
def whoami() -> str:
    """The client id and scopes of the access token."""
    token = get_access_token()
    STATS["authorized_requests"] += 1
    return json.dumps({"client_id": token.client_id if token else None, "scopes": token.scopes if token else None})


@server.tool()
def echo(text: str) -> str:
    """Echo the text back."""
    return text


@server.custom_route("/test/expire", methods=["POST"])
async def expire(request: Request):
    provider.access.clear()
    return JSONResponse({"ok": True})


@server.custom_route("/test/revoke", methods=["POST"])
async def revoke(request: Request):
    provider.access.clear()
    provider.refresh.clear()
    return JSONResponse({"ok": True})


@server.custom_route("/test/stats", methods=["GET"])
async def stats(request: Request):
    return JSONResponse(STATS)


uvicorn.run(server.streamable_http_app(), host="127.0.0.1", port=args.port, log_level="warning")
