"""`edgefarm run` in three stages over typed records (types.py): plan.py decides what the run will do
(pure), execute.py runs it on the devices (the farm, the stand-ins: the only effects), finish.py
scores, combines and renders the reports and gives the exit status. cli/run.py parses the flags
into a RunRequest and calls them in that order."""
