"""Drives the Python client openapi-python-client generated from /api/openapi.json, as a user would.

Run by test/client/python-client.test.ts with the generated package on PYTHONPATH:
    python python_client_flow.py <base_url> <email>
It reads the mailed verification token from stdin when it asks for it, and prints one JSON line per
step, so the test can follow along and check every answer.
"""

import json
import sys
import time

from browserflow_api_client import AuthenticatedClient, Client
from browserflow_api_client.api.api_keys import api_keys_create
from browserflow_api_client.api.auth import auth_register, auth_verify_submit
from browserflow_api_client.api.projects import projects_create, projects_get
from browserflow_api_client.api.sessions import resources_get, resources_start, resources_stop, sessions_create
from browserflow_api_client.models import (
    ApiKeysCreateBody,
    ApiKeysCreateBodyAccessType,
    AuthRegisterBody,
    AuthVerifySubmitBody,
    Error404,
    ProjectsCreateBody,
    SessionsCreateBody,
)


def say(step, **fields):
    print(json.dumps({"step": step, **fields}), flush=True)


def ok(value):
    """A success model; an error body (Error400 …) ends the flow, naming it."""
    if value is None or type(value).__name__.startswith("Error"):
        raise SystemExit(f"expected a success, got {value!r}")
    return value


def expect(value, kind):
    if not isinstance(value, kind):
        raise SystemExit(f"expected {kind.__name__}, got {value!r}")
    return value


def main():
    base_url, email = sys.argv[1], sys.argv[2]
    anonymous = Client(base_url=base_url, raise_on_unexpected_status=True)

    registered = ok(auth_register.sync(
        client=anonymous,
        body=AuthRegisterBody(email=email, password="correct horse battery", first_name="Ada", last_name="Lovelace"),
    ))
    say("registered", status=str(registered.status))

    say("awaiting verification token")
    token = sys.stdin.readline().strip()
    verified = ok(auth_verify_submit.sync(client=anonymous, body=AuthVerifySubmitBody(token=token)))
    say("verified", status=str(verified.status))

    signed_in = AuthenticatedClient(base_url=base_url, token=verified.token, raise_on_unexpected_status=True)
    slug = "py-" + email.split("@")[0][-8:]
    project = ok(projects_create.sync(client=signed_in, body=ProjectsCreateBody(name="From Python", slug=slug)))
    say("project created", id=project.id)

    key = ok(api_keys_create.sync(
        client=signed_in,
        body=ApiKeysCreateBody(name="python", access_type=ApiKeysCreateBodyAccessType.FULL),
    ))
    say("key created", keyPrefix=key.key_prefix, secretLooksRight=key.secret.startswith(key.key_prefix))

    # From here on the API key, as a script or a backend would call the API.
    with_key = AuthenticatedClient(
        base_url=base_url, token=key.secret, prefix="", auth_header_name="x-api-key", raise_on_unexpected_status=True
    )
    read = ok(projects_get.sync(client=with_key, project=slug))
    say("project read", slug=read.slug, name=read.name)

    session = ok(sessions_create.sync(client=with_key, project=slug, body=SessionsCreateBody(name="python session")))
    started = ok(resources_start.sync(client=with_key, project=slug, session_id=session.id))
    say("browser started", status=str(started.status), hasRemoteUrl=bool(started.remote_url))
    stopped = ok(resources_stop.sync(client=with_key, project=slug, session_id=session.id, resource_id=started.id))
    # The stop answers once requested (stopping); the resource reads stopped when the teardown is done.
    ended = stopped
    deadline = time.monotonic() + 30
    while str(ended.status) == "stopping" and time.monotonic() < deadline:
        time.sleep(0.2)
        ended = ok(resources_get.sync(client=with_key, project=slug, session_id=session.id, resource_id=started.id))
    say("browser stopped", status=str(stopped.status), ended=str(ended.status))

    missing = expect(projects_get.sync(client=with_key, project="no-such-project"), Error404)
    say("error read", status=missing.status, code=str(missing.code), message=missing.message)


if __name__ == "__main__":
    main()
