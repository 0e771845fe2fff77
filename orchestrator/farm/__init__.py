"""The farm layer, below the run's stages (run/): every device's session at once (`local.py`: the
`Farm` protocol and `LocalFarm`), the one device worker (`worker.py`), one device's session
(`session.py`), `--shard` (`shard.py`, `shard_merge.py`), the stand-in boards (`fallback.py`), the
run folder (`rundir.py`, run.json's record `run_json.py`) and their records (`types.py`). Nothing here
imports the run's stages, the report or the commands. Exports nothing: import the module you need."""
