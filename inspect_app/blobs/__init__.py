"""The one home of stored files (blobs): the content-addressed store (`store`: its interface and the disk
store; `s3`: the S3-compatible bucket, BLOB_BACKEND=s3), the `blobs` rows (`models`), keeping a file before a
record names it and the app's store (`files`), what a device may upload and when an unnamed blob is collected
(`uploads`), copying a store (`migrate`) and `flask blobs` (`cli`). Who may see or name a blob is the policy's
(accounts/policy.py)."""
