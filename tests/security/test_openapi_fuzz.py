"""Schemathesis against the sync API's own OpenAPI document (/sync/openapi.json), served by the real app.

Every generated request, signed in with a real device token on real records, must get no 5xx and an
answer whose status, content type and body match the document. Bounded: a fixed number of examples
per operation (`EXAMPLES`), so the whole run takes about a minute.
"""
from __future__ import annotations

import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import not_a_server_error
from schemathesis.core.failures import FailureGroup
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from inspect_app.extensions import db
from sync.services import create_device

EXAMPLES = 40


def test_the_sync_api_answers_every_generated_request_as_documented(app, make):
    inspector = make.user("inspector")
    make.permit(inspectors=[inspector], areas=["North"], structures=["Pipe A"])
    _, token = create_device(None, inspector, "tablet")
    db.session.commit()
    auth = {"Authorization": f"Bearer {token}"}
    app.config["PROPAGATE_EXCEPTIONS"] = False  # a crash is a 500 that the check reports, with its case
    schema = schemathesis.openapi.from_wsgi("/sync/openapi.json", app)
    checks = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]
    cases, failures = 0, []
    for result in schema.get_all_operations():
        operation = result.ok()

        @given(case=operation.as_strategy())
        @settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                  suppress_health_check=list(HealthCheck))
        def run(case):
            nonlocal cases
            cases += 1
            try:
                case.call_and_validate(headers=auth, checks=checks)
            except FailureGroup as group:  # keep each failure's title and go on to the next case
                failures.extend(f"{operation.label}: {failure.title}" for failure in group.exceptions)

        run()
    print(f"schemathesis_cases={cases} operations={len(list(schema.get_all_operations()))}")
    assert failures == [], sorted(set(failures))
