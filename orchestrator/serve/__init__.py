"""`edgefarm serve`: the farm as an OpenAI-compatible endpoint (docs/serve.md)."""
