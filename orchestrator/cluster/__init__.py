"""edgefarm on a Ray cluster: one agent per farm host, big files cross the network once per host.

Nothing in this package imports Ray at module level except `connect` and `transfer`, which only
`--cluster` reaches: without `--cluster` Ray is never imported (docs/cluster.md)."""
