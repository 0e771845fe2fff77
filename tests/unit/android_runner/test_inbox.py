"""The serving runner's inbox (android_runner/inbox.py): requests as lines on its stdin; the memory
sampler sleeps while none is there and reads again once one came."""

from __future__ import annotations

import os
import threading
import time

from android_runner.contract import JobItem, JobPart
from android_runner.inbox import REQUEST_WORD, Inbox
from android_runner.memory import MemorySampler


class Counted(MemorySampler):
    def __init__(self) -> None:
        super().__init__(interval_s=0.001)
        self.readings = 0

    def sample(self) -> None:
        self.readings += 1


def test_the_sampler_sleeps_between_requests_and_reads_during_one(tmp_path):
    read_fd, write_fd = os.pipe()
    memory = Counted()
    memory.start()
    try:
        inbox = Inbox(tmp_path, on_eof=lambda: None, on_note=lambda s: None, fd=read_fd)
        got: list[JobItem] = []
        waiting = threading.Thread(target=lambda: got.append(next(inbox.items(memory))), daemon=True)
        waiting.start()
        deadline = time.monotonic() + 10
        while memory._reading.is_set() and time.monotonic() < deadline:  # until it waits for a request
            time.sleep(0.01)
        idle = memory.readings
        time.sleep(0.3)  # no request: every 1 ms awake would be ~300 readings
        assert memory.readings - idle <= 1
        item = JobItem(id="3", turns=((JobPart("text", text="hi"),),))
        os.write(write_fd, f"{REQUEST_WORD} {item.to_json()}\n".encode())
        waiting.join(timeout=5)
        assert got == [item]
        during = memory.readings
        time.sleep(0.2)  # a request is on: the sampler reads again
        assert memory.readings - during >= 3
    finally:
        memory.stop()
        os.close(write_fd)
