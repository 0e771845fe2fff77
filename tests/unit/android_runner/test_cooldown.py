from android_runner.thermal import cool_down


class FakeBoard:
    """A board that cools by 2 °C per second of sleep."""

    def __init__(self, temp_c: float) -> None:
        self.temp_c, self.now = temp_c, 0.0

    def read(self):
        return {"max_temp_c": self.temp_c, "zones": 1}

    def sleep(self, s: float) -> None:
        self.now += s
        self.temp_c -= 2.0 * s

    def clock(self) -> float:
        return self.now


def test_waits_until_cool_enough():
    b = FakeBoard(50.0)
    assert cool_down(44.0, 60, read=b.read, sleep=b.sleep, clock=b.clock) == (3.0, True)


def test_gives_up_after_the_longest_wait():
    b = FakeBoard(90.0)
    assert cool_down(40.0, 5, read=b.read, sleep=b.sleep, clock=b.clock) == (5.0, False)


def test_already_cool_costs_nothing_and_no_sensor_is_none():
    b = FakeBoard(30.0)
    assert cool_down(40.0, 5, read=b.read, sleep=b.sleep, clock=b.clock) == (0.0, True)
    assert cool_down(40.0, 5, read=lambda: None) is None
