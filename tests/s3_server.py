"""An S3 server on 127.0.0.1 for the tests of BLOB_BACKEND=s3: moto's server mode, a real HTTP server speaking
the S3 protocol, started once per test session (about a second); each test gets a bucket of its own.

The app reaches it as it reaches AWS, MinIO or Ceph RGW: through boto3 over HTTP, with the settings of
config.py. Nothing of the app is replaced; only the outside world (the object store) is a stand-in, at the wire.
"""
from __future__ import annotations

import functools
import uuid
from pathlib import Path

import pytest
from moto.server import ThreadedMotoServer

from inspect_app.blobs.s3 import connect


@pytest.fixture(scope="session")
def s3_server() -> str:
    """The address of the S3 server of this session."""
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


@pytest.fixture
def s3_settings(s3_server) -> dict[str, str]:
    """The settings (config.py) of a new, empty bucket on the session's S3 server."""
    settings = {"BLOB_BACKEND": "s3", "S3_BUCKET": f"blobs-{uuid.uuid4().hex}", "S3_ENDPOINT_URL": s3_server,
                "S3_REGION": "us-east-1", "S3_ACCESS_KEY_ID": "test-key", "S3_SECRET_ACCESS_KEY": "test-secret",
                "S3_ADDRESSING_STYLE": "path"}
    bucket_client(settings).create_bucket(Bucket=settings["S3_BUCKET"])
    return settings


@pytest.fixture
def s3_app(app, s3_settings):
    """The test's app keeping its files in the bucket. Its BLOB_ROOT must stay empty: nothing goes to disk."""
    app.config.update(s3_settings)
    yield app
    assert files_on_disk(Path(app.config["BLOB_ROOT"])) == []


def bucket_client(settings: dict[str, str]):
    """A client of the S3 server of `settings`, to look at its bucket from outside the app (one for the session:
    making one takes a tenth of a second)."""
    return _client(settings["S3_ENDPOINT_URL"])


@functools.cache
def _client(endpoint: str):
    return connect(s3_endpoint_url=endpoint, s3_region="us-east-1", s3_access_key_id="test-key",
                   s3_secret_access_key="test-secret", s3_addressing_style="path")


def bucket_keys(settings: dict[str, str], prefix: str = "") -> list[str]:
    """Every key in the bucket (under `prefix`)."""
    answer = bucket_client(settings).list_objects_v2(Bucket=settings["S3_BUCKET"], Prefix=prefix)
    return sorted(item["Key"] for item in answer.get("Contents", []))


def files_on_disk(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file()) if root.exists() else []


@pytest.fixture(params=["disk", "s3"])
def blob_backend(request, app) -> str:
    """Run the test with its app's files on disk, then in a bucket (`s3_app`): the same answers from both."""
    if request.param == "s3":
        request.getfixturevalue("s3_app")
    return request.param
