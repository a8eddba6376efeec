"""The one home of stored files (blobs): the content-addressed store on disk (`store`), the `blobs` rows
(`models`), keeping a file before a record names it (`files`), and what a device may upload and when an
unnamed blob is collected (`uploads`). Who may see or name a blob is the policy's (accounts/policy.py)."""
