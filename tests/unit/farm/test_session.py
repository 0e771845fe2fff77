import io
import threading

from android_runner.contract import SampleResult
from orchestrator.farm.session import Progress, _events, outputs_for_scoring
from orchestrator.farm.types import DeviceOutcome, Phase


def test_outputs_for_scoring_fail_failures_and_skip_unsupported():
    results = [
        SampleResult("a", "ok", output="x"),
        SampleResult("b", "crash"),
        SampleResult("c", "timeout"),
        SampleResult("d", "unsupported", error="no video"),
    ]
    assert outputs_for_scoring(results) == {"a": "x", "b": "", "c": "", "d": None}


def test_progress_counts_each_sample_once_and_shows_big_pushes():
    p = Progress(total=3)
    stream, streamed = io.StringIO(), {}
    outcome = DeviceOutcome(name="d", kind="local")
    stop = threading.Event()
    events = _events(stream, streamed, p, outcome, stop)
    assert events.stop is stop
    events.ready(5.0)
    events.ready(6.0)  # a runner restarted after a crash loads the model again
    assert outcome.model_loads == 2
    for r in (
        SampleResult("a", "ok"),
        SampleResult("a", "ok"),  # a runner restart re-reports what is already done
        SampleResult("b", "oom"),
        SampleResult("c", "unsupported"),
    ):
        events.result(r)
    assert (p.done, p.ok, p.failed) == (3, 1, 1)
    assert len(stream.getvalue().splitlines()) == 3 and list(streamed) == ["a", "b", "c"]
    p.at(Phase.STAGING)
    p.pushing("/data/local/tmp/edgefarm/bin/tiny", 10, 100)
    assert p.shown == "staging"  # small files do not flicker the bar
    p.pushing("/data/local/tmp/edgefarm/models/ab/gemma.litertlm", 3 * 2**30, 4 * 2**30)
    assert p.shown == "pushing gemma.litertlm 75%" and p.phase is Phase.STAGING
    p.at(Phase.RUNNING)
    assert p.shown == "running"
