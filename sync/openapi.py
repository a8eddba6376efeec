"""The OpenAPI 3.1 description of the sync API, served at /sync/openapi.json (prose: docs/sync.md)."""
from __future__ import annotations

from typing import Any

from sync.operations import KINDS


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def _json(schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def _payload_schemas() -> dict[str, Any]:
    """Each kind's payload schema, with the models they share (findings, photos...) as components too."""
    schemas: dict[str, Any] = {}
    for kind, spec in KINDS.items():
        schema = spec.payload.model_json_schema(ref_template="#/components/schemas/{model}")
        schemas |= schema.pop("$defs", {})
        if spec.legacy:  # applied for what an old outbox left queued; nothing should make it any more
            schema |= {"deprecated": True, "description": f"Retired: {kind} is applied only for an item the "
                       "previous release's outbox left queued on a device; send the form's own post instead."}
        schemas[f"payload:{kind}"] = schema
    return schemas


ERROR = _json(_ref("Error"), "Refused; the message says why and nothing was changed.")
STORED_ELSEWHERE = _json(_ref("Error"), "A file stored for a record you may not see: answered as for no file.")
SHA_PARAM = {"name": "sha", "in": "path", "required": True,
             "schema": {"type": "string", "pattern": "^[0-9a-f]{64}$"}}

OPENAPI: dict[str, Any] = {
    "openapi": "3.1.0",
    "info": {"title": "Stormwater inspections: sync", "version": "1",
             "description": "Push operations, pull changes, upload blobs. See docs/sync.md."},
    "components": {
        "securitySchemes": {
            "device": {"type": "http", "scheme": "bearer", "description": "A device token an admin made."},
            "session": {"type": "apiKey", "in": "cookie", "name": "session",
                        "description": "The browser's session; unsafe methods also need X-CSRFToken."},
        },
        "schemas": {
            "Error": {"type": "object", "required": ["error"],
                      "properties": {"error": {"type": "string"}, "problems": {"type": "array"},
                                     "received": {"type": "integer"}}},
            "Operation": {
                "type": "object", "additionalProperties": False,
                "required": ["op_id", "kind", "record_id", "device_time", "payload"],
                "properties": {
                    "op_id": {"type": "string", "format": "uuid", "description": "Made on the device."},
                    "kind": {"type": "string", "enum": sorted(KINDS)},
                    "record_id": {"type": "string", "maxLength": 36},
                    "base_revision": {"type": ["integer", "null"], "minimum": 1},
                    "device_time": {"type": "string", "format": "date-time", "maxLength": 40},
                    "payload": {"oneOf": [_ref(f"payload:{kind}") for kind in sorted(KINDS)]},
                },
            },
            "Batch": {"type": "object", "additionalProperties": False, "required": ["ops"],
                      "properties": {"ops": {"type": "array", "items": _ref("Operation")},
                                     "sent_at": {"type": "string", "format": "date-time",
                                                 "description": "The device clock when sent."}}},
            "Result": {
                "type": "object", "required": ["op_id", "status"],
                "properties": {
                    "op_id": {"type": "string"},
                    "status": {"enum": ["applied", "duplicate", "conflict", "rejected", "waiting"]},
                    "record_id": {"type": "string"},
                    "revision": {"type": "integer"},
                    "id": {"type": "string", "description": "applied: the id of the record made or changed."},
                    "record_sha256": {"type": "string", "description": "inspection.submit: the report's hash."},
                    "weather_status": {"type": "string", "description": "inspection.submit: pending until filled."},
                    "original": {"type": "object", "description": "duplicate: the first answer."},
                    "server": {"type": "object", "description": "conflict: the server's version."},
                    "conflict_id": {"type": "string"},
                    "reasons": {"type": "object", "additionalProperties": {"type": "string"}},
                    "waiting_for": {"type": "object", "properties": {"blob": {"type": "string"},
                                                                     "record": {"type": "string"}}},
                },
            },
            **_payload_schemas(),
        },
    },
    "security": [{"device": []}, {"session": []}],
    "paths": {
        "/sync/push": {"post": {
            "summary": "Apply a batch of operations, each exactly once, in order",
            "requestBody": {"required": True, "content": {"application/json": {"schema": _ref("Batch")}}},
            "responses": {
                "200": _json({"type": "object", "properties": {
                    "results": {"type": "array", "items": _ref("Result")},
                    "received_at": {"type": "string", "format": "date-time"}}}, "One result per operation."),
                "400": ERROR, "401": ERROR, "413": ERROR,
                "422": _json(_ref("Error"), "Malformed operations (problems lists each); none applied."),
            }}},
        "/sync/session": {"get": {
            "summary": "Who is signed in, and a fresh CSRF token (session); 401 with user null when signed out",
            "security": [],
            "responses": {
                "200": _json({"type": "object", "required": ["user", "csrf_token"], "properties": {
                    "user": {"type": ["object", "null"]}, "csrf_token": {"type": "string"}}}, "Signed in."),
                "401": _json({"type": "object", "properties": {
                    "user": {"type": "null"}, "csrf_token": {"type": "string"}, "error": {"type": "string"}}},
                    "Signed out or the session expired: sign in again.")}}},
        "/sync/ops/{op_id}": {"get": {
            "summary": "The stored answer for one operation",
            "parameters": [{"name": "op_id", "in": "path", "required": True, "schema": {"type": "string"}}],
            "responses": {"200": _json(_ref("Result"), "The stored result."), "404": ERROR}}},
        "/sync/changes": {"get": {
            "summary": "Changes after a cursor, on the permits the user may see",
            "parameters": [{"name": "cursor", "in": "query", "schema": {"type": "integer", "default": 0}},
                           {"name": "limit", "in": "query", "schema": {"type": "integer", "maximum": 500}}],
            "responses": {"200": _json({"type": "object", "properties": {
                "changes": {"type": "array", "items": {"type": "object"}},
                "cursor": {"type": "integer"}, "more": {"type": "boolean"}}}, "One page.")}}},
        "/sync/permits": {"get": {"summary": "The permits the user may see",
                                  "responses": {"200": _json({"type": "object"}, "Permit list.")}}},
        "/sync/permits/{permit_id}/snapshot": {"get": {
            "summary": "Everything needed to inspect one permit offline",
            "parameters": [{"name": "permit_id", "in": "path", "required": True, "schema": {"type": "string"}}],
            "responses": {"200": _json({"type": "object"}, "The snapshot and its cursor."), "404": ERROR}}},
        "/sync/blobs/{sha}": {
            "get": {"summary": "Bytes received so far (also HEAD; header Upload-Offset)",
                    "parameters": [SHA_PARAM],
                    "responses": {"200": _json({"type": "object"}, "received, complete"), "404": STORED_ELSEWHERE}},
            "put": {"summary": "Add a chunk at the offset in the Upload-Offset header",
                    "parameters": [SHA_PARAM, {"name": "Upload-Offset", "in": "header", "required": True,
                                               "schema": {"type": "integer"}}],
                    "requestBody": {"content": {"application/octet-stream": {"schema": {
                        "type": "string", "format": "binary"}}}},
                    "responses": {"200": _json({"type": "object"}, "The new offset."),
                                  "409": _json(_ref("Error"), "Wrong offset; `received` says where to resume."),
                                  "404": STORED_ELSEWHERE, "413": ERROR}},
        },
        "/sync/blobs/{sha}/complete": {"post": {
            "summary": "Verify the upload against its SHA-256 and keep it",
            "parameters": [SHA_PARAM],
            "requestBody": {"content": {"application/json": {"schema": {
                "type": "object", "properties": {"content_type": {"type": "string"}}}}}},
            "responses": {"200": _json({"type": "object"}, "Stored."),
                          "404": STORED_ELSEWHERE,
                          "422": _json(_ref("Error"), "Hash mismatch: the bytes were discarded.")}}},
        "/sync/devices": {
            "get": {"summary": "Device tokens (admins, session only)", "responses": {"200": {"description": "List"}}},
            "post": {"summary": "Make a device token for a user (admins, session only)",
                     "responses": {"201": {"description": "The device with its token, shown once."}}}},
        "/sync/devices/{device_id}/revoke": {"post": {
            "summary": "Revoke a device token (admins, session only)",
            "parameters": [{"name": "device_id", "in": "path", "required": True, "schema": {"type": "string"}}],
            "responses": {"200": {"description": "Revoked."}}}},
        "/sync/conflicts": {"get": {"summary": "Unresolved conflicts the user may see",
                                    "responses": {"200": {"description": "List"}}}},
        "/sync/conflicts/{conflict_id}/resolve": {"post": {
            "summary": "Mark a conflict reconciled by a person",
            "parameters": [{"name": "conflict_id", "in": "path", "required": True, "schema": {"type": "string"}}],
            "responses": {"200": {"description": "Resolved."}}}},
    },
}

# Any request may be refused (bad input, not signed in, not allowed, too large, too many): always
# with an Error object, never a page. Documented once for every operation.
for _path in OPENAPI["paths"].values():
    for _operation in _path.values():
        _operation["responses"].setdefault("4XX", ERROR)
