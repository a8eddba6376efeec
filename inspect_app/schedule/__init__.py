"""The schedule: each permit's open obligations, from the stored record through the rules engine (`rules/`)
into `permit_obligations`, kept current in every transaction that changes the record."""
