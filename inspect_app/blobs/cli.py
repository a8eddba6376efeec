"""`flask blobs gc` (remove what no record names, and abandoned uploads) and `flask blobs migrate` (copy a disk
store into the configured S3 bucket, checking every hash)."""
from __future__ import annotations

import datetime as dt
from pathlib import Path

import click
from flask import current_app
from flask.cli import AppGroup

from inspect_app.blobs.files import blob_store
from inspect_app.blobs.migrate import Copied, copy_store
from inspect_app.blobs.store import DiskStore
from inspect_app.blobs.uploads import collect_garbage


blobs_group = AppGroup("blobs", help="The blob store: `flask blobs gc`, `flask blobs migrate`.")


@blobs_group.command("gc")
@click.option("--grace-hours", type=click.FloatRange(min=1), default=24, show_default=True,
              help="Keep anything younger than this: an upload whose operation has not come yet.")
def blobs_gc(grace_hours: float) -> None:
    """Remove blobs no record points to and abandoned partial uploads (safe to run from cron)."""
    counts = collect_garbage(dt.timedelta(hours=grace_hours))
    click.echo(" ".join(f"{name}_removed={count}" for name, count in counts.items()))


@blobs_group.command("migrate")
@click.option("--from-root", "root", type=click.Path(file_okay=False, path_type=Path),
              help="The disk store to copy from. Default: BLOB_ROOT.")
@click.option("--to-root", "backup", type=click.Path(file_okay=False, path_type=Path),
              help="Copy the other way: the bucket into this folder (a disk store), e.g. for a backup.")
def blobs_migrate(root: Path | None, backup: Path | None) -> None:
    """Copy a disk store into the S3 bucket (BLOB_BACKEND=s3), checking every hash; run again, it copies only
    what is missing. Exits non-zero if any file was altered or did not arrive whole."""
    if current_app.config.get("BLOB_BACKEND") != "s3":
        raise click.ClickException("Set BLOB_BACKEND=s3 and the S3_* settings of the bucket to copy into "
                                   "(docs/deploy.md, *Blob storage*); the files are copied from BLOB_ROOT.")
    if root and backup:
        raise click.UsageError("Give --from-root (disk to bucket) or --to-root (bucket to disk), not both.")
    bucket = f"s3://{current_app.config['S3_BUCKET']}"
    if backup:
        source, target, what = blob_store(), DiskStore(backup), f"{bucket} into {backup}"
    else:
        root = root or Path(current_app.config["BLOB_ROOT"])
        if not root.is_dir():
            raise click.ClickException(f"There is no disk store at {root}.")
        source, target, what = DiskStore(root), blob_store(), f"{root} into {bucket}"
    click.echo(f"Copying the blobs of {what} ...")
    done = copy_store(source, target, progress=_every_thousand)
    for problem in done.problems:
        click.echo(f"MISMATCH {problem}", err=True)
    click.echo(f"copied={done.copied} already_there={done.already_there} problems={len(done.problems)}")
    if done.problems:
        raise click.ClickException(f"{len(done.problems)} blob(s) could not be copied whole (above); the others "
                                   "were. Find the altered files in a backup, then run it again.")


def _every_thousand(done: Copied) -> None:
    seen = done.copied + done.already_there + len(done.problems)
    if seen % 1000 == 0:
        click.echo(f"... {seen} blobs so far", err=True)
