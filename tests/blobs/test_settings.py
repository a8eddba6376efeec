"""The blob settings (config.py): the app refuses to start with a store it cannot use, saying what to set."""
from __future__ import annotations

import pytest

from inspect_app.config import SettingError, check_blob_backend, from_environment


@pytest.mark.parametrize(("settings", "words"), [
    ({"BLOB_BACKEND": "ftp"}, "BLOB_BACKEND must be one of disk, s3"),
    ({"BLOB_BACKEND": "s3"}, "needs S3_BUCKET"),
    ({"BLOB_BACKEND": "s3", "S3_BUCKET": "b", "S3_ACCESS_KEY_ID": "key"}, "or neither"),
    ({"BLOB_BACKEND": "s3", "S3_BUCKET": "b", "S3_ADDRESSING_STYLE": "dns"}, "auto, path or virtual"),
])
def test_a_store_the_app_cannot_use_is_refused_in_words(settings, words):
    with pytest.raises(SettingError, match=words):
        check_blob_backend(settings)


@pytest.mark.parametrize("settings", [
    {}, {"BLOB_BACKEND": "disk"},
    {"BLOB_BACKEND": "s3", "S3_BUCKET": "inspect-blobs"},  # credentials from the SDK's chain (an IAM role)
    {"BLOB_BACKEND": "s3", "S3_BUCKET": "b", "S3_ACCESS_KEY_ID": "k", "S3_SECRET_ACCESS_KEY": "s",
     "S3_ADDRESSING_STYLE": "path"},
])
def test_usable_settings_pass(settings):
    check_blob_backend(settings)


def test_the_settings_come_from_the_environment(monkeypatch, tmp_path):
    for name, value in {"BLOB_BACKEND": "S3", "S3_BUCKET": "inspect-blobs", "S3_ENDPOINT_URL": "https://minio:9000",
                        "S3_REGION": "us-east-2", "S3_ACCESS_KEY_ID": "k", "S3_SECRET_ACCESS_KEY": "s",
                        "S3_ADDRESSING_STYLE": "path", "SECRET_KEY": "x"}.items():
        monkeypatch.setenv(name, value)
    settings = from_environment(tmp_path)
    assert {name: settings[name] for name in settings if name.startswith(("S3_", "BLOB_BACKEND"))} == {
        "BLOB_BACKEND": "s3", "S3_BUCKET": "inspect-blobs", "S3_ENDPOINT_URL": "https://minio:9000",
        "S3_REGION": "us-east-2", "S3_ACCESS_KEY_ID": "k", "S3_SECRET_ACCESS_KEY": "s", "S3_ADDRESSING_STYLE": "path"}
    check_blob_backend(settings)
    monkeypatch.delenv("BLOB_BACKEND")
    assert from_environment(tmp_path)["BLOB_BACKEND"] == "disk"  # the default
