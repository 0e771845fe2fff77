"""Pure parsers of what devices report about themselves (Android telemetry, LiteRT-LM benchmark output)."""
