"""`edgefarm bench`: fixed shapes on every device (docs/bench.md)."""
